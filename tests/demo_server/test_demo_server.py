"""The demo MCP server (mcp_notebook.demo_server), proven against a client we did not write.

The official SDK client (mcp==2.3.0) drives it over stdio and Streamable HTTP, in
the legacy (initialize) and modern (2026-07-28) eras; raw exchanges (tests/support/demo_wire.py)
check what the SDK hides: status codes, error codes, malformed frames, withheld
responses. Every process is reaped by the context manager that started it; waits
are for events (a frame, a stderr line), with timeouts only as safety nets.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
import sys
from contextlib import asynccontextmanager

import anyio
import httpx2
import jsonschema
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from support.demo_wire import LEGACY, MODERN, WAIT, RawHttp, RawStdio, modern_meta, sdk_stdio, sse_events, tool_call
from support.schema import load_schema

from mcp_notebook import demo_server
from mcp_notebook.demo_server._faults import FaultError, Faults
from mcp_notebook.demo_server._png import SIGNATURE

pytestmark = [pytest.mark.anyio, pytest.mark.filterwarnings("ignore:ping is removed as of 2026-07-28")]
TOOL_NAMES = ["echo", "add", "slow", "image", "log", "bump", "ask_name", "summarize", "drop_stream", "faults"]


@pytest.fixture
def anyio_backend():
    return "asyncio"


@asynccontextmanager
async def sdk(transport: str, era: str, mode: str = "legacy", ping_interval: float | None = None, **options):
    """(SDK Client, stderr LineLog) on a fresh demo server; the server is reaped on exit."""
    if transport == "stdio":
        argv = demo_server.command("stdio", era, ping_interval=ping_interval)
        async with sdk_stdio(argv, mode=mode, **options) as (client, stderr):
            yield client, stderr
    else:
        process, url = demo_server.start_http(era, ping_interval=ping_interval)
        with process:
            async with Client(url, mode=mode, **options) as client:
                yield client, process.stderr_log


class Received:
    """What an SDK callback was handed; SDK callbacks run in tasks of their own, so wait for them."""

    def __init__(self) -> None:
        self.items: list = []
        self._more = anyio.Event()

    async def progress(self, value, total, message) -> None:
        self._add((value, total, message))

    async def log(self, params) -> None:
        self._add(params.data)

    def _add(self, item) -> None:
        self.items.append(item)
        self._more.set()
        self._more = anyio.Event()

    async def wait_for(self, count: int) -> list:
        with anyio.fail_after(WAIT):
            while len(self.items) < count:
                await self._more.wait()
        return self.items


async def faults(client, **arguments) -> dict:
    result = await client.call_tool("faults", arguments)
    assert not result.is_error, result
    return json.loads(result.content[0].text)


# ------------------------------------------------------------------ launching


def test_command_builds_argv_from_the_fault_table():
    argv = demo_server.command("http", "both", port=0, ping_interval=1, pong_delay_ms=5, ignore_pings=True, flood=3)
    assert argv[:3] == [sys.executable, "-m", "mcp_notebook.demo_server"]
    assert argv[3:] == [
        "--transport",
        "http",
        "--era",
        "both",
        "--port",
        "0",
        "--ping-interval",
        "1.0",
        "--pong-delay-ms",
        "5",
        "--ignore-pings",
        "--flood",
        "3",
    ]
    assert "--crash" not in demo_server.command(crash=False)
    with pytest.raises(ValueError, match="unknown fault"):
        demo_server.command(pong_delay=5)
    with pytest.raises(ValueError, match="drop_percent must be at most 100"):
        demo_server.command(drop_percent=101)
    with pytest.raises(ValueError, match="port is for the http transport"):
        demo_server.command("stdio", port=1)


def test_help_names_every_fault_switch():
    done = subprocess.run(demo_server.command() + ["--help"], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0
    for name in demo_server.FAULTS:
        assert "--" + name.replace("_", "-") in done.stdout


def test_drop_decisions_are_repeatable_with_a_seed():
    def pattern(faults: Faults) -> list[bool]:
        return [faults.drop() for _ in range(40)]

    first = pattern(Faults(drop_percent=50, seed=7))
    assert first == pattern(Faults(drop_percent=50, seed=7))
    assert True in first and False in first
    reseeded = Faults(drop_percent=50)
    reseeded.update({"seed": 7})
    assert pattern(reseeded) == first
    with pytest.raises(FaultError):
        Faults(ignore_pings=1)  # an int is not a bool here


def test_start_http_binds_loopback_and_stops_with_stdin():
    process, url = demo_server.start_http()
    with process:
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", url)
    assert process.returncode == 0
    assert "demo-server: stdin closed: exiting" in process.stderr_log.tail()


# ------------------------------------------------------------------ the SDK client, every tool

ERA_CASES = [
    ("legacy", "legacy", LEGACY),
    ("legacy", "auto", LEGACY),  # the SDK probes server/discover, gets -32601, falls back to initialize
    ("both", "legacy", LEGACY),
    ("both", "auto", MODERN),
    ("modern", "auto", MODERN),
]


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(("era", "mode", "version"), ERA_CASES)
async def test_sdk_client_uses_every_tool(transport, era, mode, version):
    progress = Received()
    async with sdk(transport, era, mode) as (client, _):
        assert client.protocol_version == version
        assert client.server_info is not None and client.server_info.name == "mcp-notebook-demo"
        assert [tool.name for tool in (await client.list_tools()).tools] == TOOL_NAMES

        assert (await client.call_tool("echo", {"text": "héllo"})).content[0].text == "héllo"
        added = await client.call_tool("add", {"a": 2, "b": 0.5})
        assert added.structured_content == {"sum": 2.5}
        image = (await client.call_tool("image", {})).content[0]
        assert image.type == "image" and image.mime_type == "image/png"
        assert base64.b64decode(image.data).startswith(SIGNATURE)
        bad = await client.call_tool("add", {"a": "one", "b": 2})
        assert bad.is_error and "a must be a number" in bad.content[0].text

        slow = await client.call_tool("slow", {"seconds": 0, "steps": 3}, progress_callback=progress.progress)
        assert slow.content[0].text == "slept 0 s in 3 steps"
        assert await progress.wait_for(3) == [(1, 3, "step 1/3"), (2, 3, "step 2/3"), (3, 3, "step 3/3")]

        report = await faults(client)
        assert report["faults"] == {"pong_delay_ms": 0, "ignore_pings": False, "drop_percent": 0, "seed": 0}
        assert report["counters"]["responses_dropped"] == 0
        if version == MODERN:
            discovered = client.session.discover_result
            assert discovered.supported_versions[0] == MODERN
            assert (LEGACY in discovered.supported_versions) == (era == "both")


async def test_both_eras_at_once_on_one_http_server():
    process, url = demo_server.start_http("both")
    with process:
        async with Client(url, mode="legacy") as old, Client(url) as new:
            assert (old.protocol_version, new.protocol_version) == (LEGACY, MODERN)
            assert (await old.call_tool("echo", {"text": "a"})).content[0].text == "a"
            assert (await new.call_tool("echo", {"text": "b"})).content[0].text == "b"


# ------------------------------------------------------------------ pings (legacy)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_server_pings_are_answered_by_the_sdk_client(transport):
    async with sdk(transport, "legacy", ping_interval=0.02) as (client, stderr):
        await anyio.to_thread.run_sync(stderr.wait_for, r": pong 3 \(demo-ping-\d+\) after ")
        counters = (await faults(client))["counters"]
    assert counters["server_pongs_received"] >= 3
    assert counters["server_pings_sent"] >= counters["server_pongs_received"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_pong_delay_holds_the_pong_until_lowered(transport):
    pong = anyio.Event()

    async def ping(client):
        await client.send_ping()
        pong.set()

    async with sdk(transport, "legacy") as (client, stderr), anyio.create_task_group() as tg:
        await faults(client, pong_delay_ms=600_000)
        tg.start_soon(ping, client)
        await anyio.to_thread.run_sync(stderr.wait_for, r"pong_delay_ms: ping id=\S+ gets its pong 600000 ms after")
        assert (await client.call_tool("echo", {"text": "meanwhile"})).content[0].text == "meanwhile"
        assert (await faults(client))["counters"]["pings_received"] == 1
        assert not pong.is_set()  # ten minutes to go
        await faults(client, pong_delay_ms=0)  # releases the waiting pong
        await pong.wait()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_ignored_pings_are_never_answered(transport):
    async with sdk(transport, "legacy") as (client, stderr), anyio.create_task_group() as tg:
        await faults(client, ignore_pings=True)
        tg.start_soon(client.send_ping)
        await anyio.to_thread.run_sync(stderr.wait_for, r"ignore_pings: not answering ping id=")
        await client.call_tool("echo", {"text": "x"})
        counters = (await faults(client, ignore_pings=False))["counters"]
        assert counters["pings_received"] == counters["pings_ignored"] == 1
        await client.send_ping()  # a new ping is answered again
        tg.cancel_scope.cancel()  # the ignored one never will be


def test_modern_era_has_no_ping():
    with RawStdio(demo_server.command(era="modern")) as server:
        reply = server.request(1, "ping", {"_meta": modern_meta()})
        assert reply["error"]["code"] == -32601


# ------------------------------------------------------------------ progress and cancellation


@pytest.mark.parametrize(
    ("transport", "era", "mode"),
    [("stdio", "legacy", "legacy"), ("http", "legacy", "legacy"), ("stdio", "modern", "auto"), ("http", "modern", "auto")],
)
async def test_cancelling_slow_stops_it(transport, era, mode):
    progress = Received()
    async with sdk(transport, era, mode) as (client, stderr):
        async with anyio.create_task_group() as tg:
            arguments = {"seconds": 600, "steps": 10_000}
            tg.start_soon(lambda: client.call_tool("slow", arguments, progress_callback=progress.progress))
            await progress.wait_for(1)
            tg.cancel_scope.cancel()  # notifications/cancelled; on modern HTTP the SDK aborts the POST instead
        await anyio.to_thread.run_sync(stderr.wait_for, r"cancelled request id=")
        assert (await faults(client))["counters"]["requests_cancelled"] == 1


# ------------------------------------------------------------------ session faults (HTTP)


def test_expire_session_gives_404_on_the_next_request():
    process, url = demo_server.start_http("legacy")
    with process, RawHttp(url) as raw:
        assert raw.initialize().status_code == 200 and raw.session_id
        tools = raw.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert tools.status_code == 200 and tools.headers["content-type"] == "application/json"
        answered = raw.post(tool_call(2, "faults", expire_session=True))
        assert answered.status_code == 200
        assert "expire_session: the session ends after this response" in answered.json()["result"]["content"][0]["text"]
        assert raw.post({"jsonrpc": "2.0", "id": 3, "method": "tools/list"}).status_code == 404
        assert raw.http.delete(url, headers={"mcp-session-id": raw.session_id}).status_code == 404
        assert raw.post({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}, session=False).status_code == 400


async def test_expire_session_seen_by_the_sdk_client():
    async with sdk("http", "legacy") as (client, _):
        await client.list_tools()  # the SDK checks results against the listed schemas: list before expiry
        await faults(client, expire_session=True)
        with pytest.raises(MCPError):
            await client.list_tools()


def test_legacy_http_session_lifecycle():
    process, url = demo_server.start_http("legacy")
    with process, RawHttp(url) as raw:
        raw.initialize()
        session = {"mcp-session-id": raw.session_id, "accept": "text/event-stream"}
        assert raw.http.get(url, headers={"accept": "text/event-stream"}).status_code == 400
        assert raw.http.get(url, headers={**session, "mcp-session-id": "nope"}).status_code == 404
        assert raw.http.delete(url, headers=session).status_code == 200
        assert raw.http.delete(url, headers=session).status_code == 404


def test_http_rejects_foreign_origins_and_bad_requests():
    process, url = demo_server.start_http("both")
    with process, RawHttp(url) as raw:
        init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}
        assert raw.post(init, {"origin": "http://evil.example"}).status_code == 403
        assert raw.post(init, {"host": "rebound.example"}).status_code == 403
        assert raw.post(init, {"origin": "http://localhost:8888"}).status_code == 200
        assert raw.post(init, {"accept": "application/json"}).status_code == 406
        assert raw.http.post(url.replace("/mcp", "/other"), json=init).status_code == 404
        assert raw.http.put(url).status_code == 405


# ------------------------------------------------------------------ crash, malformed, flood, drop


def test_crash_armed_at_start_exits_on_the_first_tool_call():
    with RawStdio(demo_server.command(crash=True)) as server:
        server.initialize()
        assert server.request(1, "tools/list")["result"]["tools"]
        server.send(tool_call(2, "echo", text="x"))
        assert server.line() is None  # stdout ends: no response
        assert server.close() == demo_server.CRASH_EXIT_CODE
        server.stderr.wait_for(r"^demo-server: crash: .*exiting with code 3$")


async def test_crash_through_the_faults_tool_stops_the_http_server():
    process, url = demo_server.start_http("modern")
    with process:
        # The SDK lets the lost connection escape its transport's task group, out of the Client block.
        with pytest.raises(Exception):  # noqa: B017
            async with Client(url) as client:
                await client.call_tool("faults", {"crash": True})
        assert process.wait(WAIT) == demo_server.CRASH_EXIT_CODE
        process.stderr_log.wait_for(r"^demo-server: crash: crash fault during tools/call id=.*exiting with code 3$")


def test_malformed_frame_on_stdio_is_a_line_of_garbage():
    with RawStdio(demo_server.command()) as server:
        server.initialize()
        server.send(tool_call(1, "faults", malformed=True))
        garbage = server.line()
        with pytest.raises(json.JSONDecodeError):
            json.loads(garbage)
        done = server.reply_to(1)["result"]["structuredContent"]["done"]
        assert done == ["malformed: sent one frame that is not JSON"]


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_malformed_frame_on_http_is_an_sse_event_of_invalid_json(era):
    process, url = demo_server.start_http(era, malformed=True)  # armed: fires in the first tools/call
    with process, RawHttp(url) as raw:
        if era == "legacy":
            raw.initialize()
            response = raw.post(tool_call(1, "echo", text="after"))
        else:
            response = raw.modern(1, "tools/call", {"name": "echo", "arguments": {"text": "after"}})
        assert response.headers["content-type"] == "text/event-stream"
        first, last = sse_events(response)
        with pytest.raises(json.JSONDecodeError):
            json.loads(first)
        assert json.loads(last)["result"]["content"][0]["text"] == "after"


@pytest.mark.parametrize(
    ("transport", "era", "mode", "log_level", "expected"),
    [
        ("stdio", "legacy", "legacy", None, 5),
        ("http", "legacy", "legacy", None, 5),
        ("stdio", "modern", "auto", "info", 5),
        ("http", "modern", "auto", "debug", 5),
        ("stdio", "modern", "auto", None, 0),  # modern: no opt-in, no log messages
        ("stdio", "modern", "auto", "error", 0),  # opted in above info
    ],
)
async def test_flood_sends_n_log_notifications(transport, era, mode, log_level, expected):
    received = Received()
    async with sdk(transport, era, mode, logging_callback=received.log, log_level=log_level) as (client, _):
        done = (await faults(client, flood=5))["done"]
        assert done[0].startswith("flood: sent 5" if expected else "flood: sent none")
        assert await received.wait_for(expected) == [f"flood {n}/5" for n in range(1, expected + 1)]
        await client.call_tool("echo", {"text": "x"})
    assert len(received.items) == expected  # once only


async def test_flood_armed_at_start_fires_in_the_first_tool_call_only():
    received = Received()
    argv = demo_server.command(flood=3)
    async with sdk_stdio(argv, mode="legacy", logging_callback=received.log) as (client, stderr):
        assert (await faults(client))["armed"] == {}  # fired in this first call, so no longer armed
        assert await received.wait_for(3) == ["flood 1/3", "flood 2/3", "flood 3/3"]
        await client.call_tool("echo", {"text": "x"})
    assert len(received.items) == 3
    stderr.wait_for("armed fault, first tools/call: flood: sent 3")


def test_drop_percent_withholds_responses():
    with RawStdio(demo_server.command()) as server:
        server.initialize()
        server.send(tool_call(1, "faults", drop_percent=100))
        server.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        server.send(tool_call(3, "faults", drop_percent=0))
        reply = server.reply_to(3)
        assert reply["result"]["structuredContent"]["counters"]["responses_dropped"] == 2
        assert server.request(4, "ping") == {"jsonrpc": "2.0", "id": 4, "result": {}}
        assert not any(json.loads(line).get("id") in (1, 2) for line in server.seen)


# ------------------------------------------------------------------ era rules on the wire


def schema_check(version: str, name: str, instance: dict) -> None:
    """Validate `instance` against definition `name` of the official schema of `version`."""
    schema = load_schema(version)
    key = "$defs" if "$defs" in schema else "definitions"
    validator = jsonschema.validators.validator_for(schema)
    validator({**schema, "$ref": f"#/{key}/{name}"}).validate(instance)


@pytest.mark.parametrize("version", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", MODERN])
def test_server_frames_follow_the_official_schema(version):
    modern = version == MODERN
    with RawStdio(demo_server.command(era="both")) as server:
        meta = {"_meta": modern_meta()} if modern else {}
        if modern:
            schema_check(version, "DiscoverResult", server.request("d", "server/discover", meta)["result"])
            unsupported = server.request("u", "tools/list", {"_meta": modern_meta("2099-01-01")})
            schema_check(version, "UnsupportedProtocolVersionError", unsupported)
        else:
            schema_check(version, "InitializeResult", server.initialize(version)["result"])
        schema_check(version, "ListToolsResult", server.request("l", "tools/list", meta)["result"])
        calls = {"echo": {"text": "x"}, "add": {"a": 1, "b": 2}, "image": {}, "faults": {"flood": 2}}
        for name, arguments in calls.items():
            reply = server.request(name, "tools/call", {"name": name, "arguments": arguments, **meta})
            schema_check(version, "CallToolResult", reply["result"])
        flood = [json.loads(line) for line in server.seen if '"notifications/message"' in line]
        assert len(flood) == (0 if modern else 2)  # modern: this request did not opt in
        for message in flood:
            schema_check(version, "LoggingMessageNotification", message)
        progress_meta = {"_meta": {**meta.get("_meta", {}), "progressToken": "p"}}
        server.request("s", "tools/call", {"name": "slow", "arguments": {"seconds": 0, "steps": 2}, **progress_meta})
        progress = [json.loads(line) for line in server.seen if '"notifications/progress"' in line]
        assert [message["params"]["progress"] for message in progress] == [1, 2]
        for message in progress:
            schema_check(version, "ProgressNotification", message)


def test_both_era_on_stdio_is_chosen_by_the_first_request():
    with RawStdio(demo_server.command(era="both")) as server:
        assert server.request(1, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}  # before any choice: legacy
        assert server.request(2, "server/discover", {"_meta": modern_meta()})["result"]["resultType"] == "complete"
        assert server.request(3, "initialize", {"protocolVersion": LEGACY})["error"]["code"] == -32022
        assert server.request(4, "ping", {"_meta": modern_meta()})["error"]["code"] == -32601
    with RawStdio(demo_server.command(era="both")) as server:
        server.initialize()
        assert server.request(5, "server/discover", {"_meta": modern_meta()})["error"]["code"] == -32601
        assert server.request(6, "ping") == {"jsonrpc": "2.0", "id": 6, "result": {}}


def test_legacy_rules_on_stdio():
    with RawStdio(demo_server.command()) as server:
        assert server.request(1, "ping") == {"jsonrpc": "2.0", "id": 1, "result": {}}  # allowed before initialize
        assert server.request(2, "tools/list")["error"]["code"] == -32600
        assert server.request(3, "server/discover", {"_meta": modern_meta()})["error"]["code"] == -32601
        assert server.initialize("2024-11-05")["result"]["protocolVersion"] == "2024-11-05"
        assert "outputSchema" not in server.request(4, "tools/list")["result"]["tools"][1]
    with RawStdio(demo_server.command()) as server:
        assert server.initialize("1999-01-01")["result"]["protocolVersion"] == LEGACY


def test_modern_rules_on_stdio():
    with RawStdio(demo_server.command(era="modern")) as server:
        unsupported = server.request(1, "tools/list", {"_meta": modern_meta("2099-01-01")})["error"]
        assert unsupported == {
            "code": -32022,
            "message": "Unsupported protocol version",
            "data": {"supported": [MODERN], "requested": "2099-01-01"},
        }
        assert server.request(2, "tools/list")["error"]["code"] == -32602
        no_capabilities = {"io.modelcontextprotocol/protocolVersion": MODERN}
        assert server.request(3, "tools/list", {"_meta": no_capabilities})["error"]["code"] == -32602
        refused = server.request(4, "initialize", {"protocolVersion": LEGACY})["error"]
        assert refused["code"] == -32022 and refused["data"] == {"supported": [MODERN], "requested": LEGACY}
        assert server.request(5, "ping", {"_meta": modern_meta()})["error"]["code"] == -32601
        listed = server.request(6, "tools/list", {"_meta": modern_meta()})["result"]
        assert listed["resultType"] == "complete" and listed["ttlMs"] == 0
        assert listed["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "mcp-notebook-demo"


def test_modern_rules_on_http():
    process, url = demo_server.start_http("modern")
    with process, RawHttp(url) as raw:
        listed = raw.modern(1, "tools/list")
        assert listed.status_code == 200 and "mcp-session-id" not in listed.headers
        assert listed.json()["result"]["resultType"] == "complete"

        def rejected(response: httpx2.Response, status: int, code: int) -> None:
            assert (response.status_code, response.json()["error"]["code"]) == (status, code)

        rejected(raw.modern(2, "tools/list", headers={"mcp-protocol-version": "2025-11-25"}), 400, -32020)
        rejected(raw.modern(3, "tools/list", headers={"mcp-method": None}), 400, -32020)
        echo = {"name": "echo", "arguments": {"text": "x"}}
        rejected(raw.modern(4, "tools/call", echo, headers={"mcp-name": "add"}), 400, -32020)
        rejected(raw.modern(5, "tools/list", version="2099-01-01"), 400, -32022)
        rejected(raw.modern(6, "ping"), 404, -32601)
        rejected(raw.post({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": {}}), 400, -32602)
        encoded = "=?base64?" + base64.b64encode(b"echo").decode() + "?="
        echoed = raw.modern(8, "tools/call", echo, headers={"mcp-name": encoded})
        assert echoed.json()["result"]["content"][0]["text"] == "x"
        assert raw.http.get(url, headers={"accept": "text/event-stream"}).status_code == 405
        assert raw.http.delete(url).status_code == 405
