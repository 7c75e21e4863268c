"""`conn.map` against Python peers: a FastMCP server that sees how many calls meet in flight and
fails rows by their argument, and the demo server with its fault switches (dropped responses,
a crash mid-batch, a slow tool interrupted by Ctrl-C), over stdio and HTTP."""

from __future__ import annotations

import _thread
import asyncio
import sys
import threading

import pytest
from support.features import sent
from support.servers import batch_server_cmd
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.api.batch.run import MAX_BACKOFF, backoff

DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]


@pytest.fixture
def batch():
    with mcp_notebook.connect(batch_server_cmd(), name="batch") as conn:
        yield conn


@pytest.fixture
def demo():
    with mcp_notebook.connect(DEMO, name="demo") as conn:
        yield conn


def test_calls_overlap_up_to_the_concurrency_and_come_back_in_row_order(batch):
    """Groups of 4 calls each wait for all four to be in flight at once: with concurrency=4 every
    group fills (run one at a time, each call would wait until its timeout), and the server never
    sees more than 4 together."""
    rows = [{"group": f"g{i // 4}", "size": 4} for i in range(12)]
    result = batch.map("meet", rows, concurrency=4, timeout=30)
    assert [o.status for o in result] == ["ok"] * 12
    assert {o.result.text for o in result} == {"4"}  # the most the server saw in flight at once
    assert [o.index for o in result] == list(range(12)) and {o.attempts for o in result} == {1}
    calls = sent(batch, "tools/call")
    assert [c["params"]["arguments"]["group"] for c in calls] == [r["group"] for r in rows]  # started in row order
    assert all("progressToken" not in (c["params"].get("_meta") or {}) for c in calls)  # no per-row progress


def test_one_failing_row_never_stops_the_others(batch):
    result = batch.map("grade", [{"n": n} for n in range(9)], retries=3, backoff=0.05)
    assert [o.status for o in result] == ["ok", "failed", "failed"] * 3
    assert [o.result.text for o in result.ok] == ["0", "6", "12"]
    tool_error, rpc_error = result[1], result[2]
    assert tool_error.error == "odd one out: 1" and tool_error.result.is_error
    assert rpc_error.error == "McpError: tools/call: refused: 2 (code -32000)" and rpc_error.result is None
    assert {o.attempts for o in result} == {1}  # a server's answer, error or not, is never retried
    assert len(sent(batch, "tools/call")) == 9
    frame = result.to_pandas()
    assert list(frame.columns[:4]) == ["ok", "result", "error", "latency"]
    assert frame["result"].tolist()[:3] == [{"result": 0}, "odd one out: 1", None]  # values: structured, else text
    assert frame["ok"].tolist() == [True, False, False] * 3 and frame.loc[4, "error"] == "odd one out: 4"


def test_the_summary_quotes_the_first_errors_inert(batch):
    hostile = "\x1b]8;;http://evil\x07click\x1b]8;;\x07 <img src=x onerror=alert(1)>\x1b[2J"
    result = batch.map("fail", [{"text": hostile}] * 5)
    text, html = result._text(), result._repr_html_()
    assert "\x1b" not in text and "\x07" not in text and "click <img src=x onerror=alert(1)>" in text
    assert "<img" not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert text.count("row ") == 3 and "… and 2 more errors" in text
    assert text.startswith("map fail: 5 rows in ") and "0 ok, 5 failed" in text


def test_timeouts_are_retried_with_backoff_only_when_asked(demo):
    """The demo server drops a quarter of its responses (its RNG seeded): the calls that time out
    fail the row unless `retries` asks, then they are sent again until answered."""
    demo.call_tool("faults", drop_percent=25, seed=7)
    rows = [{"text": f"row {i}"} for i in range(16)]
    once = demo.map("echo", rows, concurrency=8, timeout=1)
    timed_out = "tools/call: no response or progress within 1 s"
    assert once.failed and all(o.error.startswith(timed_out) for o in once.failed), once.failed
    assert {o.attempts for o in once} == {1}
    again = demo.map("echo", rows, concurrency=8, timeout=1, retries=8, backoff=0.05)
    assert [o.result.text for o in again] == [f"row {i}" for i in range(16)]
    assert max(o.attempts for o in again) > 1


def test_the_backoff_doubles_with_jitter_between_its_floor_and_ceiling():
    for attempt in range(1, 12):
        waits = [backoff(0.05, attempt) for _ in range(50)]
        step = min(MAX_BACKOFF, 0.05 * 2 ** (attempt - 1))
        assert all(step <= wait <= min(MAX_BACKOFF, 2 * step) for wait in waits)


def test_ctrl_c_cancels_the_calls_in_flight_and_returns_what_finished(demo):
    rows = [{"seconds": 0, "steps": 1}] * 2 + [{"seconds": 600, "steps": 1}] * 4

    def press_when_two_answered():
        wait_until(lambda: len(demo.in_flight()) == 4 and _answered(demo) == 2, "two rows answered, four in flight")
        _thread.interrupt_main()

    pressing = threading.Thread(target=press_when_two_answered)
    pressing.start()
    try:
        result = demo.map("slow", rows, concurrency=6)
    finally:
        pressing.join()
    assert [o.status for o in result] == ["ok", "ok"] + ["cancelled"] * 4
    assert len(result.cancelled) == 4 and result.cancelled[0].error == "cancelled"
    calls = sent(demo, "tools/call")
    cancelled = {c["params"]["requestId"] for c in sent(demo, "notifications/cancelled")}
    assert cancelled == {c["id"] for c in calls[2:]}  # the server was told of each call in flight
    assert demo.in_flight() == [] and demo.call_tool("echo", text="still usable").text == "still usable"


def _answered(conn) -> int:
    ids = {e.id for e in conn.trace.frames("out") if e.method == "tools/call"}
    return sum(e.id in ids for e in conn.trace.frames("in") if e.kind == "response")


def test_a_server_that_dies_mid_batch_fails_the_rest_without_a_hang(demo):
    rows = [{}] * 3 + [{"crash": True}] + [{}] * 6
    result = demo.map("faults", rows, concurrency=1, retries=2, backoff=0.05)
    assert [o.status for o in result] == ["ok"] * 3 + ["failed"] * 7
    assert "exited" in result[3].error and {o.attempts for o in result[3:]} == {1}  # a closed connection: no retry
    assert len(sent(demo, "tools/call")) == 4  # nothing more was sent to the dead server


def test_over_http_with_the_awaitable_twin():
    process, url = demo_server.start_http()
    try:
        with mcp_notebook.connect(url, name="demo-http") as conn:
            rows = [{"a": i, "b": i * 10} for i in range(30)]

            async def both():
                return await conn.aio.map("add", rows, concurrency=16)

            result = asyncio.run(both())
            assert [o.result.structured for o in result] == [{"sum": i * 11} for i in range(30)]
            assert len(sent(conn, "tools/call")) == 30
    finally:
        process.stop()


def test_cancelling_the_awaitable_twin_cancels_its_calls(demo):
    async def cancelled_once_running():
        task = asyncio.ensure_future(demo.aio.map("slow", [{"seconds": 600, "steps": 1}] * 3))
        while len(demo.in_flight()) < 3:
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancelled_once_running())
    calls = sent(demo, "tools/call")
    assert {c["params"]["requestId"] for c in sent(demo, "notifications/cancelled")} == {c["id"] for c in calls}


def test_what_cannot_be_a_batch_is_one_line_before_any_call(demo):
    with pytest.raises(mcp_notebook.ToolArgumentError, match="unknown tool 'ecko'; did you mean 'echo'"):
        demo.map("ecko", [{"text": "a"}])
    with pytest.raises(mcp_notebook.UsageError, match="rows must be an iterable of dicts"):
        demo.map("echo", {"text": "a"})
    with pytest.raises(mcp_notebook.UsageError, match="row 1 is str, not a dict of arguments"):
        demo.map("echo", [{"text": "a"}, "b"])
    with pytest.raises(mcp_notebook.UsageError, match="concurrency must be a whole number from 1"):
        demo.map("echo", [{"text": "a"}], concurrency=0)
    with pytest.raises(mcp_notebook.UsageError, match=r"arguments\(row 0\) raised KeyError"):
        demo.map("echo", ["a"], arguments=lambda row: {}["text"])
    assert sent(demo, "tools/call") == []
    result = demo.map("echo", ["a", "b"], arguments=lambda word: {"text": word * 2})
    assert [o.result.text for o in result] == ["aa", "bb"]


def test_one_line_shows_the_batch_in_a_terminal(shown_as, demo, capsys):
    shown_as("ipython")
    demo.map("echo", [{"text": str(i)} for i in range(40)], concurrency=4)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.endswith("\x1b[K\n")
    assert err.rsplit("\r", 1)[1].startswith("map echo: 40 rows in ") and "40 ok" in err
    demo.set_log_level("info")
    demo.map("log", [{"message": f"line {i}"} for i in range(5)])  # a row's log lines stay in the log
    assert capsys.readouterr().out == "" and [r.data for r in demo.logs][-5:] == [f"line {i}" for i in range(5)]
    shown_as("script")
    demo.map("echo", [{"text": "quiet"}])
    assert capsys.readouterr().err == ""
