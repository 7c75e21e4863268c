"""One share of a load's sessions, driven: the engine the kernel runs, and each Dask worker runs on its share.

The engine runs on an asyncio loop of its own thread (`drive`), so the thread that asked (a
notebook cell, a worker's task) stays free to show or forward the records as they come and
to stop it; the sessions themselves live on the runtime's loop, as every connection does.
It opens the first session and checks the workload against it (a dead server or a wrong
workload raises before any load), then the others over the `ramp`, and each session repeats
the workload until the `duration` ends or the `calls` are spent, at the overall `rate`.

While it runs, it reads every open session's health every `watch.EVERY` seconds (and as each
closes): the server's pings answered and the violations show live, each counted once.

The rules kept here: every call is recorded once, by the session that made it (a call the
stop cut short included); a session whose server went away is opened again (after a pause
that doubles, `REOPEN_FLOOR` at least) up to `REOPENS` times running, then counted failed;
whatever ends the engine (the end, an error, `stop()` from another thread), every session
it opened is closed before `drive` returns, so no server process outlives it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from ..api.connecting.connect import aconnect
from ..api.connecting.registry import default_name
from ..api.connection import Connection, session_of
from ..base.errors import ConnectionClosed, McpError, McpNotebookError, TransportError, UsageError
from ..base.text import one_line, plain
from ..session.session import CallOptions
from .records import Call, Health, Tally
from .watch import EVERY, Seen, read
from .workload import Step, Workload

REOPENS = 3  # a lost session is opened again this many times running before it counts as failed
REOPEN_FLOOR = 0.2  # seconds before the first reopen; doubling after each
STOP_GRACE = 30.0
OK, FAILED, LOST = "ok", "failed", "lost"  # seconds `drive` waits, once stopped, for the sessions to close


@dataclass(frozen=True)
class Plan:
    """What one engine does: its sessions (numbered from `first`), and when it stops."""

    sessions: int
    first: int = 0
    duration: float | None = None
    calls: int | None = None
    rate: float | None = None  # calls/s over this engine's sessions
    ramp: float | None = None  # seconds over which the sessions open


class Engine:
    """Drives `plan.sessions` sessions of `target` through `workload`, recording into `tally`.
    (`clock` and `sleep` pace the calls and the ramp: a test's own show what the engine planned.)"""

    def __init__(
        self,
        target: Any,
        workload: Workload,
        plan: Plan,
        connect_options: Mapping[str, Any],
        tally: Tally,
        *,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.target, self.workload, self.plan, self.tally = target, workload, plan, tally
        self.clock, self.sleep = clock, sleep
        self.options = {**workload.connect_options, **connect_options}
        self.stopping = False
        self.stop_reason: str | None = None
        self._left = plan.calls
        self._slot = 0
        self._began = 0.0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._main: asyncio.Task[Any] | None = None
        self._open: dict[Connection, Seen] = {}
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    # ----- from other threads -----

    def stop(self, reason: str = "stopped") -> None:
        """End the load now (any thread): calls under way are cut short and recorded, sessions closed."""
        self.stopping, self.stop_reason = True, self.stop_reason or reason
        loop, main = self._loop, self._main
        if loop is not None and main is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended: nothing left to stop
                loop.call_soon_threadsafe(main.cancel)

    # ----- on the engine's loop -----

    async def run(self) -> None:
        self._loop, self._main = asyncio.get_running_loop(), asyncio.current_task()
        self._began = self.clock()
        if self.workload.function is not None and not self.workload.is_async:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.plan.sessions, thread_name_prefix="mcp-notebook-load")
        watching = asyncio.create_task(self._watch())
        try:
            ready: list[Connection | None] = [await self._first()] + [None] * (self.plan.sessions - 1)
            if not self.plan.ramp:  # every session open before the first call: they start together
                async with anyio.create_task_group() as group:
                    for k in range(1, self.plan.sessions):
                        group.start_soon(self._ready, ready, k)
            self._began = self.clock()
            async with anyio.create_task_group() as group:
                for k in range(self.plan.sessions):
                    group.start_soon(self._session, k, ready[k])
        except asyncio.CancelledError:
            if not self.stopping:
                raise
        finally:
            watching.cancel()
            await asyncio.shield(self._close_all())
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)

    async def _first(self) -> Connection:
        """The first session, with the workload checked against it: its failure is the load's."""
        where = _shown(self.target)
        try:
            conn = await self._connect(0)
        except McpNotebookError as exc:
            raise UsageError(f"cannot load {where}: its first session failed: {one_line(exc)}") from None
        listed: list[str] = []
        if self.workload.tools:
            listing = await conn.aio.list_tools()
            listed = [str(tool.get("name")) for tool in listing]
        self.workload.check(conn.server_info, listed, where)
        return conn

    async def _connect(self, k: int) -> Connection:
        name = default_name(f"load-{self.plan.first + k + 1}")
        conn = await aconnect(self.target, **{**self.options, "name": name})
        self._open[conn] = Seen()
        self.tally.note(Health(sessions=1))
        self.tally.sessions_open += 1
        return conn

    async def _watch(self) -> None:
        """Read every open session's health, every EVERY seconds, until cancelled."""
        while True:
            await asyncio.sleep(EVERY)
            self._read(list(self._open.items()))

    def _read(self, sessions: list[tuple[Connection, Seen]]) -> None:
        more = Health()
        for conn, seen in sessions:
            more.merge(read(session_of(conn), seen))
        if more != Health():
            self.tally.note(more)

    async def _ready(self, ready: list[Connection | None], k: int) -> None:
        ready[k] = await self._reopen(k, None, 0)

    async def _session(self, k: int, conn: Connection | None) -> None:
        lost = 0
        if conn is None:
            if not self.plan.ramp:
                return  # it could not be opened (counted failed)
            await self.sleep(self.plan.ramp * k / self.plan.sessions)
            conn = await self._reopen(k, None, lost)
        try:
            steps = self.workload.steps or (Step("function", None),)
            index = 0
            while conn is not None and self._take():
                await self._pace()
                outcome = await self._one(k, conn, steps[index % len(steps)])
                index += 1
                if outcome == LOST and not self.stopping:
                    lost += 1
                    conn = await self._reopen(k, conn, lost)
                elif outcome == OK:
                    lost = 0
        finally:
            if conn is not None:
                await asyncio.shield(self._close(conn))

    async def _reopen(self, k: int, old: Connection | None, lost: int) -> Connection | None:
        """Open session k (again, after `old` was lost); None once it failed `REOPENS` times running."""
        if old is not None:
            await self._close(old)
            self.tally.note(Health(reconnects=1))
        for attempt in range(REOPENS + 1):
            if self.stopping or self._over():
                return None
            if lost or attempt:
                await self.sleep(REOPEN_FLOOR * 2 ** max(lost + attempt - 1, 0))
            try:
                return await self._connect(k)
            except McpNotebookError:
                continue
        self.tally.note(Health(failed_sessions=1))
        return None

    def _take(self) -> bool:
        """Claim one call of the budget; False once the load is over."""
        if self._over():
            return False
        if self._left is not None:
            self._left -= 1
        return True

    def _over(self) -> bool:
        if self.stopping or (self._left is not None and self._left <= 0):
            return True
        return self.plan.duration is not None and self.clock() - self._began >= self.plan.duration

    async def _pace(self) -> None:
        if self.plan.rate:
            due = self._began + self._slot / self.plan.rate
            self._slot += 1
            wait = due - self.clock()
            if wait > 0:
                await self.sleep(wait)

    async def _one(self, k: int, conn: Connection, step: Step) -> str:
        """Make one call and record it; OK, FAILED, or LOST (the session is gone: its transport failed)."""
        index = self.plan.first + k
        start = self.clock()
        ok, error, code, outcome = False, None, None, FAILED
        try:
            ok, error = await self._call(conn, step)
            outcome = OK if ok else FAILED
        except McpError as exc:
            error, code = one_line(f"{exc.code}: {exc.message}"), exc.code
        except asyncio.CancelledError:
            error = "the load stopped before its answer"
            raise
        except (TransportError, ConnectionClosed) as exc:
            error, outcome = one_line(exc), LOST
        except Exception as exc:  # noqa: BLE001 - the workload's own failure (a function's) is recorded too
            error = one_line(f"{type(exc).__name__}: {exc}") if not isinstance(exc, McpNotebookError) else one_line(exc)
            outcome = LOST if conn.closed else FAILED
        finally:
            latency = self.clock() - start
            tool = step.tool if self.workload.function is None else self.workload.label.removesuffix("()")
            self.tally.add([Call(index, step.method, tool, start - self._began, latency, ok, error, code)])
        return outcome

    async def _call(self, conn: Connection, step: Step) -> tuple[bool, str | None]:
        function = self.workload.function
        if function is not None:
            if self.workload.is_async:
                await function(conn)
            else:
                await asyncio.get_running_loop().run_in_executor(self._pool, function, conn)
            return True, None
        result = await session_of(conn).call(step.method, step.params, CallOptions())
        if step.method == "tools/call" and isinstance(result, dict) and result.get("isError") is True:
            return False, one_line(f"tool error: {_first_text(result)}")
        return True, None

    async def _close(self, conn: Connection) -> None:
        seen = self._open.pop(conn, None)
        if seen is not None:
            self.tally.sessions_open -= 1
            with contextlib.suppress(Exception):
                await conn.aio.close()
            self._read([(conn, seen)])  # closed: its frames all checked, its last pongs written

    async def _close_all(self) -> None:
        for conn in list(self._open):
            await self._close(conn)


def _first_text(result: dict[str, Any]) -> str:
    for block in result.get("content") or ():
        if isinstance(block, dict) and isinstance(block.get("text"), str):
            return plain(block["text"])
    return "(no text)"


def _shown(target: Any) -> str:
    return plain(target if isinstance(target, str) else " ".join(map(str, target)))


def drive(engine: Engine, poll: Callable[[], None] = lambda: None, every: float = 0.25) -> BaseException | None:
    """Run `engine` on a loop of its own thread until it ends, calling `poll` every `every` seconds
    here meanwhile; Ctrl-C here stops it. Returns what interrupted it (KeyboardInterrupt) or None;
    what the engine raised is raised here. The sessions are closed either way before it returns."""
    done: concurrent.futures.Future[None] = concurrent.futures.Future()

    def main() -> None:
        try:
            asyncio.run(engine.run())
        except BaseException as exc:  # noqa: BLE001 - handed to the waiting thread
            done.set_exception(exc)
        else:
            done.set_result(None)

    thread = threading.Thread(target=main, name="mcp-notebook-load", daemon=True)
    thread.start()
    interrupted: BaseException | None = None
    try:
        while True:
            try:
                done.result(timeout=every)
                break
            except concurrent.futures.TimeoutError:
                poll()
            except KeyboardInterrupt as exc:
                interrupted = exc
                engine.stop("Ctrl-C")
                with contextlib.suppress(Exception):
                    done.exception(timeout=STOP_GRACE)
                break
    finally:
        thread.join(STOP_GRACE)
        poll()
    return interrupted
