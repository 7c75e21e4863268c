"""The reusable tasks that run the HTTP transport's POSTs: concurrent, reused, bounded, and
cancelled with their task group like any task of it."""

from __future__ import annotations

import contextvars

import anyio
import anyio.abc
import pytest

from mcp_notebook.session.startup import unwrap
from mcp_notebook.transports.workers import Workers


class CountingGroup:
    """A task group that counts the tasks started in it."""

    def __init__(self, group: anyio.abc.TaskGroup) -> None:
        self.group = group
        self.started = 0

    def start_soon(self, fn, *args):  # type: ignore[no-untyped-def]
        self.started += 1
        return self.group.start_soon(fn, *args)


async def _settle() -> None:
    for _ in range(10):  # let every runnable task run to its next wait
        await anyio.lowlevel.checkpoint()


def test_a_job_never_waits_behind_a_busy_one():
    async def main() -> list[str]:
        done: list[str] = []
        release = anyio.Event()

        async def slow() -> None:
            await release.wait()
            done.append("slow")

        async def quick() -> None:
            done.append("quick")

        async with anyio.create_task_group() as tg:
            workers = Workers(tg)
            workers.start_soon(slow)
            await _settle()
            workers.start_soon(quick)
            await _settle()
            assert done == ["quick"]  # while the slow one still waits
            release.set()
            await _settle()
            tg.cancel_scope.cancel()
        return done

    assert anyio.run(main) == ["quick", "slow"]


def test_an_idle_task_takes_the_next_job_and_no_more_than_keep_wait():
    async def main() -> tuple[int, int, int]:
        release = anyio.Event()
        ran: list[int] = []

        async def job(number: int) -> None:
            await release.wait()
            ran.append(number)

        async with anyio.create_task_group() as tg:
            group = CountingGroup(tg)
            workers = Workers(group, keep=2)  # type: ignore[arg-type]
            for number in range(5):
                workers.start_soon(job, number)
            await _settle()
            concurrent = group.started
            release.set()
            await _settle()
            idle = len(workers._idle)
            for number in range(5, 7):
                workers.start_soon(job, number)
                await _settle()
            later = group.started - concurrent
            assert sorted(ran) == list(range(7))
            tg.cancel_scope.cancel()
        return concurrent, idle, later

    concurrent, idle, later = anyio.run(main)
    assert (concurrent, idle, later) == (5, 2, 0)  # one task each at once; two kept; reused


def test_idle_tasks_end_with_their_group_and_a_job_error_ends_it():
    async def nothing() -> None:
        pass

    async def closes() -> int:
        async with anyio.create_task_group() as tg:
            workers = Workers(tg)
            workers.start_soon(nothing)
            await _settle()
            tg.cancel_scope.cancel()  # the idle task is cancelled with the rest: the group exits
        return len(workers._idle)

    async def fails() -> None:
        async def error() -> None:
            raise ValueError("the job failed")

        async with anyio.create_task_group() as tg:
            workers = Workers(tg)
            workers.start_soon(nothing)
            await _settle()
            workers.start_soon(error)  # taken by the idle task

    assert anyio.run(closes) == 0
    with pytest.raises(Exception) as caught:  # an exception group (its type depends on the Python)
        anyio.run(fails)
    assert repr(unwrap(caught.value)) == "ValueError('the job failed')"


ASKING: contextvars.ContextVar[str] = contextvars.ContextVar("asking", default="nobody")


def test_a_job_sees_the_context_of_the_code_that_started_it_and_leaves_none_behind():
    """As a new task would: frames read on a POST's stream are dispatched in the context of
    the request that sent it (a call's logs go to that call's cell)."""

    async def main() -> list[str]:
        seen: list[str] = []

        async def job() -> None:
            seen.append(ASKING.get())
            ASKING.set("changed by the job")

        async with anyio.create_task_group() as tg:
            workers = Workers(tg, keep=1)
            for asker in ("first call", "second call"):
                token = ASKING.set(asker)
                workers.start_soon(job)
                ASKING.reset(token)
                await _settle()
            workers.start_soon(job)  # started where nothing is set: the last job's value is gone
            await _settle()
            tg.cancel_scope.cancel()
        return seen

    assert anyio.run(main) == ["first call", "second call", "nobody"]
