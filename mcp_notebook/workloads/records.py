"""A load test's facts: one `Call` record per call, the sessions' health counters, and the
statistics read from them (calls/s, percentiles per method and tool, errors by code).

The rule kept here: every call is recorded exactly once, by the session that made it, and
every number shown (live or in the report) is computed from these records and counters alone,
so the live view, the report and a cluster's merged shares can never disagree.
"""

from __future__ import annotations

import math
import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

PERCENTILES = (50, 95, 99)


@dataclass(frozen=True, slots=True)
class Call:
    """One call of the load: which session made it, what it asked, when (seconds since the load
    began), how long it took, and how it ended (`error`: one line; `code`: the JSON-RPC code)."""

    session: int
    method: str
    tool: str | None
    start: float
    latency: float
    ok: bool
    error: str | None = None
    code: int | None = None


PONGS_KEPT = 100_000  # pong latencies a load keeps for its median (the counts and the max stay exact)


@dataclass
class Health:
    """What the sessions' health said about the load, summed over the sessions (and shares)."""

    sessions: int = 0  # sessions opened
    failed_sessions: int = 0  # lost, and not opened again
    reconnects: int = 0
    server_pings: int = 0  # the server's pings we answered during the load
    pong_latencies: list[float] = field(default_factory=list)  # how fast we answered them (s): the first PONGS_KEPT
    violations: int = 0  # rules the server's frames broke during the load
    violation_rules: Counter[str] = field(default_factory=Counter)
    pong_max: float = 0.0  # the slowest answer of all, kept or not

    def merge(self, other: Health) -> None:
        self.sessions += other.sessions
        self.failed_sessions += other.failed_sessions
        self.reconnects += other.reconnects
        self.server_pings += other.server_pings
        room = PONGS_KEPT - len(self.pong_latencies)  # a server's pings must not grow the load's memory without end
        self.pong_latencies.extend(other.pong_latencies[:room] if room > 0 else ())
        self.pong_max = max(self.pong_max, other.pong_max, max(other.pong_latencies, default=0.0))
        self.violations += other.violations
        self.violation_rules.update(other.violation_rules)

    def copy(self) -> Health:
        made = Health()
        made.merge(self)
        return made

    def since(self, earlier: Health) -> Health:
        """What was added to this health after `earlier`, a copy of it taken before (every field only grows)."""
        return Health(
            self.sessions - earlier.sessions,
            self.failed_sessions - earlier.failed_sessions,
            self.reconnects - earlier.reconnects,
            self.server_pings - earlier.server_pings,
            self.pong_latencies[len(earlier.pong_latencies) :],
            self.violations - earlier.violations,
            self.violation_rules - earlier.violation_rules,
            self.pong_max,
        )


def percentile(ordered: Sequence[float], p: float) -> float:
    """The nearest-rank percentile of sorted values (NaN for none)."""
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[min(rank, len(ordered)) - 1]


@dataclass(frozen=True)
class Row:
    """The statistics of one method (and tool): counts, calls/s and latency percentiles (s)."""

    method: str
    tool: str | None
    calls: int
    errors: int
    rate: float
    p50: float
    p95: float
    p99: float

    @property
    def label(self) -> str:
        return f"{self.method} {self.tool}" if self.tool else self.method


def span(calls: Sequence[Call]) -> float:
    """Seconds from the first call's start to the last call's end."""
    if not calls:
        return 0.0
    return max(c.start + c.latency for c in calls) - min(c.start for c in calls)


def rows(calls: Sequence[Call], elapsed: float | None = None) -> list[Row]:
    """One Row per method and tool, then the whole ("all"), over `elapsed` seconds (their span by default)."""
    seconds = span(calls) if elapsed is None else elapsed
    groups: dict[tuple[str, str | None], list[Call]] = {}
    for call in calls:
        groups.setdefault((call.method, call.tool), []).append(call)
    made = [_row(method, tool, group, seconds) for (method, tool), group in sorted(groups.items(), key=_order)]
    if len(groups) > 1:
        made.append(_row("all", None, list(calls), seconds))
    return made


def _order(item: tuple[tuple[str, str | None], list[Call]]) -> tuple[str, str]:
    (method, tool), _ = item
    return method, tool or ""


def _row(method: str, tool: str | None, calls: Sequence[Call], seconds: float) -> Row:
    latencies = sorted(c.latency for c in calls)
    p50, p95, p99 = (percentile(latencies, p) for p in PERCENTILES)
    rate = len(calls) / seconds if seconds > 0 else math.nan
    return Row(method, tool, len(calls), sum(not c.ok for c in calls), rate, p50, p95, p99)


def errors_by_code(calls: Iterable[Call]) -> list[tuple[str, int, str]]:
    """(code, count, one example line) per kind of error, most frequent first; `code` is the
    JSON-RPC code, or "tool" (a tool result with isError), or "failed" (no answer: transport, timeout)."""
    counts: Counter[str] = Counter()
    example: dict[str, str] = {}
    for call in calls:
        if not call.ok:
            key = error_key(call)
            counts[key] += 1
            example.setdefault(key, call.error or "")
    return [(key, n, example[key]) for key, n in counts.most_common()]


def error_key(call: Call) -> str:
    if call.code is not None:
        return str(call.code)
    return "tool" if (call.error or "").startswith("tool error") else "failed"


class Tally:
    """The records and the sessions' health as they arrive, from any thread (the engine's, a
    cluster's stream), read by the live view from another: the health only grows, by `note`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._calls: list[Call] = []
        self._health = Health()
        self.sessions_open = 0
        self.notes = 0  # how many times the health grew: the live view redraws when it changes

    def add(self, calls: Iterable[Call]) -> None:
        with self._lock:
            self._calls.extend(calls)

    def note(self, more: Health) -> None:
        """Add what the sessions' health said since the last note."""
        with self._lock:
            self._health.merge(more)
            self.notes += 1

    @property
    def health(self) -> Health:
        """The sessions' health so far (a copy)."""
        with self._lock:
            return self._health.copy()

    def calls(self) -> list[Call]:
        with self._lock:
            return list(self._calls)

    def since(self, seen: int) -> list[Call]:
        """The records after the first `seen` (what a cluster's share has not sent yet)."""
        with self._lock:
            return self._calls[seen:]

    def __len__(self) -> int:
        return len(self._calls)
