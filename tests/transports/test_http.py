"""The client over HTTP against real servers on 127.0.0.1: the SDK, FastMCP, server-everything."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest
from support.http_servers import RAW_HTTP, everything, http_events, sdk_http, serving, text_of
from support.servers import fastmcp_server_cmd, free_port
from support.waiting import wait_until

import mcp_notebook

pytestmark = [pytest.mark.node]

SERVERS = {
    "sdk-sse": (lambda port: sdk_http(port), "/mcp", {"name": "echo", "arguments": {"text": "hi"}}, "http"),
    "sdk-json": (lambda port: sdk_http(port, "--json-response"), "/mcp", {"name": "echo", "arguments": {"text": "hi"}}, "http"),
    "fastmcp": (
        lambda port: serving(fastmcp_server_cmd("--transport", "http", "--port", str(port)), port),
        "/mcp",
        {"name": "echo", "arguments": {"text": "hi"}},
        "http",
    ),
    "everything-streamable": (
        lambda port: everything(port, "streamableHttp"),
        "/mcp",
        {"name": "echo", "arguments": {"message": "hi"}},
        "http",
    ),
    "everything-sse": (lambda port: everything(port, "sse"), "/sse", {"name": "echo", "arguments": {"message": "hi"}}, "sse"),
}


@pytest.mark.parametrize("server", list(SERVERS))
def test_handshake_ping_and_tools_over_http(server, port):
    start, path, echo_call, kind = SERVERS[server]
    with start(port) as base, mcp_notebook.connect(base + path, era="legacy", name=server) as conn:
        assert conn.state == "ready" and conn.protocol_version == "2025-11-25"
        assert conn._session.transport.kind == kind
        assert conn.ping() > 0
        assert "hi" in text_of(conn.request("tools/call", echo_call))
        if kind == "sse":  # the POST to the SSE URL failed, so we fell back to HTTP+SSE
            assert http_events(conn)[0] == ("POST", 404)
            assert any(e.kind == "fallback" for e in conn.trace.entries())
    if kind == "http":
        assert http_events(conn)[-1][0] == "DELETE"


def test_forced_sse_transport_skips_the_streamable_attempt(port):
    with everything(port, "sse") as base, mcp_notebook.connect(base + "/sse", era="legacy", name="sse", transport="sse") as conn:
        assert http_events(conn)[0] == ("GET", 200)
        assert not any(e.kind == "fallback" for e in conn.trace.entries())
        endpoint = next(e for e in conn.trace.entries() if e.kind == "endpoint")
        assert endpoint.detail["url"].startswith(base + "/message?sessionId=")


def test_http_only_transport_refuses_the_fallback(port):
    with everything(port, "sse") as base:
        with pytest.raises(mcp_notebook.HandshakeError, match="HTTP 404"):
            mcp_notebook.connect(base + "/sse", era="legacy", name="nofallback", transport="http", timeout=10)


def test_a_path_with_no_endpoint_says_404_in_one_line(port):
    with sdk_http(port) as base:
        with pytest.raises(mcp_notebook.HandshakeError) as raised:
            mcp_notebook.connect(base + "/nope", name="nopath", timeout=10)
    said = str(raised.value)
    assert "answered 404 to POST and GET: no MCP endpoint there (check the path, often /mcp)" in said
    assert "\n" not in said


def test_session_headers_on_every_request_after_initialize(port):
    with sdk_http(port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="sdk") as conn:
        conn.ping()
        transport = conn._session.transport
        assert transport.session_id and transport.protocol_version == "2025-11-25"
        headers = transport._request_headers()
        assert headers["Mcp-Session-Id"] == transport.session_id
        assert headers["MCP-Protocol-Version"] == "2025-11-25"
        # The server checks both headers; a missing or wrong one would have been a 400.
        assert all(status < 400 for _, status in http_events(conn))


def test_server_pings_on_the_get_stream_are_answered_while_the_main_thread_sleeps(port):
    argv = fastmcp_server_cmd("--transport", "http", "--port", str(port), "--ping-interval-ms", "100")
    with serving(argv, port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="pinger") as conn:
        conn.request("tools/list")
        naps: list[tuple[float, float]] = []
        deadline = time.monotonic() + 30
        while conn.health.server_pings < 5 and time.monotonic() < deadline:
            start = time.monotonic()
            time.sleep(0.3)  # the main thread is blocked: the scenario, not synchronisation
            naps.append((start, time.monotonic()))
        health = conn.health
        assert health.server_pings >= 5 and health.pongs_sent == health.server_pings
        pings = {e.id: e for e in conn.trace.frames("in") if e.method == "ping"}
        pongs = {e.id: e for e in conn.trace.frames("out") if e.note == "pong"}
        assert set(pongs) == set(pings)
        assert any(a <= p.monotonic <= b for p in pongs.values() for a, b in naps)
        assert any(e.kind == "stream-open" and e.detail["stream"] == "GET stream" for e in conn.trace.entries())


def test_server_pings_on_a_post_stream_are_answered(port):
    with sdk_http(port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="sdk") as conn:
        result = conn.request("tools/call", {"name": "ping_client", "arguments": {"count": 3}})
        assert text_of(result) == "3"
        assert conn.health.server_pings == conn.health.pongs_sent == 3


def test_a_user_ping_handler_wins_over_http(port):
    calls: list[dict] = []
    with (
        sdk_http(port) as base,
        mcp_notebook.connect(base + "/mcp", era="legacy", name="sdk", handlers={"ping": calls.append}) as conn,
    ):
        assert text_of(conn.request("tools/call", {"name": "ping_client", "arguments": {"count": 2}})) == "2"
        assert len(calls) == 2
        assert [e.note for e in conn.trace.frames("out") if e.kind == "response"] == ["from user handler"] * 2


def test_roots_list_arrives_on_the_get_stream(port):
    roots = {"roots": [{"uri": "file:///tmp/project", "name": "project"}]}
    answered: list[dict] = []

    def list_roots(params: dict) -> dict:
        answered.append(params)
        return roots

    with (
        everything(port, "streamableHttp") as base,
        mcp_notebook.connect(
            base + "/mcp",
            era="legacy",
            name="roots",
            capabilities={"roots": {"listChanged": True}},
            handlers={"roots/list": list_roots},
        ) as conn,
    ):
        # server-everything asks for roots shortly after `initialized`; its log line follows our answer.
        deadline = time.monotonic() + 20
        while not any(e.method == "notifications/message" for e in conn.trace.frames("in")):
            assert time.monotonic() < deadline, "server-everything never asked for roots"
            conn.ping()
        request = next(e for e in conn.trace.frames("in") if e.method == "roots/list")
        assert request.id == 0  # a falsy id is still an id
        assert answered == [{}]
        reply = next(e for e in conn.trace.frames("out") if e.id == 0)
        assert reply.message["result"] == roots


def test_session_expiry_is_recovered_transparently(port):
    with sdk_http(port) as base:
        conn = mcp_notebook.connect(base + "/mcp", era="legacy", name="sdk")
    first_session = conn._session.transport.session_id
    try:
        with sdk_http(port):  # the same port, a new server that never heard of our session
            result = conn.request("tools/call", {"name": "echo", "arguments": {"text": "again"}}, timeout=30)
            assert text_of(result) == "again"
            assert conn.state == "ready"
            assert conn._session.counters.session_recoveries == 1
            assert conn._session.transport.session_id not in (None, first_session)
            states = [e.detail["state"] for e in conn.trace.entries() if e.kind == "state"]
            assert states[-2:] == ["reconnecting", "ready"]
            resent = [e for e in conn.trace.frames("out") if e.note == "resent in a new session"]
            assert [e.method for e in resent] == ["tools/call"]
            initializes = [e for e in conn.trace.frames("out") if e.method == "initialize"]
            assert len(initializes) == 2
    finally:
        conn.close()


def test_a_request_queued_behind_a_notification_that_met_the_404_goes_to_the_new_session(port):
    """The notification's 404 starts the renewal; the request that waited for the notification to
    go out (frames keep their order) must be sent in the new session, not without one."""
    with sdk_http(port) as base:
        conn = mcp_notebook.connect(base + "/mcp", era="legacy", name="sdk")
    try:
        with sdk_http(port):  # a new server that never heard of our session
            conn.notify("notifications/roots/list_changed")
            result = conn.request("tools/call", {"name": "echo", "arguments": {"text": "queued"}}, timeout=30)
            assert text_of(result) == "queued"
            assert conn._session.counters.session_recoveries == 1
            posts = [e.detail for e in conn.trace.entries() if e.kind == "http" and e.detail.get("method") == "POST"]
            assert [d["status"] for d in posts if d["status"] >= 400] == [404]  # none went out without a session
    finally:
        conn.close()


def test_a_404_on_the_listening_stream_alone_renews_the_session(port):
    """The server forgot our session and says so only on the GET that resumes the listening
    stream (no request of ours is in flight to meet a 404): the client shakes hands anew."""
    with (
        serving([*RAW_HTTP, str(port)], port) as base,
        mcp_notebook.connect(base + "/forgetful", era="legacy", name="forgetful") as conn,
    ):
        first = conn._session.transport.session_id
        assert text_of(conn.request("tools/call", {"name": "forget-session"})) == "forgotten"
        wait_until(
            lambda: conn._session.counters.session_recoveries == 1 and conn.state == "ready" and listening_streams(conn) == 2,
            "a new session after the GET stream's 404",
        )
        assert conn._session.transport.session_id not in (None, first)
        assert [method for method, status in http_events(conn) if status == 404] == ["GET"]
        assert len([e for e in conn.trace.frames("out") if e.method == "initialize"]) == 2
        assert conn.ping() > 0  # in the new session


def listening_streams(conn: mcp_notebook.Connection) -> int:
    return sum(e.kind == "stream-open" and e.detail.get("stream") == "GET stream" for e in conn.trace.entries())


def test_a_dropped_response_stream_is_resumed_with_last_event_id(port):
    with sdk_http(port, "--resumable") as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="sdk") as conn:
        result = conn.request("tools/call", {"name": "drop_stream", "arguments": {"seconds": 0.3}}, timeout=30)
        assert text_of(result) == "after the drop"
        resume = next(e for e in conn.trace.entries() if e.kind == "stream-resume")
        closed = [e for e in conn.trace.entries() if e.kind == "stream-closed" and e.seq < resume.seq]
        assert resume.detail["last_event_id"] == closed[-1].detail["last_event_id"] is not None
        assert conn._session.transport.stream_resumes >= 1


TOKEN = "tok-" + "s3cr3t" * 4
CREDENTIAL_ROUTES = {  # each route alone: one that also took another would hide a broken one
    "authorization header": {"headers": {"Authorization": f"Bearer {TOKEN}"}},
    "api key header": {"headers": {"X-Api-Key": TOKEN}},
    "bearer token env": {"bearer_token_env": "MCP_TEST_TOKEN"},
    "query": {"path": "/mcp?access_token=" + TOKEN},
    "secrets=": {"secrets": [TOKEN]},
}


@pytest.mark.parametrize("route", list(CREDENTIAL_ROUTES))
def test_a_credential_never_reaches_the_trace_status_or_output(route, port, capsys, monkeypatch):
    """The server echoes the credential back; whichever one route brought it, it is redacted."""
    monkeypatch.setenv("MCP_TEST_TOKEN", TOKEN)
    options = dict(CREDENTIAL_ROUTES[route])
    path = options.pop("path", "/mcp")
    with sdk_http(port) as base, mcp_notebook.connect(base + path, name="secret", era="legacy", **options) as conn:
        assert text_of(conn.request("tools/call", {"name": "echo", "arguments": {"text": TOKEN}})) == TOKEN
        dumped = json.dumps(conn.trace.to_records(), default=str)
        assert TOKEN not in dumped and "[redacted]" in dumped
        assert TOKEN not in repr(conn) and TOKEN not in str(conn.health)
    assert TOKEN not in capsys.readouterr().out


def test_pings_with_ids_we_cannot_echo_get_method_not_found_over_http(port):
    with serving([*RAW_HTTP, str(port)], port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="raw") as conn:
        replies = json.loads(text_of(conn.request("tools/call", {"name": "bad-ids"}, timeout=30)))
        errors = [r for r in replies if "error" in r]
        assert len(errors) == 4
        assert all("id" not in r and r["error"]["code"] == -32601 for r in errors)
        assert replies[-1] == {"jsonrpc": "2.0", "id": "good", "result": {}}
        assert conn.health.invalid_frames == 4


def test_a_cookie_the_server_sets_goes_back_with_every_later_request(port):
    """A load balancer pins a client to one node with a cookie: every later POST brings it back
    (/sticky answers one without it with 403)."""
    with (
        serving([*RAW_HTTP, str(port)], port) as base,
        mcp_notebook.connect(base + "/sticky", era="legacy", name="sticky") as conn,
    ):
        assert conn.ping() > 0 and conn.ping() > 0


def test_connect_returns_once_the_listening_stream_is_open(port):
    """A server that sends a request on its GET stream right after the handshake, and drops it
    while no stream is open, gets its answer when a program calls at once after connect()."""
    with serving([*RAW_HTTP, str(port)], port) as base, mcp_notebook.connect(base + "/late", era="legacy", name="late") as conn:
        assert text_of(conn.request("tools/call", {"name": "ping-via-listener"})) == "answered"
        opened = next(e for e in conn.trace.entries() if e.kind == "stream-open" and e.detail.get("stream") == "GET stream")
        handshake_done = next(e for e in conn.trace.entries() if e.kind == "state" and e.detail.get("state") == "ready")
        assert opened.seq < handshake_done.seq  # the connection was ready only once the stream was open


@pytest.mark.parametrize(
    ("path", "says"),
    [
        ("/auth", "HTTP 401 Unauthorized: missing bearer token"),
        ("/html", "HTML page, not MCP"),
        ("/broken", "HTTP 500 Internal Server Error: the server fell over"),
    ],
)
def test_http_failures_are_one_clear_line(port, path, says):
    with serving([*RAW_HTTP, str(port)], port) as base:
        with pytest.raises(mcp_notebook.HandshakeError) as caught:
            mcp_notebook.connect(base + path, era="legacy", name="bad", transport="http", timeout=10)
    assert says in str(caught.value)
    assert "\n" not in str(caught.value)


def test_connection_refused_says_what_to_do():
    port = free_port()
    with pytest.raises(
        mcp_notebook.HandshakeError, match=f"cannot connect to http://127.0.0.1:{port}/mcp.*is the server running"
    ):
        mcp_notebook.connect(f"http://127.0.0.1:{port}/mcp", era="legacy", name="nobody", timeout=10)


@pytest.fixture
def one_mb_messages() -> Iterator[int]:
    """The message limit at 1 MB for the test (the setting every new connection reads)."""
    from mcp_notebook.api.connecting.settings import defaults

    old = getattr(defaults, "max_frame_bytes", None)
    defaults.max_frame_bytes = 1 << 20
    yield 1 << 20
    defaults.max_frame_bytes = old


@pytest.mark.parametrize("scenario", ["big-body", "big-event"])
def test_a_body_or_event_over_the_message_limit_fails_its_request_at_once(port, one_mb_messages, scenario):
    with serving([*RAW_HTTP, str(port)], port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="big") as conn:
        with pytest.raises(mcp_notebook.TransportError, match=r"over 1 MB.*max_frame_bytes") as caught:
            conn.request("tools/call", {"name": scenario, "arguments": {"size": 64 << 20}}, timeout=120)
        assert "\n" not in str(caught.value)
        assert conn.ping() > 0 and conn.state == "ready"
        under = text_of(conn.request("tools/call", {"name": scenario, "arguments": {"size": 900_000}}, timeout=120))
        assert len(under) > 800_000


@pytest.mark.parametrize(
    ("shape", "problem"),
    [("nested", "invalid JSON: nested too deeply to decode"), ("not-utf8", "not UTF-8: invalid continuation byte at byte ")],
)
def test_a_body_no_decoder_could_read_fails_its_request_at_once(port, shape, problem):
    with serving([*RAW_HTTP, str(port)], port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="bad") as conn:
        with pytest.raises(mcp_notebook.ProtocolViolation, match="malformed response") as caught:
            conn.request("tools/call", {"name": "malformed", "arguments": {"shape": shape}}, timeout=60)
        assert problem in str(caught.value)
        answer = conn.trace.frames("in")[-1]
        assert answer.kind == "invalid" and answer.method == "tools/call" and problem in (answer.note or "")
        assert conn.ping() > 0 and conn.state == "ready"


def test_the_request_timeout_covers_reading_the_body(port):
    with serving([*RAW_HTTP, str(port)], port) as base, mcp_notebook.connect(base + "/mcp", era="legacy", name="slow") as conn:
        with pytest.raises(mcp_notebook.RequestTimeout):
            conn.request("tools/call", {"name": "slow-body", "arguments": {"size": 10_000}}, timeout=1)
        request = conn.trace.filter(method="tools/call", direction="out")[-1]
        assert [e.detail["id"] for e in conn.trace.filter(kind="stream-cancelled")] == [request.id]
        assert conn.ping() > 0
