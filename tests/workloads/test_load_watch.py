"""The live reads of a load's sessions' health (`workloads.watch.read`): each read takes only
what is new since the last one, so every pong, its latency and every violation is counted once,
however often the session is read and however its bounded histories have rotated meanwhile
(a latency is lost only if more than the history's bound arrive between two reads)."""

from __future__ import annotations

from collections import deque
from types import SimpleNamespace

from mcp_notebook.workloads.records import Health
from mcp_notebook.workloads.watch import Seen, read


def a_session(kept: int = 3) -> SimpleNamespace:
    counters = SimpleNamespace(pongs_sent=0, pong_latencies=deque(maxlen=kept))
    checker = SimpleNamespace(count=0, found=deque(maxlen=kept))
    return SimpleNamespace(counters=counters, checker=checker)


def pong(session: SimpleNamespace, latency: float) -> None:
    session.counters.pongs_sent += 1
    session.counters.pong_latencies.append(latency)


def violation(session: SimpleNamespace, rule: str) -> None:
    session.checker.found.append(SimpleNamespace(rule=rule))
    session.checker.count += 1


def test_each_read_takes_only_what_is_new():
    session, seen, total = a_session(), Seen(), Health()
    assert read(session, seen) == Health()  # nothing yet: nothing taken
    pong(session, 0.001)
    violation(session, "result-shape")
    total.merge(read(session, seen))
    assert read(session, seen) == Health()  # read again, nothing new: nothing counted twice
    for latency in (0.002, 0.003, 0.004, 0.005):  # past the history's bound of 3: it rotates
        pong(session, latency)
    violation(session, "result-shape")
    violation(session, "unknown-id")
    total.merge(read(session, seen))
    pong(session, 0.006)  # the history rotates again, the newest taken still in it: only the new one is taken
    total.merge(read(session, seen))
    assert total.server_pings == 6  # exact, whatever the histories kept
    assert total.pong_latencies == [0.001, 0.003, 0.004, 0.005, 0.006]  # 0.002 rotated out before a read: the bound
    assert total.violations == 3 and total.violation_rules == {"result-shape": 2, "unknown-id": 1}


def test_equal_values_are_told_apart_by_identity():
    session, seen = a_session(kept=10), Seen()
    first, again = 0.25, float("0.25")  # equal, not the same object
    pong(session, first)
    assert read(session, seen).pong_latencies == [first]
    pong(session, again)
    assert read(session, seen).pong_latencies == [again]


def test_a_loads_pong_latencies_are_bounded_and_its_counts_and_max_exact(monkeypatch):
    """A server that pings without end must not grow the load's memory: past the bound the
    latencies are only counted, and the slowest is still known."""
    from mcp_notebook.workloads import records

    monkeypatch.setattr(records, "PONGS_KEPT", 3)
    total = Health()
    for latency in (0.001, 0.002, 0.003, 0.004, 0.009):
        total.merge(Health(server_pings=1, pong_latencies=[latency]))
    assert total.pong_latencies == [0.001, 0.002, 0.003] and total.server_pings == 5 and total.pong_max == 0.009
