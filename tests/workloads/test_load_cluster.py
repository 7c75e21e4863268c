"""`mcp_notebook.load` on a real Dask `LocalCluster` of two worker processes (started once for the
module): the sessions split over the workers, every call streamed back and counted once, a server
killed mid-load gives failures, Ctrl-C and a dead server stop every worker's share, and no server
process outlives its share (the workers are this test's children: their servers are ours to see)."""

from __future__ import annotations

import _thread
import sys
import threading
from collections.abc import Iterator
from multiprocessing import resource_tracker
from typing import Any

import pytest
from support.processes import descendants
from support.servers import server_everything_cmd, slowing_server_cmd
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.api.display import frontend
from mcp_notebook.demo_server import start_http
from mcp_notebook.workloads.cluster import split
from mcp_notebook.workloads.engine import Plan

distributed = pytest.importorskip("distributed")
pytestmark = [pytest.mark.node]  # server-everything over HTTP, beside the demo server

DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]
ECHO = {"tool": "echo", "arguments": {"text": "hi"}}


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=":0"
    )
    with cluster, distributed.Client(cluster) as made:
        yield made
    # The worker processes' multiprocessing helper outlives them, by design, until its parent exits: stop it here.
    resource_tracker._resource_tracker._stop()


def servers() -> set[int]:
    return {pid for pid, cmd in descendants().items() if "demo_server" in cmd or "slowing_server" in cmd or "everything" in cmd}


@pytest.fixture
def no_servers_left() -> Iterator[None]:
    before = servers()
    yield
    wait_until(lambda: not servers() - before, "the shares' server processes to exit")


def test_the_plan_is_shared_out_and_adds_up():
    shares = split(Plan(sessions=5, calls=101, rate=50.0), 2)
    assert [(s.first, s.sessions, s.calls) for s in shares] == [(0, 3, 61), (3, 2, 40)]
    assert sum(s.rate or 0 for s in shares) == pytest.approx(50.0)
    assert [s.sessions for s in split(Plan(sessions=1, duration=1.0), 2)] == [1]  # no empty share


def test_every_call_streams_back_once_over_stdio(client, no_servers_left):
    report = mcp_notebook.load(DEMO, ECHO, sessions=4, calls=80, cluster=client)
    frame = report.to_pandas()
    assert len(frame) == 80 and frame["ok"].all()
    assert set(frame["session"]) == {0, 1, 2, 3} and report.where == "2 Dask workers"
    assert report.health.sessions == 4


def test_server_everything_over_stdio_on_the_workers(client, no_servers_left):
    echo = {"tool": "echo", "arguments": {"message": "m"}}
    report = mcp_notebook.load(server_everything_cmd(), echo, sessions=2, calls=40, cluster=client)
    assert len(report.calls) == 40 and all(c.ok for c in report.calls)  # every call accounted for once
    assert sorted({c.session for c in report.calls}) == [0, 1] and report.health.sessions == 2


def test_a_server_that_slows_down_shows_in_the_merged_percentiles(client, no_servers_left):
    """Each worker's share has a server of its own, each slowing after its 20th call: the merged
    report's slow tail is theirs (the server slept: a lower bound, not a race)."""
    server = slowing_server_cmd("--slow-after", "20", "--delay", "0.3")
    report = mcp_notebook.load(server, {"tool": "work", "arguments": {"n": 1}}, sessions=2, calls=50, cluster=client)
    assert len(report.calls) == 50
    for session in (0, 1):
        ordered = sorted((c for c in report.calls if c.session == session), key=lambda c: c.start)
        assert all(c.latency >= 0.3 for c in ordered[20:]) and len(ordered) > 20
    (row,) = report.rows()
    assert row.p95 >= 0.3 and row.p99 >= 0.3


def test_over_http_server_everything_and_the_demo_server(client, url, no_servers_left):
    everything = mcp_notebook.load(url, {"tool": "echo", "arguments": {"message": "m"}}, sessions=4, calls=40, cluster=client)
    process, demo_url = start_http(era="both")
    with process:
        modern = mcp_notebook.load(demo_url, ECHO, sessions=2, calls=20, era="modern", cluster=client.scheduler.address)
    assert [len(everything.calls), len(modern.calls)] == [40, 20]
    assert all(c.ok for c in everything.calls + modern.calls)


def test_a_server_killed_mid_load_gives_failures_on_the_workers(client, no_servers_left):
    report = mcp_notebook.load(slowing_server_cmd("--exit-after", "5"), {"tool": "work"}, sessions=2, calls=30, cluster=client)
    assert len(report.calls) == 30
    assert any(not c.ok for c in report.calls) and report.health.reconnects >= 1


def test_ctrl_c_stops_every_workers_share(client, monkeypatch, no_servers_left):
    seen: list[Any] = []

    class Watching(frontend.FrontEnd):
        def load_view(self, live: Any) -> Any:
            seen.append(live)
            return None

    monkeypatch.setattr(frontend, "current", Watching)
    before, running = servers(), set[int]()

    def interrupt() -> None:
        wait_until(lambda: seen and len(seen[0].tally) >= 20, "20 calls streamed back")
        wait_until(lambda: len(servers() - before) == 2, "each worker's share to run its server")  # one may lag
        running.update(servers() - before)
        _thread.interrupt_main()

    helper = threading.Thread(target=interrupt)
    helper.start()
    report = mcp_notebook.load(DEMO, ECHO, sessions=2, duration=120, cluster=client)
    helper.join()
    assert report.stopped == "Ctrl-C" and len(report.calls) >= 20
    assert report.health.sessions == 2  # both shares came back with their health: they ended, not abandoned
    assert len(running) == 2  # Ctrl-C came while each worker's share ran its server ...
    wait_until(lambda: not running & servers(), "the workers' server processes to exit")  # ... and both are gone


def test_server_pings_answered_stream_back_live_from_the_shares(client, monkeypatch, no_servers_left):
    """The shares send their sessions' health with their records: the kernel's live view counts
    the pongs on the workers while the shares still run (the calls= bound is far off)."""
    seen: list[Any] = []
    shown: list[tuple[bool, int]] = []

    class Watching(frontend.FrontEnd):
        def load_view(self, live: Any) -> Any:
            seen.append(live)
            return None

    monkeypatch.setattr(frontend, "current", Watching)

    def look_then_interrupt() -> None:
        try:
            wait_until(lambda: seen and (seen[0].tally.health.server_pings or seen[0].done), "a ping answered, or the end")
            shown.append((seen[0].done, seen[0].tally.health.server_pings))
        finally:
            _thread.interrupt_main()

    helper = threading.Thread(target=look_then_interrupt)
    helper.start()
    report = mcp_notebook.load([*DEMO, "--ping-interval", "0.05"], ECHO, sessions=2, calls=1_000_000, cluster=client)
    helper.join()
    ((done, pings),) = shown
    assert not done and pings > 0 and report.stopped == "Ctrl-C"
    assert report.health.server_pings >= pings and len(report.health.pong_latencies) == report.health.server_pings
    assert report.health.sessions == 2  # each share's health sent once: the merge counts no session twice


def test_a_dead_server_stops_the_load_with_one_line(client, no_servers_left):
    with pytest.raises(mcp_notebook.UsageError) as raised:
        mcp_notebook.load(["/nonexistent/server"], ECHO, sessions=2, calls=4, cluster=client)
    assert "cannot load /nonexistent/server: its first session failed" in str(raised.value)
    assert "\n" not in str(raised.value)


def test_processes_makes_a_local_cluster_for_the_load_and_closes_it(client, no_servers_left):  # client: its teardown
    def workers() -> set[int]:
        return {pid for pid, cmd in descendants().items() if "spawn_main" in cmd}

    before = workers()  # the module's cluster's
    report = mcp_notebook.load(DEMO, ECHO, sessions=2, calls=10, processes=2)
    assert len(report.calls) == 10 and report.where == "2 Dask workers"
    wait_until(lambda: not workers() - before, "the load's own workers to exit")
