"""One wait for a condition no event reports: poll it until it holds, fail after a timeout (a hang
guard, never a timing claim). Used only where there is nothing to wait on: a render pump on its own
clock, a peer's timers, a blocked main thread, /proc catching up."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import pytest

WAIT = 20.0  # how long a condition may take before the test fails


def wait_until(condition: Callable[[], object], what: str = "the condition", timeout: float = WAIT) -> None:
    """Poll `condition` until it holds; fail the test, naming `what`, after `timeout` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.01)


async def until(condition: Callable[[], object], what: str = "the condition", timeout: float = WAIT) -> None:
    """`wait_until` for a coroutine: poll while the caller's loop runs."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(0.01)
