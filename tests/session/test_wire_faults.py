"""Wire faults that real peers cannot produce, acted out by tests/servers/raw_server.py."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

import mcp_notebook

RAW = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_server.py")]


def scenario(conn: mcp_notebook.Connection, name: str, **kwargs: object) -> object:
    result = conn.request("tools/call", {"name": name}, **kwargs)
    return json.loads(result["content"][0]["text"])


@pytest.fixture
def raw():
    conn = mcp_notebook.connect(RAW, era="legacy", name="raw")
    yield conn
    conn.close()


def pongs(conn: mcp_notebook.Connection) -> list:
    return [e for e in conn.trace.frames("out") if e.kind == "response" and e.note == "pong"]


def test_ping_with_colliding_id_is_answered_and_not_taken_for_the_response(raw):
    got = scenario(raw, "collide")
    # The server saw our pong for its ping, whose id equals our awaited request's id ...
    awaited_id = got["pong"]["id"]
    assert got["pong"] == {"jsonrpc": "2.0", "id": awaited_id, "result": {}}
    # ... and we returned the real response, not the ping, to the caller.
    incoming = raw.trace.frames("in")
    assert [e.kind for e in incoming if e.id == awaited_id][-2:] == ["request", "response"]
    assert raw.health.server_pings == raw.health.pongs_sent == 1


def test_pings_with_ids_that_are_not_strings_or_integers_get_no_pong(raw):
    got = scenario(raw, "bad-ids")
    # The first line the server read back is the pong for the one good ping.
    assert got["first_reply"] == {"jsonrpc": "2.0", "id": "good", "result": {}}
    assert [e.id for e in pongs(raw)] == ["good"]
    invalid = [e for e in raw.trace.frames("in") if e.kind == "invalid"]
    assert [e.message["id"] for e in invalid] == [None, True, 1.5, {"a": 1}, [1]]
    assert all("string or an integer" in e.note for e in invalid)


def test_garbage_lines_are_recorded_and_the_session_survives(raw):
    assert scenario(raw, "garbage") == "survived"
    invalid = [e for e in raw.trace.frames("in") if e.kind == "invalid"]
    assert len(invalid) == 9
    assert raw.health.invalid_frames == 9
    assert any("invalid JSON" in e.note for e in invalid)
    assert raw.ping() > 0
    assert raw.state == "ready"


def test_a_pong_that_cannot_be_written_does_not_fail_the_awaited_request(raw):
    assert scenario(raw, "pong-to-closed-stdin") == "answered"
    assert raw.health.pong_failures == 1
    assert raw.health.pongs_sent == 0
    dropped = raw.trace.filter(kind="reply-dropped")
    assert [e.detail["id"] for e in dropped] == ["after-close"]
    assert raw.wait_closed(timeout=30)
    assert raw.health.exit_code == 0


def test_ping_during_the_handshake_is_answered():
    conn = mcp_notebook.connect([*RAW, "--ping-during-handshake"], era="legacy", name="hs")
    try:
        assert conn.health.pongs_sent == 1
        assert conn.stderr == ['handshake pong: {"jsonrpc": "2.0", "id": "hs-ping", "result": {}}']
        kinds = [(e.direction, e.method or e.kind) for e in conn.trace.frames()]
        assert kinds[:3] == [("out", "initialize"), ("in", "ping"), ("out", "response")]
    finally:
        conn.close()


def test_batches_are_served_in_2025_03_26():
    conn = mcp_notebook.connect([*RAW, "--version", "2025-03-26"], era="legacy", name="batch")
    try:
        assert conn.protocol_version == "2025-03-26"
        got = scenario(conn, "batch")
        assert got["reply"] == {"jsonrpc": "2.0", "id": "in-batch", "result": {}}
    finally:
        conn.close()


def test_batches_are_invalid_in_later_versions(raw):
    with pytest.raises(mcp_notebook.RequestTimeout):
        scenario(raw, "batch", timeout=1)
    batch = [e for e in raw.trace.frames("in") if isinstance(e.message, list)]
    assert batch[0].kind == "invalid" and "2025-11-25" in batch[0].note
    assert pongs(raw) == []


def test_an_unknown_protocol_version_disconnects_with_a_clear_error():
    with pytest.raises(mcp_notebook.HandshakeError, match="'1999-01-01'.*does not speak"):
        mcp_notebook.connect([*RAW, "--version", "1999-01-01"], era="legacy", name="v")
    assert "v" not in mcp_notebook.connections()


def test_each_legacy_version_is_accepted_as_a_counter_offer():
    for version in ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"):
        with mcp_notebook.connect([*RAW, "--version", version], era="legacy", name="v") as conn:
            assert conn.protocol_version == version


def test_a_silent_server_times_out_the_handshake_without_a_cancel_for_initialize():
    with pytest.raises(mcp_notebook.HandshakeError, match="did not answer initialize"):
        mcp_notebook.connect([*RAW, "--silent"], era="legacy", name="silent", timeout=0.5)


def test_request_timeout_sends_cancelled_and_ignores_the_late_response(raw):
    # In 2025-11-25 the batch is invalid, so the server waits for a pong that never comes.
    with pytest.raises(mcp_notebook.RequestTimeout):
        scenario(raw, "batch", timeout=0.5)
    request = [e for e in raw.trace.frames("out") if e.method == "tools/call"][-1]
    cancels = [e for e in raw.trace.frames("out") if e.method == "notifications/cancelled"]
    assert [e.message["params"]["requestId"] for e in cancels] == [request.id]
    # The server reads our cancel as the line it waited for and answers late; a ping
    # round trip after that proves the late answer was read and ignored.
    assert raw.ping() > 0
    late = [e for e in raw.trace.frames("in") if e.id == request.id and e.kind == "response"]
    assert len(late) == 1 and late[0].note.startswith("late response, ignored")
    ids = [e.id for e in raw.trace.frames("out") if e.kind == "request"]
    assert len(ids) == len(set(ids))


def test_a_line_over_the_message_limit_is_dropped_whole_and_the_session_goes_on(monkeypatch):
    from mcp_notebook.api.connecting.settings import defaults

    monkeypatch.setattr(defaults, "max_frame_bytes", 1 << 20, raising=False)  # the one limit, HTTP's too
    with mcp_notebook.connect(RAW, era="legacy", name="long") as conn:
        result = conn.request("tools/call", {"name": "long-line", "arguments": {"size": 3 << 20}})
        assert json.loads(result["content"][0]["text"]) == "survived"
        dropped = conn.trace.filter(kind="oversized-frame")
        assert len(dropped) == 1 and "over 1 MB" in dropped[0].note
        assert conn.health.invalid_frames == 0  # no tail of the dropped line was read as a frame
        assert not conn.logs


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        ("error-string", "error is not an object with an integer code"),
        ("result-and-error", "it has both result and error"),
        ("no-jsonrpc", 'missing "jsonrpc": "2.0"'),
    ],
)
def test_a_malformed_answer_fails_its_request_at_once_saying_what_is_wrong(raw, shape, problem):
    # The request would wait 60 s for an answer that has come already; it fails when it arrives.
    with pytest.raises(mcp_notebook.ProtocolViolation) as caught:
        raw.request("tools/call", {"name": "malformed", "arguments": {"shape": shape}}, timeout=60)
    assert str(caught.value) == f"tools/call: the server answered with a malformed response ({problem})"
    request = raw.trace.filter(method="tools/call", direction="out")[-1]
    answer = raw.trace.filter(id=request.id, direction="in")[-1]
    assert answer.kind == "invalid" and answer.note == problem
    assert raw.health.invalid_frames == 1 and raw.health.requests_in_flight == 0
    assert raw.ping() > 0 and raw.state == "ready"


@pytest.mark.parametrize(
    ("shape", "problem"),
    [
        ("nested", r"invalid JSON: nested too deeply to decode"),
        ("id-last", r"invalid JSON: nested too deeply to decode"),
        ("not-utf8", r"not UTF-8: invalid continuation byte at byte \d+"),
        ("nul", r"invalid JSON: Invalid control character at: line 1 column \d+ \(char \d+\)"),
    ],
)
def test_a_reply_no_decoder_could_read_fails_its_request_at_once_and_is_traced(raw, shape, problem):
    # Before: the nested reply raised RecursionError in the decoder, which was swallowed as a
    # "dispatch-error" event, and the call waited out its whole timeout.
    with pytest.raises(mcp_notebook.ProtocolViolation) as caught:
        raw.request("tools/call", {"name": "malformed", "arguments": {"shape": shape}}, timeout=60)
    assert re.fullmatch(rf"tools/call: the server answered with a malformed response \({problem}\)", str(caught.value))
    request = raw.trace.filter(method="tools/call", direction="out")[-1]
    answer = raw.trace.frames("in")[-1]
    assert (answer.kind, answer.method) == ("invalid", "tools/call") and re.fullmatch(problem, answer.note or "")
    assert answer.size > (200_000 if shape in ("nested", "id-last") else 60)
    assert len(answer.raw or "") <= 256 * 1024 + 100 and (answer.raw or "").startswith('{"jsonrpc":')  # clipped, kept
    assert not raw.trace.filter(kind="dispatch-error")
    assert request.id not in [e.id for e in raw.trace.frames("in")[:-1]]
    assert raw.health.invalid_frames == 1 and raw.health.requests_in_flight == 0
    assert raw.ping() > 0 and raw.state == "ready"
