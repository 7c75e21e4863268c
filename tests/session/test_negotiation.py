"""Both protocol eras: the server/discover probe, modern requests, and ping's modern stand-in."""

from __future__ import annotations

import contextlib
import json
import sys
import threading
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.http_servers import everything, sdk_http
from support.schema import spec_dir
from support.servers import sdk_server_cmd, server_everything_cmd

import mcp_notebook
from mcp_notebook.api.connecting import era_memory as _era_memory
from mcp_notebook.protocol import modern as _modern
from mcp_notebook.session.era import MODERN

pytestmark = [pytest.mark.node]

RAW = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_server.py")]
ROOTS = {"roots": [{"uri": "file:///tmp/a", "name": "a"}, {"uri": "file:///tmp/b"}]}


def text_of(result: dict) -> str:
    return "".join(part.get("text", "") for part in result["content"])


def sent(conn: mcp_notebook.Connection, method: str) -> list:
    return [e for e in conn.trace.frames("out") if e.method == method]


def exercise_modern(conn: mcp_notebook.Connection) -> None:
    """Tools end to end, an input_required round, and every request carrying its _meta."""
    assert conn.era == "modern" and conn.protocol_version == "2026-07-28"
    assert conn.server_info["name"] == "sdk-test-server"
    assert "echo" in {t["name"] for t in conn.request("tools/list")["tools"]}
    assert text_of(conn.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})) == "hi"
    # The SDK asks for roots with an input_required result; we answer through the same
    # handler a legacy roots/list request would reach, and retry with its requestState.
    assert text_of(conn.request("tools/call", {"name": "count_roots", "arguments": {}})) == "2"
    calls = sent(conn, "tools/call")
    retry = calls[-1].message["params"]
    assert list(retry["inputResponses"].values()) == [ROOTS] and "requestState" in retry
    assert calls[-1].id != calls[-2].id
    for entry in conn.trace.frames("out"):
        meta = entry.message["params"]["_meta"]
        assert meta["io.modelcontextprotocol/protocolVersion"] == "2026-07-28"
        assert meta["io.modelcontextprotocol/clientInfo"]["name"] == "mcp-notebook"
    assert not sent(conn, "initialize") and not sent(conn, "ping")


def test_auto_lands_on_modern_with_the_sdk_server_over_stdio():
    # A probe that waits as long as the server takes to start: no handshake is offered beside it
    # (test_a_modern_server_slow_to_start_is_found_modern is about that).
    with mcp_notebook.connect(
        sdk_server_cmd(), name="m", capabilities={"roots": {}}, handlers={"roots/list": lambda p: ROOTS}, probe_timeout=60
    ) as conn:
        exercise_modern(conn)
        assert conn.health.era == "modern" and conn.health.era_source == "probe: server/discover answered"
        probe = sent(conn, "server/discover")[0]
        assert probe.note == "era probe"


def test_legacy_is_still_there_when_asked_for_over_stdio():
    with mcp_notebook.connect(
        sdk_server_cmd(), name="l", era="legacy", capabilities={"roots": {}}, handlers={"roots/list": lambda p: ROOTS}
    ) as conn:
        assert conn.era == "legacy" and conn.protocol_version == "2025-11-25"
        assert conn.health.era_source == "pinned"
        assert text_of(conn.request("tools/call", {"name": "count_roots", "arguments": {}})) == "2"
        assert conn.ping() > 0 and not sent(conn, "server/discover")


def test_auto_lands_on_modern_with_the_sdk_server_over_http(port):
    with (
        sdk_http(port) as base,
        mcp_notebook.connect(
            base + "/mcp", name="m", capabilities={"roots": {}}, handlers={"roots/list": lambda p: ROOTS}
        ) as conn,
    ):
        exercise_modern(conn)
        assert conn._session.transport.session_id is None  # stateless: no session, no GET stream
        methods = [e.detail["method"] for e in conn.trace.entries() if e.kind == "http"]
        assert set(methods) == {"POST"}
    with sdk_http(port) as base, mcp_notebook.connect(base + "/mcp", name="l", era="legacy") as conn:
        assert conn.era == "legacy" and conn.ping() > 0


def test_modern_http_requests_carry_the_standard_headers():
    headers = _modern.request_headers(
        "tools/call",
        {"name": "wëather", "arguments": {"region": " padded ", "n": 7}},
        "2026-07-28",
        {"properties": {"region": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer", "x-mcp-header": "N"}}},
    )
    assert headers == {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "=?base64?d8OrYXRoZXI=?=",
        "Mcp-Param-Region": "=?base64?IHBhZGRlZCA=?=",
        "Mcp-Param-N": "7",
    }
    assert _modern.header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
    assert _modern.request_headers("resources/read", {"uri": "file:///x"}, "2026-07-28")["Mcp-Name"] == "file:///x"


def test_auto_falls_back_to_legacy_against_server_everything():
    with mcp_notebook.connect(server_everything_cmd(), name="se", probe_timeout=5) as conn:
        assert conn.era == "legacy" and conn.protocol_version == "2025-11-25"
        assert conn.health.era_source.startswith("probe: server/discover refused")
        frames = [(e.direction, e.method) for e in conn.trace.frames()][:3]
        assert frames == [("out", "server/discover"), ("in", "server/discover"), ("out", "initialize")]
        assert conn.ping() > 0


def test_auto_falls_back_to_legacy_against_server_everything_over_http(port):
    with everything(port, "streamableHttp") as base, mcp_notebook.connect(base + "/mcp", name="se") as conn:
        assert conn.era == "legacy"
        assert conn.health.era_source.startswith("probe: server/discover answered HTTP 4")


def test_a_silent_probe_times_out_and_falls_back():
    with mcp_notebook.connect([*RAW, "--mute-before-initialize"], name="mute", probe_timeout=0.5) as conn:
        assert conn.era == "legacy"
        assert conn.health.era_source == "probe: no answer to server/discover within 0.5 s"
        assert conn.ping() > 0


def test_the_verdict_is_cached_per_command_line_and_reprobed_when_it_fails():
    cmd = server_everything_cmd()
    with mcp_notebook.connect(cmd, name="first"):
        pass
    with mcp_notebook.connect(cmd, name="second") as conn:
        assert conn.health.era_source == "cache: an earlier probe of the same server"
        assert not sent(conn, "server/discover")
    _era_memory.remember(cmd, "modern")  # a stale verdict
    with mcp_notebook.connect(cmd, name="third") as conn:
        assert conn.era == "legacy" and conn.health.era_source.startswith("probe:")


def test_percent_mcp_ping_on_a_modern_connection_sends_no_ping_and_says_so(capsys):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    command = " ".join(sdk_server_cmd())
    result = ip.run_cell(f"%mcp connect m -- {command}")
    assert result.success
    result = ip.run_cell("%mcp ping m -n 2 -i 0")
    out = capsys.readouterr().out
    assert result.success and len(result.result) == 2
    assert "removed in 2026-07-28" in out and out.count("liveness probe m:") == 2
    conn = mcp_notebook.get_connection("m")
    assert not sent(conn, "ping")
    probes = [e for e in sent(conn, "server/discover") if e.note and e.note.startswith("liveness probe")]
    assert len(probes) == 2
    ip.run_cell("%mcp status m")
    assert "modern 2026-07-28 over stdio (probe: server/discover answered)" in capsys.readouterr().out
    ip.run_cell("%mcp disconnect m")


def test_a_modern_server_slow_to_start_is_found_modern():
    """The probe outlives its timeout while the server starts; the handshake is offered beside it,
    and the server's first answer, to the probe, decides. (Before, initialize followed alone and
    the SDK, serving 2026-07-28 once probed, refused it: mcp-server-git did that on every connect.)"""
    with mcp_notebook.connect(sdk_server_cmd("--slow-start", "1.5"), name="slow", probe_timeout=0.3) as conn:
        assert conn.era == "modern" and conn.protocol_version == "2026-07-28"
        assert conn.health.era_source == "probe: server/discover answered after the handshake was offered"
        assert conn.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}})["content"][0]["text"] == "hi"
        notes = [e.note or "" for e in conn.trace.entries() if e.kind == "era"]
        assert any("offering the legacy handshake beside it" in note for note in notes)


def test_modern_connections_never_answer_server_requests():
    """A ping from a server to a modern client has no place in 2026-07-28: it goes unanswered."""
    with mcp_notebook.connect([*RAW, "--ping-during-handshake"], name="raw", era="legacy") as conn:
        assert conn.health.pongs_sent == 1  # the legacy baseline: answered
    session = mcp_notebook.connect(sdk_server_cmd(), name="m")._session
    try:
        session.eras.rules = MODERN
        session.inbound.frame_received('{"jsonrpc":"2.0","id":"x","method":"ping"}')
        assert not [e for e in session.trace.frames("out") if e.id == "x"]
        assert any(e.kind == "unanswered" for e in session.trace.entries())
    finally:
        mcp_notebook.get_connection("m").close()


@pytest.mark.parametrize(
    ("folder", "expect"),
    [
        ("InputRequiredResult", "input_required"),
        ("DiscoverResult", "complete"),
        ("CallToolResult", "complete"),
    ],
)
def test_official_examples_parse(folder, expect):
    for path in sorted((spec_dir() / "2026-07-28" / "schema-examples" / folder).glob("*.json")):
        assert _modern.result_type(json.loads(path.read_text())) == expect, path.name


def test_official_error_example_offers_versions():
    [path] = (spec_dir() / "2026-07-28" / "schema-examples" / "UnsupportedProtocolVersionError").glob("*.json")
    error = json.loads(path.read_text())
    error = error.get("error", error)
    versions = _modern.supported_versions(error.get("data"))
    assert versions and _modern.mutual_version(versions + ["2026-07-28"]) == "2026-07-28"
    assert _modern.result_type({"resultType": "sideways"}) == "invalid"
    assert _modern.result_type({}) == "complete"  # absent means complete (older servers)


def _collector() -> tuple[list, threading.Event, object]:
    got: list = []
    arrived = threading.Event()

    def callback(method: str, params: dict) -> None:
        got.append((method, params))
        arrived.set()

    return got, arrived, callback


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_subscriptions_listen_is_acknowledged_demultiplexed_and_closed(transport, port):
    got, arrived, callback = _collector()
    with contextlib.ExitStack() as stack:
        target = sdk_server_cmd() if transport == "stdio" else stack.enter_context(sdk_http(port)) + "/mcp"
        conn = stack.enter_context(mcp_notebook.connect(target, name="subs"))
        other = conn.listen(tools=True)
        sub = conn.listen(resource_uris=["file:///watched"], callback=callback)
        assert sub.acknowledged == {"resourceSubscriptions": ["file:///watched"]}
        conn.request("tools/call", {"name": "touch", "arguments": {"uri": "file:///watched"}})
        assert arrived.wait(30)
        assert got[0][0] == "notifications/resources/updated" and got[0][1]["uri"] == "file:///watched"
        assert got[0][1]["_meta"]["io.modelcontextprotocol/subscriptionId"] == sub.request_id
        assert [m for m, _ in sub.received] == ["notifications/resources/updated"]  # not the other's
        sub.close()
        other.close()
        assert sub.wait_for(lambda s: s.ended is not None, 10) and sub.ended == "closed by the client"
    with mcp_notebook.connect(sdk_server_cmd(), name="legacy", era="legacy") as conn:
        with pytest.raises(mcp_notebook.UsageError, match="modern era"):
            conn.listen(tools=True)


def test_subscriptions_listen_again_after_an_abrupt_drop(port):
    got, arrived, callback = _collector()
    with sdk_http(port) as base:
        conn = mcp_notebook.connect(base + "/mcp", name="relisten")
        sub = conn.listen(resource_uris=["file:///w"], callback=callback)
    try:
        with sdk_http(port):  # the server went away mid-stream and came back on the same port
            assert sub.wait_for(lambda s: s.relistens >= 1 and s.acknowledgments == 2, 30)
            assert any(e.kind == "relisten" for e in conn.trace.entries())
            conn.request("tools/call", {"name": "touch", "arguments": {"uri": "file:///w"}})
            assert arrived.wait(30) and got[0][1]["uri"] == "file:///w"
            sub.close()
    finally:
        conn.close()


def test_modern_http_cancels_by_closing_the_response_stream(port):
    with sdk_http(port) as base, mcp_notebook.connect(base + "/mcp", name="cancel") as conn:
        assert conn.era == "modern"
        with pytest.raises(mcp_notebook.RequestTimeout):
            conn.request("tools/call", {"name": "slow", "arguments": {"seconds": 30}}, timeout=0.5)
        call = sent(conn, "tools/call")[-1]
        assert [e.detail["id"] for e in conn.trace.entries() if e.kind == "stream-cancelled"] == [call.id]
        assert not sent(conn, "notifications/cancelled")  # on modern HTTP the closed stream is the cancellation
        assert text_of(conn.request("tools/call", {"name": "echo", "arguments": {"text": "still here"}})) == "still here"


def test_modern_stdio_cancels_with_a_notification():
    with mcp_notebook.connect(sdk_server_cmd(), name="cancel") as conn:
        with pytest.raises(mcp_notebook.RequestTimeout):
            conn.request("tools/call", {"name": "slow", "arguments": {"seconds": 30}}, timeout=0.5)
        [cancel] = sent(conn, "notifications/cancelled")
        assert cancel.message["params"]["requestId"] == sent(conn, "tools/call")[-1].id
