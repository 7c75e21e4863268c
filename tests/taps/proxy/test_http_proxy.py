"""The tap's HTTP reverse proxy (mcp_notebook.taps.proxy.server) between clients and servers we did not write.

The official SDK client (mcp 2.3.0) talks to the SDK's own server (both eras, SSE and JSON
answers, the HTTP+SSE transport) directly and through the proxy: the results are the same, the
frames it sends are the same, and the bodies the proxy's sink saw are exactly the ones the client
sent and received (a transport wrapper on the client's side sees them, `support.http_wire`). The
demo server pings on the GET stream, resumes a dropped stream with Last-Event-ID and is deleted;
FastMCP's OAuth server shows its discovery documents through it. Secrets are checked in every
record, and a server that is not there gets a 502 at once.
"""

from __future__ import annotations

import json
import socket
import statistics
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from support.http_servers import serving
from support.http_wire import Wire
from support.servers import fastmcp_oauth_server, free_port, sdk_server_cmd

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.taps.proxy.server import TapProxy
from mcp_notebook.taps.wire.records import CLIENT, CLOSED, EVENT, HELLO, SERVER, Record, encode

pytestmark = pytest.mark.filterwarnings("ignore:ping is removed as of 2026-07-28")


class Sink:
    """What the proxy handed on, in order: records, and the secrets registered before them."""

    def __init__(self) -> None:
        self.records: list[Record] = []
        self.secrets: list[str] = []
        self.order: list[tuple[str, Any]] = []

    def __call__(self, record: Record) -> None:
        self.records.append(record)
        self.order.append(("record", record))

    def secret(self, value: str) -> None:
        self.secrets.append(value)
        self.order.append(("secret", value))

    def frames(self, side: str) -> list[bytes]:
        return [r.data for r in self.records if r.side == side]

    def events(self, name: str) -> list[Record]:
        return [r for r in self.records if r.side == EVENT and r.name == name]


@contextmanager
def tapped(upstream: str, **options: Any) -> Iterator[tuple[TapProxy, Sink]]:
    sink = Sink()
    with TapProxy(upstream, sink, secret=sink.secret, **options) as proxy:
        yield proxy, sink


async def sdk_session(url: str, mode: str, wire: Wire) -> dict[str, Any]:
    """What the SDK client gets from a short session with the SDK test server."""
    async with wire.client() as http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        tools = await client.list_tools()
        echoed = await client.call_tool("echo", {"text": "through the tap"})
        added = await client.call_tool("add", {"a": 2, "b": 3})
        return {
            "tools": sorted(tool.name for tool in tools.tools),
            "echo": echoed.model_dump(exclude={"meta"}),
            "add": added.model_dump(exclude={"meta"}),
        }


def assert_sink_saw_the_wire(sink: Sink, wire: Wire) -> None:
    assert sink.frames(CLIENT) == wire.sent
    assert sorted(sink.frames(SERVER)) == sorted(wire.received)
    assert sink.records[0].name == HELLO


@pytest.mark.parametrize(("mode", "extra"), [("legacy", ()), ("auto", ()), ("legacy", ("--json-response",))])
def test_the_sdk_client_gets_through_the_proxy_what_it_gets_direct(mode: str, extra: tuple[str, ...]) -> None:
    port = free_port()
    with serving(sdk_server_cmd("--transport", "streamable-http", "--port", str(port), *extra), port) as base:
        url = base + "/mcp"
        direct = Wire()
        expected = anyio.run(sdk_session, url, mode, direct)
        with tapped(url) as (proxy, sink):
            through = Wire()
            got = anyio.run(sdk_session, proxy.url, mode, through)
    assert got == expected
    assert through.sent == direct.sent  # the client's frames are the same with and without the tap
    assert_sink_saw_the_wire(sink, through)
    assert all(r.detail.get("session") for r in sink.records)
    vias = {r.detail["via"] for r in sink.records if r.side == SERVER}
    assert vias <= {"json", "sse"} and ("json" in vias) == ("--json-response" in extra or mode == "auto")


def test_the_http_sse_transport_works_through_the_proxy() -> None:
    port = free_port()

    async def session(url: str, wire: Wire) -> str:
        def factory(headers: Any = None, timeout: Any = None, auth: Any = None) -> httpx2.AsyncClient:
            return wire.client(headers=headers, timeout=timeout, auth=auth)

        async with Client(sse_client(url, httpx_client_factory=factory), mode="legacy") as client:
            result = await client.call_tool("echo", {"text": "old transport"})
            return json.dumps(result.model_dump(exclude={"meta"}), sort_keys=True)

    with serving(sdk_server_cmd("--transport", "sse", "--port", str(port)), port) as base:
        expected = anyio.run(session, base + "/sse", Wire())
        with tapped(base + "/sse") as (proxy, sink):
            wire = Wire()
            assert anyio.run(session, proxy.url, wire) == expected
    assert_sink_saw_the_wire(sink, wire)
    (hello,) = sink.events(HELLO)
    assert hello.detail["via"] == "legacy-sse"
    assert {r.detail["via"] for r in sink.records if r.side == SERVER} == {"legacy-sse"}
    assert sink.events(CLOSED)[0].detail["session"] == hello.detail["session"]
    endpoint_posts = [path for method, path, _ in wire.requests if method == "POST"]
    assert endpoint_posts and all(path.startswith("/messages") for path in endpoint_posts)


def test_server_pings_on_the_get_stream_reach_the_client_and_delete_closes_the_session() -> None:
    process, url = demo_server.start_http("legacy", ping_interval=0.05)
    with process, tapped(url) as (proxy, sink):
        with mcp_notebook.connect(proxy.url, era="legacy") as conn:
            process.stderr_log.wait_for(r"pong 3 ")  # the client answered three pings sent on the GET stream
            assert conn.call_tool("add", {"a": 1, "b": 2}).text == "3"
        (closed,) = sink.events(CLOSED)
    pings = [r for r in sink.records if r.side == SERVER and b'"method":"ping"' in r.data]
    assert pings and all(r.detail["via"] == "get" and r.detail["http"] == "GET" for r in pings)
    pongs = {json.loads(r.data)["id"] for r in sink.records if r.side == CLIENT and b'"result":{}' in r.data}
    assert {json.loads(r.data)["id"] for r in pings[:3]} <= pongs
    assert closed.detail == {"session": 1, "http": "DELETE", "status": 200}
    assert sink.records[-1] is closed


def test_a_dropped_stream_resumes_through_the_proxy_with_last_event_id() -> None:
    process, url = demo_server.start_http("legacy")
    with process, tapped(url) as (proxy, sink):
        with mcp_notebook.connect(proxy.url, era="legacy") as conn:
            assert conn.call_tool("drop_stream", {"seconds": 0.2}).text == "after the drop"
    answer = next(r for r in sink.records if r.side == SERVER and b"after the drop" in r.data)
    assert answer.detail["http"] == "GET" and answer.detail["event_id"]  # came on the resumed stream, with its id
    assert "resuming stream" in "\n".join(process.stderr_log.lines)


def headers(answer: httpx2.Response) -> list[tuple[str, str]]:
    return [(name, value) for name, value in answer.headers.multi_items() if name != "date"]


def test_oauth_discovery_documents_and_challenges_pass_through_unchanged() -> None:
    paths = ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-authorization-server", "/mcp"]
    with fastmcp_oauth_server() as url, tapped(url) as (proxy, sink):
        base = url.removesuffix("/mcp")
        with httpx2.Client(follow_redirects=False, timeout=30.0) as http:
            for path in paths:
                method = "POST" if path == "/mcp" else "GET"
                direct = http.request(method, base + path, json={} if method == "POST" else None)
                through = http.request(method, proxy.origin + path, json={} if method == "POST" else None)
                assert (through.status_code, through.content) == (direct.status_code, direct.content), path
                assert headers(through) == headers(direct), path
    assert direct.status_code == 401
    assert not sink.frames(SERVER)  # a 401's body is no message of the session


def test_secrets_are_registered_before_any_record_and_never_recorded() -> None:
    token = "Bearer tap-test-token-0123456789"
    process, url = demo_server.start_http("legacy")
    with process, tapped(url) as (proxy, sink):
        with mcp_notebook.connect(proxy.url, era="legacy", headers={"Authorization": token}) as conn:
            session_id = conn._session.transport.session_id
            conn.call_tool("echo", {"text": "hello"})
        with httpx2.Client(timeout=30.0) as http:  # a token request that goes through the proxy: its body is scanned
            http.post(proxy.origin + "/token", data={"grant_type": "refresh_token", "refresh_token": "rt-0123456789abcdef"})
    assert session_id and token in sink.secrets and token.split()[1] in sink.secrets and session_id in sink.secrets
    assert "rt-0123456789abcdef" in sink.secrets
    first_record = next(i for i, (kind, _) in enumerate(sink.order) if kind == "record")
    assert sink.order.index(("secret", token)) < first_record
    first_with_session = next(i for i, (kind, r) in enumerate(sink.order) if kind == "record" and r.side == SERVER)
    assert sink.order.index(("secret", session_id)) < first_with_session
    everything = b"".join(encode(r) for r in sink.records)
    for secret in (token, token.split()[1], session_id):
        assert secret.encode() not in everything


def test_a_large_answer_passes_whole_and_is_recorded_clipped() -> None:
    text = "x" * 50_000
    process, url = demo_server.start_http("legacy")
    with process, tapped(url, max_record_bytes=4096) as (proxy, sink):
        with mcp_notebook.connect(proxy.url, era="legacy") as conn:
            assert conn.call_tool("echo", {"text": text}).text == text
    clipped = [r for r in sink.records if r.side in (CLIENT, SERVER) and "size" in r.detail]
    assert all(len(r.data) == 4096 < r.detail["size"] for r in clipped)
    assert {r.side for r in clipped if r.detail["size"] > 50_000} == {CLIENT, SERVER}  # the echo's call and its answer


def test_a_server_that_is_not_there_gets_a_502_with_one_line_at_once() -> None:
    with tapped(f"http://127.0.0.1:{free_port()}/mcp") as (proxy, sink):
        with httpx2.Client(timeout=10.0) as http:
            answer = http.post(proxy.url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 502 and answer.headers["content-type"].startswith("text/plain")
    assert answer.text.count("\n") == 1 and answer.text.startswith("tap: ")
    assert sink.frames(SERVER) == []


def test_closing_the_proxy_ends_an_open_get_stream() -> None:
    process, url = demo_server.start_http("legacy")
    with process:
        proxy = TapProxy(url, lambda record: None).start()
        conn = mcp_notebook.connect(proxy.url, era="legacy")
        try:
            assert conn._session.transport.listening_settled.wait(10)
            proxy.close()
            proxy.close()  # idempotent
        finally:
            conn.close()


@pytest.mark.slow
def test_round_trips_through_the_proxy_against_direct() -> None:
    """Measured, not asserted (the report gives the numbers): ping and tools/call, our own client."""
    rounds = 200
    process, url = demo_server.start_http("legacy")

    def times(target: str) -> dict[str, float]:
        with mcp_notebook.connect(target, era="legacy") as conn:
            for _ in range(20):
                conn.ping()
            pings, calls = [], []
            for _ in range(rounds):
                started = time.perf_counter()
                conn.ping()
                pings.append(time.perf_counter() - started)
                started = time.perf_counter()
                conn.call_tool("add", {"a": 1, "b": 2})
                calls.append(time.perf_counter() - started)
        return {"ping": statistics.median(pings) * 1000, "call": statistics.median(calls) * 1000}

    with process, tapped(url) as (proxy, _):
        direct, through = times(url), times(proxy.url)
    for kind in ("ping", "call"):
        print(
            f"{kind}: direct {direct[kind]:.2f} ms, through the tap {through[kind]:.2f} ms, x{through[kind] / direct[kind]:.2f}"
        )


def test_a_client_that_expects_100_continue_is_told_to_go_on() -> None:
    """curl sends `Expect: 100-continue` before a body over 1 KiB, and waits for the go-ahead."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping", "params": {"_meta": {"pad": "x" * 2000}}}).encode()
    process, url = demo_server.start_http("legacy")
    with process, tapped(url) as (proxy, _), socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as sock:
        head = (
            f"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, "
            f"text/event-stream\r\nContent-Length: {len(body)}\r\nExpect: 100-continue\r\n\r\n"
        )
        sock.sendall(head.encode())
        assert sock.recv(1024).startswith(b"HTTP/1.1 100 ")
        sock.sendall(body)
        assert sock.recv(65536).startswith(b"HTTP/1.1 400 ")  # the server's own answer: a ping needs a session


def test_a_client_that_hangs_up_ends_its_exchange_upstream() -> None:
    """A POST whose answer is slow to come: the client leaves, and the proxy lets go of the server too."""
    with socket.create_server(("127.0.0.1", 0)) as upstream:
        upstream.settimeout(10)
        url = f"http://127.0.0.1:{upstream.getsockname()[1]}/mcp"
        with tapped(url) as (proxy, sink), socket.create_connection(("127.0.0.1", proxy.port), timeout=10) as client:
            body = b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow"}}'
            client.sendall(
                b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
            )
            server_side, _ = upstream.accept()
            with server_side:
                server_side.settimeout(10)
                got = b""
                while not got.endswith(body):
                    got += server_side.recv(65536)  # the request is whole upstream; no answer comes
                client.close()
                assert server_side.recv(65536) == b""  # the proxy closed its upstream connection
    assert sink.frames(CLIENT) == [body] and sink.frames(SERVER) == []
