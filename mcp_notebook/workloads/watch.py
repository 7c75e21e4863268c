"""What each open session of a load says about its health while the load runs: the server's
pings it answered (and how fast it answered them) and the rules the server's frames broke.

The engine reads every open session every `EVERY` seconds on its own loop, and once more as
each one closes (`read`); a read takes only what is new since the session's last one (`Seen`),
so each pong and each violation is counted once, live, and a session with nothing new costs
two attribute reads. The counters are the session's own (its `HealthCounters`, its frame
checker's), written on its threads: a read copies plain values and never waits on them.
A pong's latency and a violation are found again in their bounded histories by identity (the
object last taken), so nothing is taken twice or skipped however the history has rotated, as
long as fewer than its bound (1000) arrive between two reads.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .records import Health

EVERY = 0.25  # seconds between two reads of the open sessions

T = TypeVar("T")


@dataclass
class Seen:
    """What the reads of one session have taken so far."""

    pongs: int = 0
    last_pong: Any = None  # the newest latency taken (the float object itself)
    violations: int = 0
    last_violation: Any = None  # the newest Violation taken


def read(session: Any, seen: Seen) -> Health:
    """What a session's counters (`session.counters`, `session.checker`: a `session.Session`'s)
    say that `seen` has not taken yet (then taken)."""
    counters, checker = session.counters, session.checker
    health = Health()
    pongs, latencies = counters.pongs_sent, counters.pong_latencies
    health.server_pings, seen.pongs = pongs - seen.pongs, pongs
    if latencies and latencies[-1] is not seen.last_pong:
        health.pong_latencies = list(_after(tuple(latencies), seen.last_pong))
        seen.last_pong = health.pong_latencies[-1] if health.pong_latencies else seen.last_pong
    count, found = checker.count, checker.found
    health.violations, seen.violations = count - seen.violations, count
    if found and found[-1] is not seen.last_violation:
        new = _after(tuple(found), seen.last_violation)
        health.violation_rules = Counter(v.rule for v in new)
        seen.last_violation = new[-1] if new else seen.last_violation
    return health


def _after(history: Sequence[T], last: object) -> Sequence[T]:
    """The items of `history` after `last` (all of them if `last` is not there any more, or None)."""
    if last is not None:
        for i in range(len(history) - 1, -1, -1):
            if history[i] is last:
                return history[i + 1 :]
    return history
