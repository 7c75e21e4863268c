"""Connection health: the live counters a session keeps and the snapshots it hands out.

The state machine: connecting -> ready -> degraded -> stale -> closing -> closed, plus
reconnecting where a transport recovers. The session sets connecting/ready/closing/
closed; the monitor (`api.monitor`) moves between ready, degraded and stale on keepalive
pings; a transport that fails (the server cannot be reached, or answers with a server
error) makes a ready session degraded, and stale after FAILURES_TO_STALE failures in a
row, until a frame comes in again; transports that recover set reconnecting. Every
transition is a "state" event in the trace, and goes to the session's state listeners.
"""

from __future__ import annotations

import math
import statistics
import time
import warnings
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.public import public
from ..base.text import clip
from . import health_view

CONNECTING = "connecting"
READY = "ready"
DEGRADED = "degraded"
STALE = "stale"
RECONNECTING = "reconnecting"
CLOSING = "closing"
CLOSED = "closed"

STATES = (CONNECTING, READY, DEGRADED, STALE, RECONNECTING, CLOSING, CLOSED)
LIVE_STATES = (READY, DEGRADED, STALE)  # the monitor moves only between these

FAILURES_TO_STALE = 3  # transport failures in a row that make a connection stale
SPARK_POINTS = 120  # round trips kept in a snapshot, for sparklines
RTT_HISTORY = 1000  # round trips (and pong latencies) the counters keep


@public
@dataclass(frozen=True, slots=True, repr=False)
class Health:
    """An immutable snapshot of one connection's health (times in seconds).

    Its repr is one line; in a notebook it shows as a small table, in IPython as a few lines
    (`session.health_view`); `as_dict()` has every field.
    """

    name: str
    state: str
    era: str
    era_source: str | None
    probe: str  # what our liveness checks are: "ping", or "liveness probe" where ping was removed
    protocol_version: str | None
    transport: str
    endpoint: str
    server_info: dict[str, Any] | None
    server_pings: int
    pongs_sent: int
    pong_failures: int
    pings_sent: int
    ping_failures: int
    last_rtt: float | None
    requests_in_flight: int
    invalid_frames: int
    last_frame_in: float | None
    last_frame_out: float | None
    exit_code: int | None
    stderr_tail: tuple[str, ...]
    closed_reason: str | None
    state_reason: str | None = None
    pings_answered: int = 0
    ping_timeouts: int = 0
    rtt_min: float | None = None
    rtt_median: float | None = None
    rtt_p95: float | None = None
    rtt_history: tuple[float, ...] = ()
    last_pong_latency: float | None = None
    pong_latency_median: float | None = None
    pong_latency_max: float | None = None
    pong_latencies: tuple[float, ...] = ()
    since_frame_in: float | None = None
    since_frame_out: float | None = None
    keepalive: bool = False
    keepalive_interval: float | None = None
    keepalive_pings: int = 0
    keepalive_misses: int = 0
    keepalive_skips: int = 0
    http_keepalive_ticks: int = 0
    reconnects: int = 0  # dropped SSE streams resumed with Last-Event-ID (HTTP)
    session_recoveries: int = 0
    session_id: str | None = None  # the HTTP session (Mcp-Session-Id) the server gave us
    notifications_dropped: int = 0  # server notifications whose handler never ran: its tasks were full
    requests_refused: int = 0  # server requests answered 'busy' for the same reason
    listening: str | None = None  # the HTTP listening stream: "open", "down since ... (N reopen attempts): why", "none: why"
    trace_entries: int = 0
    trace_dropped: int = 0
    closed_at: float | None = None  # wall time the connection closed
    violations: int = 0  # rules the server's frames broke (conn.violations lists them)
    restarts: int = 0  # servers restarted under this connection (conn.reconnect(), reload)
    taken_at: float = field(default_factory=time.time)
    taken_monotonic: float = field(default_factory=time.monotonic)

    if not TYPE_CHECKING:  # type checkers see only the fields: a removed name is an error there

        def __getattr__(self, name: str) -> Any:
            if name == "stream_resumes":  # the same count as `reconnects`, under a second name until #38
                warnings.warn("Health.stream_resumes is deprecated; use Health.reconnects", DeprecationWarning, stacklevel=2)
                return self.reconnects
            raise AttributeError(f"'Health' object has no attribute {name!r}")

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    def __repr__(self) -> str:
        return f"<Health {self.name!r} {self.state}: {clip(health_view.summary(self), 90)}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(health_view.text(self))

    def _repr_html_(self) -> str:
        return health_view.html(self)


@dataclass(slots=True)
class HealthCounters:
    """What a session counts as frames go by; only the session thread writes it."""

    state: str = CONNECTING
    server_pings: int = 0
    pongs_sent: int = 0
    pong_failures: int = 0
    pings_sent: int = 0
    ping_failures: int = 0
    pings_answered: int = 0
    ping_timeouts: int = 0
    last_rtt: float | None = None
    last_pong_latency: float | None = None
    invalid_frames: int = 0
    last_frame_in: float | None = None
    last_frame_out: float | None = None
    closed_reason: str | None = None
    state_reason: str | None = None
    keepalive_pings: int = 0
    keepalive_misses: int = 0  # consecutive
    keepalive_skips: int = 0
    session_recoveries: int = 0  # sessions renewed after the server forgot ours
    transport_failures: int = 0  # in a row, since the last frame that came in
    listening_down: str | None = None  # the listening stream is down: since when, and why
    notifications_dropped: int = 0  # server notifications dropped while their handlers' tasks were full
    requests_refused: int = 0  # server requests answered 'busy' while their handlers' tasks were full
    closed_at: float | None = None  # wall time
    rtts: deque[float] = field(default_factory=lambda: deque(maxlen=RTT_HISTORY))  # our pings' round trips
    pong_latencies: deque[float] = field(default_factory=lambda: deque(maxlen=RTT_HISTORY))  # read to pong written


def percentile(ordered: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted, non-empty sequence."""
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def _stats(values: Sequence[float]) -> tuple[float | None, float | None, float | None, float | None]:
    """(min, median, p95, max) of `values`, or Nones."""
    if not values:
        return None, None, None, None
    ordered = sorted(values)
    return ordered[0], statistics.median(ordered), percentile(ordered, 0.95), ordered[-1]


def _age(stamp: float | None, now: float) -> float | None:
    return None if stamp is None else max(0.0, now - stamp)


def snapshot(
    name: str, session: Any, *, keepalive: bool = False, keepalive_interval: float | None = None, restarts: int = 0
) -> Health:
    """Build a Health snapshot of `session` now (any thread: reads are copies of plain values)."""
    c = session.counters
    transport = session.transport
    rtts = tuple(c.rtts)
    pongs = tuple(c.pong_latencies)
    rtt_min, rtt_median, rtt_p95, _ = _stats(rtts)
    _, pong_median, _, pong_max = _stats(pongs)
    now = time.monotonic()
    trace = session.trace
    return Health(
        name=name,
        state=c.state,
        era=session.era,
        era_source=session.era_source,
        probe=session.rules.probe,
        protocol_version=session.protocol_version,
        transport=transport.kind,
        endpoint=session.describe(),
        server_info=session.server.info,
        server_pings=c.server_pings,
        pongs_sent=c.pongs_sent,
        pong_failures=c.pong_failures,
        pings_sent=c.pings_sent,
        ping_failures=c.ping_failures,
        last_rtt=c.last_rtt,
        requests_in_flight=len(session.requests),
        invalid_frames=c.invalid_frames,
        last_frame_in=c.last_frame_in,
        last_frame_out=c.last_frame_out,
        exit_code=transport.exit_code,
        stderr_tail=session.stderr_lines(),
        closed_reason=c.closed_reason,
        state_reason=c.state_reason,
        pings_answered=c.pings_answered,
        ping_timeouts=c.ping_timeouts,
        rtt_min=rtt_min,
        rtt_median=rtt_median,
        rtt_p95=rtt_p95,
        rtt_history=rtts[-SPARK_POINTS:],
        last_pong_latency=c.last_pong_latency,
        pong_latency_median=pong_median,
        pong_latency_max=pong_max,
        pong_latencies=pongs[-SPARK_POINTS:],
        since_frame_in=_age(c.last_frame_in, now),
        since_frame_out=_age(c.last_frame_out, now),
        keepalive=keepalive,
        keepalive_interval=keepalive_interval if keepalive else None,
        keepalive_pings=c.keepalive_pings,
        keepalive_misses=c.keepalive_misses,
        keepalive_skips=c.keepalive_skips,
        http_keepalive_ticks=getattr(transport, "keepalive_ticks", 0),
        reconnects=getattr(transport, "stream_resumes", 0),
        session_recoveries=c.session_recoveries,
        session_id=getattr(transport, "session_id", None),
        notifications_dropped=c.notifications_dropped,
        requests_refused=c.requests_refused,
        listening=getattr(transport, "listening_stream", None),
        trace_entries=len(trace),
        trace_dropped=trace.dropped,
        closed_at=c.closed_at,
        violations=session.checker.count,
        restarts=restarts,
        taken_monotonic=now,
    )
