"""The client against real servers over stdio: the official SDK, FastMCP, server-everything."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time

import pytest
from support.servers import fastmcp_server_cmd, sdk_server_cmd, server_everything_cmd
from support.waiting import wait_until

import mcp_notebook

pytestmark = [pytest.mark.node]

LEGACY_VERSIONS = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]

PEERS = {
    "sdk": (sdk_server_cmd, {"name": "echo", "arguments": {"text": "hello"}}),
    "fastmcp": (fastmcp_server_cmd, {"name": "echo", "arguments": {"text": "hello"}}),
    "server-everything": (server_everything_cmd, {"name": "echo", "arguments": {"message": "hello"}}),
}


def text_of(result: dict) -> str:
    return "".join(part.get("text", "") for part in result["content"])


@pytest.mark.parametrize("version", LEGACY_VERSIONS)
@pytest.mark.parametrize("peer", list(PEERS))
def test_handshake_ping_and_tools_with_each_version(peer, version):
    make_cmd, echo_call = PEERS[peer]
    with mcp_notebook.connect(make_cmd(), era="legacy", name=peer, protocol_version=version) as conn:
        assert conn.state == "ready"
        assert conn.protocol_version == version
        assert conn.server_info["name"]
        assert "tools" in conn.server_capabilities
        sent = [(e.kind, e.method) for e in conn.trace.frames("out")]
        assert sent[:2] == [("request", "initialize"), ("notification", "notifications/initialized")]
        assert sent[0] and conn.trace.frames("out")[0].message["params"]["protocolVersion"] == version

        rtt = conn.ping()
        assert rtt > 0 and conn.health.last_rtt == rtt and conn.health.pings_sent == 1

        tools = {tool["name"] for tool in conn.request("tools/list")["tools"]}
        assert echo_call["name"] in tools
        assert "hello" in text_of(conn.request("tools/call", echo_call))
    assert conn.state == "closed"
    assert conn.health.exit_code is not None


def test_server_pings_are_answered_while_the_main_thread_sleeps():
    with mcp_notebook.connect(fastmcp_server_cmd("--ping-interval-ms", "100"), era="legacy", name="pinger") as conn:
        conn.request("tools/list")  # FastMCP's PingMiddleware starts pinging after the first message
        naps: list[tuple[float, float]] = []
        deadline = time.monotonic() + 30
        while conn.health.server_pings < 5 and time.monotonic() < deadline:
            start = time.monotonic()
            time.sleep(0.3)  # the main thread is blocked here: the scenario, not synchronisation
            naps.append((start, time.monotonic()))
        health = conn.health
        assert health.server_pings >= 5
        assert health.pongs_sent == health.server_pings and health.pong_failures == 0

        pings = {e.id: e for e in conn.trace.frames("in") if e.method == "ping"}
        pongs = {e.id: e for e in conn.trace.frames("out") if e.note == "pong"}
        assert set(pongs) == set(pings)
        assert all(pongs[i].monotonic >= pings[i].monotonic for i in pings)
        during_naps = [p for p in pongs.values() if any(a <= p.monotonic <= b for a, b in naps)]
        assert during_naps, "no pong was written while the main thread slept"


def test_a_server_that_pings_during_a_tool_call_gets_every_pong(sdk):
    result = sdk.request("tools/call", {"name": "ping_client", "arguments": {"count": 5}})
    assert text_of(result) == "5"
    assert sdk.health.server_pings == sdk.health.pongs_sent == 5


def test_a_user_ping_handler_wins_over_the_builtin_pong(sdk):
    seen: list[dict] = []

    @sdk.on_request("ping")
    def handler(params: dict) -> dict:
        seen.append(params)
        return {}

    assert text_of(sdk.request("tools/call", {"name": "ping_client", "arguments": {"count": 2}})) == "2"
    assert len(seen) == 2
    replies = [e for e in sdk.trace.frames("out") if e.kind == "response"]
    assert [e.note for e in replies] == ["from user handler"] * 2

    def refuse(params: dict) -> dict:
        raise mcp_notebook.McpError(-32000, "not now")

    sdk.on_request("ping", refuse)
    # The server's ping got our handler's error, and the SDK passes it up as the tool's error.
    with pytest.raises(mcp_notebook.McpError, match="not now"):
        sdk.request("tools/call", {"name": "ping_client", "arguments": {"count": 1}})

    sdk.remove_handler("ping")
    assert text_of(sdk.request("tools/call", {"name": "ping_client", "arguments": {"count": 1}})) == "1"
    replies = [e for e in sdk.trace.frames("out") if e.kind in ("response", "error")]
    assert [e.note for e in replies] == ["from user handler"] * 3 + ["pong"]


def test_a_server_crash_mid_request_fails_it_at_once_with_exit_code_and_stderr(sdk):
    with pytest.raises(mcp_notebook.ConnectionClosed) as caught:
        sdk.request("tools/call", {"name": "crash", "arguments": {}}, timeout=120)
    assert caught.value.exit_code == 3
    assert any("crash tool called" in line for line in caught.value.stderr_tail)
    assert "exited with code 3" in str(caught.value)
    assert sdk.wait_closed(timeout=30)
    assert sdk.state == "closed"
    with pytest.raises(mcp_notebook.ConnectionClosed):
        sdk.ping()


def test_ctrl_c_cancels_the_request_and_keeps_the_session(sdk):
    def interrupt_once_sent() -> None:
        wait_until(lambda: any(e.method == "tools/call" for e in sdk.trace.frames("out")))
        os.kill(os.getpid(), signal.SIGINT)  # a real SIGINT, as Ctrl-C sends

    threading.Thread(target=interrupt_once_sent, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        sdk.request("tools/call", {"name": "slow", "arguments": {"seconds": 60}})
    call = next(e for e in sdk.trace.frames("out") if e.method == "tools/call")
    cancels = [e for e in sdk.trace.frames("out") if e.method == "notifications/cancelled"]
    assert [e.message["params"]["requestId"] for e in cancels] == [call.id]
    assert sdk.state == "ready"
    assert sdk.ping() > 0
    assert text_of(sdk.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})) == "5"


def test_awaitable_twins_run_on_the_session_thread_without_blocking_the_loop(sdk):
    async def main() -> tuple[float, dict, int]:
        ticks = 0

        async def ticker() -> None:
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        rtt = await sdk.aio.ping()
        result = await sdk.aio.request("tools/call", {"name": "slow", "arguments": {"seconds": 0.2}})
        task.cancel()
        with pytest.raises(asyncio.TimeoutError):
            await asyncio.wait_for(sdk.aio.request("tools/call", {"name": "slow", "arguments": {"seconds": 60}}), 0.3)
        return rtt, result, ticks

    rtt, result, ticks = asyncio.run(main())
    assert rtt > 0 and text_of(result) == "done"
    assert ticks > 10, "the caller's event loop was blocked while waiting"
    # The asyncio cancellation reached the session before it finished: the server was told.
    assert any(e.method == "notifications/cancelled" for e in sdk.trace.frames("out"))
    assert sdk.ping() > 0


def test_connect_with_a_name_in_use_closes_the_old_server():
    first = mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="dup")
    second = mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="dup")
    try:
        assert first.closed and first.health.exit_code is not None
        assert mcp_notebook.connections()["dup"] is second
    finally:
        second.close()


def test_stderr_is_captured_and_never_written_to_ours(capfd):
    with mcp_notebook.connect(server_everything_cmd(), era="legacy", name="se") as conn:
        conn.ping()
        assert any("STDIO" in line for line in conn.stderr)
    out, err = capfd.readouterr()
    assert "STDIO" not in out + err


def test_health_and_trace_are_plain_data(sdk):
    sdk.ping()
    health = sdk.health
    with pytest.raises(AttributeError):
        health.state = "x"  # type: ignore[misc]
    assert health.as_dict()["server_info"]["name"] == "sdk-test-server"
    records = sdk.trace.to_records()
    json.dumps(records, default=str)
    assert {r["direction"] for r in records} >= {"in", "out", "event"}
