"""Reusable tasks in a task group: each job is handed to an idle task, not given a new one.

anyio's `start_soon` costs several times what waking an idle task does (a task handle, a
wrapper coroutine, the cancel scope's bookkeeping, a done callback), and the HTTP transport
starts a job for every POST. A job runs as a task of the group would: concurrently with the
others (one is never queued behind a busy task: a task is started whenever none is idle),
cancelled with the group, an exception it raises ends the group, and it sees the context
variables of the code that started it (a new task copies them; here they are set for the
job's time, then reset): frames read on a POST's stream are dispatched in the context of
the request that sent it. Up to `keep` tasks wait idle between jobs; the others end.
"""

from __future__ import annotations

import contextvars
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc

Job = tuple[Callable[..., Awaitable[None]], tuple[Any, ...], contextvars.Context]


class Workers:
    """Runs jobs in a task group, on tasks kept for the next job."""

    def __init__(self, task_group: anyio.abc.TaskGroup, keep: int = 4) -> None:
        self._task_group = task_group
        self._keep = keep
        self._jobs: deque[Job] = deque()
        self._idle: list[anyio.Event] = []  # one per task waiting for a job

    def start_soon(self, fn: Callable[..., Awaitable[None]], *args: Any) -> None:
        """Run `fn(*args)` soon, as `TaskGroup.start_soon` would."""
        self._jobs.append((fn, args, contextvars.copy_context()))
        if self._idle:
            self._idle.pop().set()
        else:  # in an empty context: each job brings its own, and finds nothing of an earlier one's
            contextvars.Context().run(self._task_group.start_soon, self._work)

    async def _work(self) -> None:
        jobs, idle = self._jobs, self._idle
        while True:
            while jobs:  # another task may have taken the job this one was woken for: then it waits again
                fn, args, context = jobs.popleft()
                tokens = [var.set(value) for var, value in context.items()]
                try:
                    await fn(*args)
                finally:
                    for token in reversed(tokens):
                        token.var.reset(token)
            if len(idle) >= self._keep:
                return
            wake = anyio.Event()
            idle.append(wake)
            try:
                await wake.wait()
            finally:
                if not wake.is_set():  # cancelled while idle: the group is closing
                    idle.remove(wake)
