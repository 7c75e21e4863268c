"""`mcp_notebook.load` in the kernel, against real servers: the counts add up (every call recorded
once), a server that slows down shows in the percentiles, a server that dies mid-load gives
failures and reconnects (not a hang), Ctrl-C returns the partial report, and no server process
is left behind."""

from __future__ import annotations

import _thread
import asyncio
import re
import sys
import threading
from typing import Any

import pytest
from support.processes import descendants
from support.servers import slowing_server_cmd
from support.waiting import until, wait_until

import mcp_notebook
from mcp_notebook.api.display import frontend
from mcp_notebook.demo_server import start_http
from mcp_notebook.workloads.engine import Engine, Plan, drive
from mcp_notebook.workloads.records import Tally
from mcp_notebook.workloads.workload import as_workload

DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]
ECHO = {"tool": "echo", "arguments": {"text": "hi"}}


def server_processes() -> dict[int, str]:
    return {
        pid: cmd for pid, cmd in descendants().items() if "demo_server" in cmd or "slowing_server" in cmd or "everything" in cmd
    }


@pytest.fixture
def no_servers_left():
    before = set(server_processes())
    yield
    wait_until(lambda: not set(server_processes()) - before, "the load's server processes to exit")


def test_calls_n_gives_n_records_one_per_call(no_servers_left):
    report = mcp_notebook.load(DEMO, ECHO, sessions=3, calls=60)
    frame = report.to_pandas()
    assert len(frame) == 60 == len(report.calls)
    assert list(frame.columns[:7]) == ["session", "method", "tool", "start", "latency", "ok", "error"]
    assert frame["ok"].all() and set(frame["tool"]) == {"echo"} and set(frame["method"]) == {"tools/call"}
    assert set(frame["session"]) == {0, 1, 2} and report.health.sessions == 3  # all open before the first call
    summary = report.summary()
    assert summary.loc[0, "calls"] == 60 and summary.loc[0, "errors"] == 0
    assert "60 calls" in repr(report) and "<table" in report._repr_html_()


def test_demo_server_over_http_in_both_eras():
    process, url = start_http(era="both")
    with process:
        legacy = mcp_notebook.load(url, ECHO, sessions=4, calls=40, era="legacy")
        modern = mcp_notebook.load(url, ECHO, sessions=4, calls=40, era="modern")
    assert len(legacy.calls) == len(modern.calls) == 40
    assert all(c.ok for c in legacy.calls + modern.calls)


def test_a_server_that_slows_down_shows_in_the_percentiles(no_servers_left):
    server = slowing_server_cmd("--slow-after", "20", "--delay", "0.3")
    report = mcp_notebook.load(server, {"tool": "work", "arguments": {"n": 1}}, sessions=1, calls=30)
    ordered = sorted(report.calls, key=lambda c: c.start)
    assert all(c.latency >= 0.3 for c in ordered[20:])  # the server slept: a lower bound, not a race
    (row,) = report.rows()
    assert row.p95 >= 0.3 and row.p99 >= 0.3


def test_a_server_killed_mid_load_gives_failures_and_reconnects_not_a_hang(no_servers_left):
    server = slowing_server_cmd("--exit-after", "5")
    report = mcp_notebook.load(server, {"tool": "work"}, sessions=2, calls=30)
    assert len(report.calls) == 30  # every call accounted for, the failed ones too
    failed = [c for c in report.calls if not c.ok]
    assert failed and all(c.code is None and c.error for c in failed)
    assert report.health.reconnects >= 1
    assert "failed" in {row[0] for row in _errors(report)}


def test_a_crashing_http_server_counts_failed_sessions():
    process, url = start_http()
    with process:

        def crash_on_the_tenth(conn: Any, made: list[int] = []) -> None:  # noqa: B006 - the count across calls
            made.append(1)
            conn.call_tool("faults", {"crash": True} if len(made) == 10 else {})

        report = mcp_notebook.load(url, crash_on_the_tenth, sessions=2, duration=60, timeout=5)
    assert report.errors >= 1 and report.health.failed_sessions == 2
    assert report.rows()[0].tool == "crash_on_the_tenth"


def test_ctrl_c_stops_the_load_and_returns_what_was_recorded(monkeypatch, no_servers_left):
    seen = _watching(monkeypatch)

    def interrupt() -> None:
        wait_until(lambda: seen and len(seen[0].tally) >= 20, "20 calls")
        _thread.interrupt_main()

    helper = threading.Thread(target=interrupt)
    helper.start()
    report = mcp_notebook.load(DEMO, ECHO, sessions=2, duration=120)
    helper.join()
    assert report.stopped == "Ctrl-C" and len(report.calls) >= 20
    assert mcp_notebook.connections() == {} or not any(n.startswith("load-") for n in mcp_notebook.connections())


def test_server_pings_answered_show_live_before_the_load_ends(monkeypatch, no_servers_left):
    """The pinging demo server: the live view counts the pongs while the sessions are still open
    (the calls= bound is far off; the load is stopped once the view shows them)."""
    seen = _watching(monkeypatch)
    shown: list[tuple[bool, str, str]] = []

    def pinged() -> bool:
        return bool(seen) and seen[0].tally.health.server_pings > 0

    def look_then_interrupt() -> None:
        try:
            wait_until(lambda: pinged() or (seen and seen[0].done), "a server ping answered, or the load's end")
            live = seen[0]
            shown.append((live.done, live.text(), live.html()))
        finally:
            _thread.interrupt_main()

    helper = threading.Thread(target=look_then_interrupt)
    helper.start()
    report = mcp_notebook.load([*DEMO, "--ping-interval", "0.05"], ECHO, sessions=2, calls=1_000_000)
    helper.join()
    ((done, text, html),) = shown
    assert not done and report.stopped == "Ctrl-C"
    assert re.search(r"running, .*\nhealth: [1-9][\d,]* server pings? answered \(median [\d.]+ ms, max", text)
    assert "server ping" in html
    assert report.health.server_pings >= int(text.split("health: ")[1].split()[0].replace(",", ""))
    assert len(report.health.pong_latencies) == report.health.server_pings  # each pong counted once, with its latency


class Planned:
    """A clock that stands still and a sleep that returns at once, noting what it was asked:
    the engine's pacing shows as the waits it planned, with no timing in the test."""

    def __init__(self, tally: Tally) -> None:
        self.tally = tally
        self.waits: list[float] = []
        self.open_then: list[int] = []  # sessions opened when each wait was asked

    def clock(self) -> float:
        return 100.0

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.open_then.append(self.tally.health.sessions)
        await asyncio.sleep(0)


def planned_run(plan: Plan, workload: Any = ECHO, tally: Tally | None = None) -> tuple[Planned, Tally]:
    tally = Tally() if tally is None else tally
    planned = Planned(tally)
    engine = Engine(DEMO, as_workload(workload), plan, {"apps": False}, tally, clock=planned.clock, sleep=planned.sleep)
    assert drive(engine) is None
    return planned, tally


def test_rate_spaces_the_calls_over_all_sessions(no_servers_left):
    """rate=4 calls/s over 2 sessions: call k (in the order they claim their turn) starts k/4 s
    after the load began, whichever session makes it: one schedule shared, not one per session."""
    planned, tally = planned_run(Plan(sessions=2, calls=12, rate=4.0))
    assert sorted(planned.waits) == [k / 4 for k in range(1, 12)]  # call 0 goes at once
    assert len(tally) == 12 and {c.session for c in tally.calls()} == {0, 1}


def test_ramp_opens_the_sessions_one_by_one_over_its_seconds(no_servers_left):
    """ramp=3 s over 4 sessions: the first opens (and calls) at once, session k at k*3/4 s;
    each wait is planned while only the first is open (without a ramp all open before any call)."""
    tally = Tally()

    async def once_all_are_open(conn: Any) -> None:  # so no session spends the calls before the last opens
        await until(lambda: tally.health.sessions == 4, "the ramp's sessions to open")
        await conn.aio.call_tool("echo", {"text": "hi"})

    planned, _ = planned_run(Plan(sessions=4, calls=8, ramp=3.0), once_all_are_open, tally)
    assert sorted(planned.waits) == [0.75, 1.5, 2.25]
    assert planned.open_then == [1, 1, 1]
    assert {c.session for c in tally.calls()} == {0, 1, 2, 3} and all(c.ok for c in tally.calls())
    unramped, _ = planned_run(Plan(sessions=4, calls=8))
    assert unramped.waits == []


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"workload": {"tool": "nope"}}, "has no tool 'nope' (its tools: add, "),
        ({"target": ["/nonexistent/server"]}, "cannot load /nonexistent/server: its first session failed: "),
        ({"sessions": 0}, "sessions= is a number of sessions (1 or more), not 0"),
        ({"calls": None}, "say when to stop: duration= (seconds) or calls= (in all), or both"),
        ({"workload": 42}, "workload: give a tool call"),
        ({"nmae": "x"}, "load() got an unexpected option 'nmae'"),
    ],
)
def test_bad_input_is_one_line(arguments: dict[str, Any], message: str, no_servers_left):
    given = {"target": DEMO, "workload": ECHO, "sessions": 2, "calls": 4, **arguments}
    with pytest.raises(mcp_notebook.UsageError) as raised:
        mcp_notebook.load(given.pop("target"), given.pop("workload"), **given)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_cassette_replays_and_one_of_another_server_is_refused(tmp_path, no_servers_left):
    with mcp_notebook.connect(DEMO, name="recorder", era="legacy") as conn:
        conn.call_tool("echo", {"text": "a"})
        conn.call_tool("add", {"a": 1, "b": 2})
        conn.trace.to_jsonl(tmp_path / "demo.jsonl")
    report = mcp_notebook.load(DEMO, tmp_path / "demo.jsonl", sessions=2, calls=20)
    assert len(report.calls) == 20 and all(c.ok for c in report.calls)
    assert {c.tool for c in report.calls} >= {"echo", "add"}
    with pytest.raises(
        mcp_notebook.UsageError, match="was recorded against the server 'mcp-notebook-demo'.*'slowing': replay a cassette"
    ):
        mcp_notebook.load(slowing_server_cmd(), tmp_path / "demo.jsonl", sessions=1, calls=2)


def _watching(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The loads' live views (`workloads.run.Live`), as the front end is handed them."""
    seen: list[Any] = []

    class Watching(frontend.FrontEnd):
        def load_view(self, live: Any) -> Any:
            seen.append(live)
            return None

    monkeypatch.setattr(frontend, "current", Watching)
    return seen


def _errors(report: Any) -> list[tuple[str, int, str]]:
    from mcp_notebook.workloads.records import errors_by_code

    return errors_by_code(report.calls)
