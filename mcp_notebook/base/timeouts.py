"""The request timeout: its default and what a valid one is, for every layer.

The one home of the default (`DEFAULT_TIMEOUT`): the session's `timeout` and `connect()`'s
option take it from here. A timeout is a positive, finite number of seconds, or None for no
limit where that is allowed (`check_timeout`); whoever takes one from a caller checks it here.
Who enforces a request's deadline is the caller's side: `api.calls.progress.Deadline`, watched
by `api.calls.exchange` (feature calls) and by the session's `Pending` (raw requests, pings).
"""

from __future__ import annotations

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
