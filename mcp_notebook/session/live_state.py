"""How what the transport reports moves a live connection between ready, degraded and stale.

A transport failure (the server out of reach, or a server error; a 4xx refuses one request:
the server is there) makes a ready connection degraded, and stale after FAILURES_TO_STALE in
a row, until a frame comes in again. A listening stream that is down (the server cannot
reach us between our requests) keeps a connection degraded until it is back. The rule: a
degraded or stale connection is ready again only once nothing that made it so still holds
(`all_clear`): no transport failure in a row, no keepalive ping missed, the listening
stream up. Functions of the session's `SessionPort`, on the session thread.
"""

from __future__ import annotations

from ..base.errors import TransportError
from .health import DEGRADED, FAILURES_TO_STALE, READY, STALE, HealthCounters
from .port import SessionPort


def all_clear(counters: HealthCounters) -> bool:
    """Whether nothing that degrades a connection holds any more."""
    return counters.transport_failures == 0 and counters.keepalive_misses == 0 and counters.listening_down is None


def transport_failed(session: SessionPort, error: Exception) -> None:
    """The server could not be reached, or answered with a server error: degraded, then stale."""
    status = getattr(error, "status", None)
    if not isinstance(error, TransportError) or (status is not None and status < 500):
        return
    counters = session.counters
    counters.transport_failures += 1
    if counters.state in (READY, DEGRADED) and counters.transport_failures >= FAILURES_TO_STALE:
        session.set_state(STALE, f"{counters.transport_failures} transport failures in a row: {error}")
    elif counters.state == READY:
        session.set_state(DEGRADED, f"transport failure: {error}")


def reached_again(session: SessionPort) -> None:
    """A frame came in after transport failures: the server is reachable again."""
    counters = session.counters
    counters.transport_failures = 0
    if counters.state in (DEGRADED, STALE) and all_clear(counters):
        session.set_state(READY, "the server answers again")
    elif counters.state == STALE and counters.listening_down is not None:
        session.set_state(DEGRADED, f"the server answers again, but its listening stream is {counters.listening_down}")


def listening_changed(session: SessionPort, down: str | None) -> None:
    """The listening stream is down (`down`: since when and why) or back (None)."""
    counters = session.counters
    counters.listening_down = down
    if down is not None and counters.state == READY:
        session.set_state(DEGRADED, f"the listening stream is {down}")
    elif down is None and counters.state == DEGRADED and all_clear(counters):
        session.set_state(READY, "the listening stream is open again")


def ready(session: SessionPort, reason: str) -> None:
    """A handshake (or a session's renewal) is done: ready, or degraded while the listening stream is down."""
    down = session.counters.listening_down
    if down is None:
        session.set_state(READY, reason)
    else:
        session.set_state(DEGRADED, f"{reason}, but the listening stream is {down}")
