"""The wait before a retry the server drives: a floor, doubling, and a cap.

Every loop that tries again because of what a server did (a stream it closed, a session it
forgot) waits `backoff` first: the server's own `retry` hint if it gave one, never less than
FLOOR (a `retry: 0`, or none at all, would spin a thousand times a second), doubled for each
attempt in a row that brought nothing, never more than CAP (a server back up is heard from
within that).
"""

from __future__ import annotations

from ..base.sizes import RETRY_FLOOR

FLOOR = RETRY_FLOOR  # seconds: the least wait, whatever the server asks for (the device grant's too)
CAP = 30.0  # seconds: the most, however often it failed


def backoff(retry_ms: int | None, attempt: int) -> float:
    """Seconds to wait before trying again: the server's `retry` (FLOOR if it gave none), never
    less than FLOOR, doubled for each attempt in a row that brought nothing (`attempt`), never
    more than CAP."""
    base = FLOOR if retry_ms is None else max(retry_ms / 1000, FLOOR)
    return min(base * float(2 ** min(attempt, 16)), CAP)
