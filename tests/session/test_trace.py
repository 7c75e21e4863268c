"""The trace: bounded memory, pairing, filters, exports, redaction, and switching it off."""

from __future__ import annotations

import gc
import json
import sys
import time
from pathlib import Path

import pytest
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.session.redaction import Redactor
from mcp_notebook.session.trace import OUT, Trace

TOKEN = "sk-test-0123456789abcdef"
RAW = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_server.py")]


def rss_bytes() -> int:
    return int(Path("/proc/self/statm").read_text().split()[1]) * 4096


@pytest.mark.slow
def test_a_million_frames_through_the_ring_buffer_keep_memory_flat():
    capacity = 10_000
    trace = Trace(capacity)
    for i in range(1_000_000):
        raw = f'{{"jsonrpc":"2.0","id":{i},"method":"ping"}}'
        trace.frame(OUT, "request", raw, {"jsonrpc": "2.0", "id": i, "method": "ping"}, method="ping", id=i)
        if i + 1 == 2 * capacity:  # full, and already turned over once
            gc.collect()
            blocks, rss = sys.getallocatedblocks(), rss_bytes()
    gc.collect()
    assert len(trace) == capacity and trace.capacity == capacity
    assert trace.dropped == 1_000_000 - capacity
    assert [e.id for e in trace.entries()[:2]] == [1_000_000 - capacity, 1_000_000 - capacity + 1]
    # 980,000 more frames of ~200 bytes each would be ~200 MB if anything kept them.
    assert sys.getallocatedblocks() - blocks < 10_000
    assert rss_bytes() - rss < 16 * 1024 * 1024


def test_requests_pair_with_responses_and_server_pings_with_our_pongs(sdk):
    sdk.request("tools/call", {"name": "ping_client", "arguments": {"count": 3}})
    pairs = sdk.trace.pairs()
    call = next(e for e in sdk.trace.frames("out") if e.method == "tools/call")
    reply_seq, (request, latency) = next((seq, p) for seq, p in pairs.items() if p[0] is call)
    reply = next(e for e in sdk.trace.entries() if e.seq == reply_seq)
    assert reply.direction == "in" and reply.id == call.id and latency == reply.monotonic - call.monotonic > 0
    server_pings = [e for e in sdk.trace.frames("in") if e.method == "ping"]
    assert len(server_pings) == 3
    for ping in server_pings:
        pong_seq = next(seq for seq, (req, _) in pairs.items() if req is ping)
        pong = next(e for e in sdk.trace.entries() if e.seq == pong_seq)
        assert pong.direction == "out" and pong.note == "pong" and pong.id == ping.id

    records = {r["seq"]: r for r in sdk.trace.to_records()}
    assert records[reply_seq]["reply_to"] == call.seq and records[reply_seq]["latency"] == latency
    assert records[call.seq]["latency"] is None


def test_filters_by_method_direction_kind_id_and_time(sdk):
    sdk.ping()
    middle = sdk.trace.last_seq
    cut = sdk.trace.entries()[-1].monotonic
    sdk.request("tools/list")
    sdk.ping()
    t = sdk.trace
    assert {e.method for e in t.filter(method="ping")} == {"ping"}
    assert len(t.filter(method="ping", direction="out")) == 2
    assert all(e.kind == "response" for e in t.filter(kind="response"))
    assert {e.direction for e in t.filter(direction=("in", "out"))} == {"in", "out"}
    listed = t.filter(method="tools/list", direction="out")[0]
    assert [e.direction for e in t.filter(id=listed.id, frames_only=True)] == ["out", "in"]
    assert all(e.seq > middle for e in t.filter(since=cut + 1e-9))
    assert all(e.seq <= middle for e in t.filter(until=cut))
    assert t.filter(within=3600) == t.entries()
    assert [e.seq for e in t.filter(last=2)] == [e.seq for e in t.entries()[-2:]]
    assert t.filter(kind="state")[0].note.startswith("protocol")


def test_jsonl_export_reads_back_with_load_trace(sdk, tmp_path):
    sdk.request("tools/call", {"name": "echo", "arguments": {"text": "héllo"}})
    path = tmp_path / "trace.jsonl"
    written = sdk.trace.to_jsonl(path)
    assert written == len(sdk.trace)
    loaded = mcp_notebook.load_trace(path)
    assert [e.seq for e in loaded] == [e.seq for e in sdk.trace]
    assert [e.message for e in loaded.frames()] == [e.message for e in sdk.trace.frames()]
    echo = loaded.filter(method="tools/call", direction="in")[0]
    assert echo.size == len(echo.raw.encode()) and "héllo" in echo.raw
    assert loaded.to_records() == json.loads(json.dumps(sdk.trace.to_records(), default=str))
    only_pings = tmp_path / "pings.jsonl"
    assert sdk.trace.to_jsonl(only_pings, method="tools/call") == 2
    (tmp_path / "bad.jsonl").write_text('{"seq": 1}\n')
    with pytest.raises(ValueError, match="line 1"):
        mcp_notebook.load_trace(tmp_path / "bad.jsonl")


def test_to_dataframe_without_pandas_says_what_to_install(monkeypatch):
    trace = Trace(10)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        trace.to_dataframe()


def test_to_dataframe(sdk):
    pd = pytest.importorskip("pandas")
    sdk.ping()
    frame = sdk.trace.to_dataframe(direction="in")
    assert isinstance(frame, pd.DataFrame)
    assert set(frame["direction"]) == {"in"} and "latency" in frame.columns
    assert frame["latency"].dropna().gt(0).all()


def test_secrets_are_redacted_in_frames_events_and_exports(sdk, tmp_path):
    sdk.trace.add_secret(TOKEN)
    result = sdk.request("tools/call", {"name": "echo", "arguments": {"text": f"Bearer {TOKEN}"}})
    assert TOKEN in json.dumps(result)  # the caller gets the real answer: only the record is redacted
    sdk.trace.event("http-request", note=f"Authorization: Bearer {TOKEN}", headers={"authorization": TOKEN})
    path = tmp_path / "t.jsonl"
    sdk.trace.to_jsonl(path)
    for text in (path.read_text(), json.dumps(sdk.trace.to_records(), default=str), repr(sdk.trace.entries())):
        assert TOKEN not in text
        assert "[redacted]" in text
    sent = sdk.trace.filter(method="tools/call", direction="out")[0]
    assert sent.message["params"]["arguments"]["text"] == "Bearer [redacted]"
    assert sent.size > len(sent.raw)  # the size is the size on the wire
    assert sdk.trace.redact(f"x{TOKEN}y") == "x[redacted]y"
    with pytest.raises(ValueError):
        sdk.trace.add_secret("")


def test_a_disabled_trace_records_no_frames_and_the_session_still_counts(sdk):
    sdk.trace.enabled = False
    before = len(sdk.trace)
    sdk.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}})
    rtt = sdk.ping()
    assert len(sdk.trace) == before
    health = sdk.health
    assert health.last_rtt == rtt and health.last_frame_in is not None and health.since_frame_in is not None
    sdk.trace.enabled = True
    sdk.ping()
    assert len(sdk.trace) == before + 2


def test_capacity_defaults_to_the_setting_and_never_grows():
    from mcp_notebook.api.connecting.options import ConnectOptions
    from mcp_notebook.api.connecting.settings import defaults
    from mcp_notebook.api.connecting.targets import prepare_session

    old = defaults.trace_capacity
    defaults.trace_capacity = 3
    try:
        _, session = prepare_session([sys.executable, "-c", "pass"], ConnectOptions(era="legacy"))
    finally:
        defaults.trace_capacity = old
    trace = session.trace
    for i in range(5):
        trace.frame(OUT, "notification", f'{{"n":{i}}}')
    assert trace.capacity == 3 and len(trace) == 3 and trace.dropped == 2
    assert "2 dropped" in repr(trace)
    with pytest.raises(ValueError):
        Trace(0)


def test_the_redactor_redacts_an_exception_in_place_with_its_causes():
    redactor = Redactor(["s3cr3t-token"])
    try:
        try:
            raise ValueError("inner s3cr3t-token")
        except ValueError as inner:
            raise mcp_notebook.ConnectionClosed("outer s3cr3t-token", stderr_tail=("line s3cr3t-token",)) from inner
    except mcp_notebook.ConnectionClosed as caught:
        error = caught
    assert redactor.exception(error) is error
    assert str(error) == "outer [redacted]" and error.reason == "outer [redacted]"
    assert error.stderr_tail == ("line [redacted]",)
    assert str(error.__cause__) == "inner [redacted]"
    mcp = mcp_notebook.McpError(1, "quoting s3cr3t-token", {"echo": ["s3cr3t-token"]})
    redactor.exception(mcp)
    assert "s3cr3t-token" not in repr((str(mcp), mcp.message, mcp.data, mcp.args))
    assert Redactor().exception(mcp) is mcp


def test_huge_frames_are_kept_clipped_with_their_size_and_the_trace_stays_within_its_bytes(monkeypatch):
    from mcp_notebook.api.connecting.settings import defaults

    monkeypatch.setattr(defaults, "trace_max_bytes", 4 << 20, raising=False)
    with mcp_notebook.connect(RAW, era="legacy", name="big") as conn:
        result = conn.request("tools/call", {"name": "log-flood", "arguments": {"count": 20, "size": 1 << 20}})
        assert json.loads(result["content"][0]["text"]) == "flooded"
        trace = conn.trace
        assert trace.dropped > 0 and trace.bytes <= 4 << 20
        assert sum(len(e.raw or "") + len(e.note or "") for e in trace) <= 4 << 20
        logs = trace.filter(method="notifications/message")
        assert logs and logs[-1].message["params"]["data"].startswith("000019")
        for entry in logs:
            assert entry.size > 1 << 20 and len(entry.raw) < 300_000  # the size on the wire, a clipped copy
            assert entry.raw.endswith(f"[clipped: {entry.size:,} characters]")
            data = entry.message["params"]["data"]
            assert len(data) < 300_000 and data.endswith(f"[clipped: {1 << 20:,} characters]")
        reply = trace.frames("in")[-1]
        assert reply.kind == "response" and reply.message["result"] == result
        trace.clear()
        assert len(trace) == 0 and trace.bytes == 0 and trace.dropped == 0
        assert conn.ping() > 0 and [(e.direction, e.method) for e in trace.frames()] == [("out", "ping"), ("in", "ping")]


def test_a_stderr_flood_cannot_push_frames_out_of_the_trace():
    with mcp_notebook.connect(RAW, era="legacy", name="noisy", trace_capacity=100) as conn:
        conn.request("tools/call", {"name": "stderr-flood", "arguments": {"count": 5000}})
        wait_until(lambda: conn.stderr[-1:] == ["stderr line 4999"], "all the stderr lines", 30)
        frames = [(e.direction, e.kind, e.method) for e in conn.trace.frames()]
        assert frames == [
            ("out", "request", "initialize"),
            ("in", "response", "initialize"),
            ("out", "notification", "notifications/initialized"),
            ("out", "request", "tools/call"),
            ("in", "response", "tools/call"),
        ]
        lines = conn.trace.filter(kind="stderr")
        assert len(lines) == 1000 and lines[-1].detail["line"] == "stderr line 4999"
        assert conn.trace.dropped == 4000
        assert [e.seq for e in conn.trace] == sorted(e.seq for e in conn.trace)  # one timeline, stderr merged in


def test_frames_and_events_take_the_times_someone_else_saw_them_at():
    trace = Trace()
    frame = trace.frame("out", "request", '{"id":1}', {"id": 1}, id=1, at=(12.5, 1_700_000_012.5))
    event = trace.event("stderr", line="hi", at=(13.0, 1_700_000_013.0))
    before = time.monotonic()
    now = trace.frame("in", "response", "{}")
    assert (frame.monotonic, frame.wall) == (12.5, 1_700_000_012.5)
    assert (event.monotonic, event.wall, event.detail) == (13.0, 1_700_000_013.0, {"line": "hi"})
    assert now.monotonic >= before  # without `at`: the clock, now
    assert [e.seq for e in trace.entries()] == [frame.seq, event.seq, now.seq]
