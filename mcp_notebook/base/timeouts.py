"""The request timeout: its default and what a valid one is, for every layer.

The one home of the default (`DEFAULT_TIMEOUT`): the session's `timeout` and `connect()`'s
option take it from here. A timeout is a positive, finite number of seconds, or None for no
limit where that is allowed (`check_timeout`); whoever takes one from a caller checks it here.
A feature call's deadline is a `Deadline` (an idle timeout that progress resets, under a
maximum total), kept and enforced by the caller's side: `api.calls.exchange` watches it while
it waits and cancels the request on the server when it passes (the session then sets none).
A plain request (`conn.request`, `conn.ping`, the session's own) has no progress to reset it:
its `PendingCall.result` (`session.pending`) waits under the same default and cancels likewise.
"""

from __future__ import annotations

import time
from typing import Any

from .errors import UsageError

DEFAULT_TIMEOUT = 60.0  # seconds a request may go without an answer (or progress) unless the caller says


def check_timeout(value: Any, what: str = "timeout", *, optional: bool = True) -> None:
    """A timeout is a positive number of seconds (or None: no limit, where that is allowed)."""
    if value is None and optional:
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 or value == float("inf"):
        allowed = ", or None for no limit" if optional else ""
        raise UsageError(f"{what} must be a positive number of seconds{allowed}; got {value!r}")


class Deadline:
    """An idle timeout that progress may reset, under a maximum total time that always holds."""

    def __init__(self, timeout: float | None, max_total: float | None = None, reset_on_progress: bool = True) -> None:
        self.started = self.touched = time.monotonic()
        self.timeout = timeout
        self.max_total = max_total
        self.reset_on_progress = reset_on_progress

    def touch(self) -> None:
        """Progress arrived: the idle timeout starts again (if it resets)."""
        if self.reset_on_progress:
            self.touched = time.monotonic()

    def remaining(self, now: float | None = None) -> float | None:
        """Seconds left (may be <= 0), or None for no limit."""
        timeout, max_total = self.timeout, self.max_total
        if timeout is None and max_total is None:
            return None
        now = time.monotonic() if now is None else now
        total = None if max_total is None else self.started + max_total - now
        if timeout is None:
            return total
        idle = self.touched + timeout - now
        return idle if total is None else min(idle, total)

    def reason(self) -> str:
        now = time.monotonic()
        if self.max_total is not None and now >= self.started + self.max_total:
            return f"exceeded the maximum total time of {self.max_total:g} s"
        return (
            f"no response or progress within {self.timeout:g} s"
            if self.reset_on_progress
            else f"timed out after {self.timeout:g} s"
        )
