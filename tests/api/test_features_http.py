"""The client surface against server-everything over Streamable HTTP: the families of
test_features.py again, plus what only HTTP has. Logs, resource updates, list changes and
roots requests travel on the GET listening stream; progress, sampling and elicitation on
the POST stream of the call; every reply and cancellation is a POST of its own. A smaller
run goes over the old HTTP+SSE transport.

One server per module (each mode); every test opens its own session on it, and the server
keeps its state (logging, subscriptions, roots) per session.
"""

from __future__ import annotations

import base64
import gzip
import threading
import uuid
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from support import feature_checks as over_stdio
from support.features import ctrl_c_on_first_report, notice, sent
from support.http_servers import everything, http_events
from support.servers import free_port

import mcp_notebook
from mcp_notebook.notebook.render.trace import trace_rows

pytestmark = [pytest.mark.node]

WAIT = 20.0  # how long an awaited event may take before the test fails: a hang guard, not a timing claim
LONG = "trigger-long-running-operation"


@pytest.fixture(scope="module")
def sse_url() -> Iterator[str]:
    """server-everything in sse mode (the HTTP+SSE transport of 2024-11-05)."""
    with everything(free_port(), "sse") as base:
        yield base + "/sse"


def connect(url: str, name: str = "everything-http", **options: Any) -> mcp_notebook.Connection:
    """A legacy session; connect() returns with its GET listening stream open (the TypeScript
    SDK drops what it would send there, logs, updates, roots requests, while none is open)."""
    conn = mcp_notebook.connect(url, name=name, era="legacy", **options)
    assert conn._session.transport.listening_settled.is_set()
    return conn


@pytest.fixture
def http_conn(url: str) -> Iterator[mcp_notebook.Connection]:
    with connect(url) as c:
        yield c


# ----------------------------------------------------------------- what stdio checks, over HTTP

SHARED = [
    over_stdio.test_tools_are_listed_with_their_schemas_and_cached,
    over_stdio.test_echo_sum_image_links_references_and_annotations,
    over_stdio.test_structured_content_is_validated_and_becomes_a_dataframe,
    over_stdio.test_bad_input_is_one_clear_line_and_nothing_is_sent,
    over_stdio.test_a_result_that_violates_the_output_schema_is_a_clear_error,
    over_stdio.test_key_value_arguments_follow_the_input_schema,
    over_stdio.test_resources_templates_blobs_prompts_and_completions,
]


@pytest.mark.parametrize("check", SHARED, ids=[check.__name__.removeprefix("test_") for check in SHARED])
def test_the_stdio_checks_hold_over_streamable_http(http_conn, check):
    """Tools, content types, structured results, bad input, resources, templates, prompts and
    completions: the stdio test bodies, run on an HTTP connection."""
    assert http_conn._session.transport.kind == "http"
    check(http_conn)


def test_what_the_server_itself_refuses(http_conn):
    unknown = http_conn.call_tool("nope", validate=False)  # past our own checks: the server's answer
    assert unknown.is_error and "Tool nope not found" in unknown.text
    wrong = http_conn.call_tool("get-sum", {"a": "x", "b": 1}, validate=False)
    assert wrong.is_error and "expected number, received string" in wrong.text
    missing = http_conn.call_tool("get-sum", {"a": 1}, validate=False)
    assert missing.is_error and "received undefined at b" in missing.text
    with pytest.raises(mcp_notebook.McpError) as info:  # a JSON-RPC error on the POST stream
        http_conn.request("prompts/get", {"name": "nope"})
    assert info.value.code == -32602 and "\n" not in str(info.value)


# ----------------------------------------------------------------- progress and cancellation


def test_progress_arrives_on_the_post_stream_before_the_result(http_conn):
    seen: list[tuple[float, float | None]] = []
    result = http_conn.call_tool(LONG, {"duration": 0.8, "steps": 4}, progress=lambda p, total, message: seen.append((p, total)))
    assert "completed" in result.text
    request = sent(http_conn, "tools/call")[-1]
    token = request["params"]["_meta"]["progressToken"]
    frames = http_conn.trace.frames("in")
    reply = next(e for e in frames if e.kind == "response" and e.id == request["id"])
    updates = [e for e in frames if e.method == "notifications/progress" and e.message["params"]["progressToken"] == token]
    # Every update reached the session before the result did...
    assert [e.message["params"]["progress"] for e in updates] == [1, 2, 3, 4]
    assert all(e.seq < reply.seq for e in updates)
    assert {e.detail["via"] for e in updates + [reply]} == {f"POST stream of request {request['id']}"}
    # ...and the callback saw each of them, in order, before call_tool returned.
    assert seen == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]
    streams = [e.detail["stream"] for e in http_conn.trace.entries() if e.kind == "stream-open"]
    assert f"POST stream of request {request['id']}" in streams


def test_cancel_by_id_a_timeout_and_ctrl_c_send_cancelled_over_http(http_conn):
    running, outcome = threading.Event(), []

    def run() -> None:
        try:
            http_conn.call_tool(LONG, {"duration": 60, "steps": 600}, progress=lambda *a: running.set())
        except mcp_notebook.McpNotebookError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    try:
        assert running.wait(WAIT)  # the first progress: the call is in flight
        by_id = sent(http_conn, "tools/call")[-1]["id"]
        assert http_conn.cancel(by_id)
    finally:
        worker.join(WAIT)
    assert isinstance(outcome[0], mcp_notebook.ConnectionClosed) and not http_conn.cancel(by_id)

    # One step of 60 s: no progress at all, so the idle timeout is what ends the call.
    with pytest.raises(mcp_notebook.RequestTimeout, match=r"no response or progress within 0\.5 s"):
        http_conn.call_tool(LONG, {"duration": 60, "steps": 1}, timeout=0.5)
    timed_out = sent(http_conn, "tools/call")[-1]["id"]

    with pytest.raises(KeyboardInterrupt):
        http_conn.call_tool(LONG, {"duration": 60, "steps": 600}, progress=ctrl_c_on_first_report())
    by_ctrl_c = sent(http_conn, "tools/call")[-1]["id"]

    cancelled = [m["params"] for m in sent(http_conn, "notifications/cancelled")]
    assert cancelled == [
        {"requestId": by_id, "reason": "cancelled by the user"},
        {"requestId": timed_out, "reason": "no response or progress within 0.5 s"},
        {"requestId": by_ctrl_c, "reason": "cancelled by the user"},
    ]
    assert http_conn.call_tool("echo", {"message": "still usable"}).text == "Echo: still usable"
    # A request is POSTed only once the notifications and replies before it are through, so
    # by now the server has accepted each of them (202), the cancellations included.
    one_way = sent(http_conn, kind="notification") + sent(http_conn, kind="response") + sent(http_conn, kind="error")
    assert [status for method, status in http_events(http_conn) if method == "POST"].count(202) == len(one_way)


def test_abandoned_calls_do_not_hold_their_streams_open(http_conn):
    """The TypeScript SDK never answers a cancelled request, so its POST stream would stay open
    until the session ends: more of those than the HTTP pool has connections (httpx: 100)
    and every later POST, a pong included, would wait for a free connection forever."""
    calls = 110

    def abandoned(_: int) -> None:  # no progress token, and no answer for 60 s: the timeout ends each one
        with pytest.raises(mcp_notebook.RequestTimeout):
            http_conn.request("tools/call", {"name": LONG, "arguments": {"duration": 60, "steps": 1}}, timeout=0.5)

    with ThreadPoolExecutor(max_workers=calls) as pool:
        list(pool.map(abandoned, range(calls)))
    assert len(sent(http_conn, "notifications/cancelled")) == calls
    assert http_conn.request("tools/call", {"name": "echo", "arguments": {"message": "free"}}, timeout=WAIT)
    closed = {e.detail["id"] for e in http_conn.trace.entries() if e.kind == "stream-cancelled"}
    assert closed == {m["id"] for m in sent(http_conn, "tools/call")[:calls]}


# ----------------------------------------------------------------- the GET listening stream


def test_simulated_logging_arrives_on_the_listening_stream(http_conn):
    http_conn.set_log_level("debug")
    session_id = http_conn._session.transport.session_id
    assert session_id
    ours = notice(http_conn, "notifications/message", lambda params: f"SessionId {session_id}" in str(params.get("data")))
    http_conn.call_tool("toggle-simulated-logging")  # logs once at once, then every 5 s
    try:
        assert ours.wait(WAIT)
    finally:
        http_conn.call_tool("toggle-simulated-logging")
    record = next(r for r in http_conn.logs if session_id in str(r.data))
    frame = next(e for e in http_conn.trace.frames("in") if e.method == "notifications/message" and session_id in str(e.message))
    assert frame.detail == {"via": "GET stream"}  # not the POST stream of the tool call
    assert trace_rows([frame])[0].method == "notifications/message (GET stream)"  # as the trace widget shows it
    assert record.level in ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
    assert "level" in record.data and record.logger is None
    assert sent(http_conn, "logging/setLevel")[0]["params"] == {"level": "debug"}
    assert ("GET", 200) in http_events(http_conn)
    with pytest.raises(mcp_notebook.UsageError, match="unknown log level"):
        http_conn.set_log_level("loud")


def test_resource_updates_arrive_for_a_subscription(http_conn):
    uri = "demo://resource/dynamic/text/1"
    acknowledged = notice(http_conn, "notifications/message", lambda params: f"URI: {uri}" in str(params.get("data")))
    updated = threading.Event()
    http_conn.subscribe(uri, lambda updated_uri: updated.set() if updated_uri == uri else None)
    assert acknowledged.wait(WAIT)  # the server logs each subscription on the listening stream
    http_conn.call_tool("toggle-subscriber-updates")  # one update at once, then every 5 s
    try:
        assert updated.wait(WAIT)
    finally:
        http_conn.call_tool("toggle-subscriber-updates")
        http_conn.unsubscribe(uri)
    assert http_conn.subscriptions.updates(uri) >= 1 and http_conn.subscriptions.updates() == http_conn.subscriptions.updates(uri)
    assert [m["params"]["uri"] for m in sent(http_conn, "resources/subscribe")] == [uri]
    assert [m["params"]["uri"] for m in sent(http_conn, "resources/unsubscribe")] == [uri]


def test_a_new_resource_announces_itself_and_the_list_cache_refreshes(http_conn):
    before = http_conn.list_resources()
    assert http_conn.list_resources() is before
    changed = notice(http_conn, "notifications/resources/list_changed")
    # Session resources live in one server-wide map by name: a fresh name per run. And never
    # the tool's default `data`, an internet URL: a data: URI it reads itself.
    name = f"notes-{uuid.uuid4().hex[:8]}.txt.gz"
    data = "data:text/plain;base64," + base64.b64encode(b"hello over HTTP").decode()
    link = http_conn.call_tool("gzip-file-as-resource", {"name": name, "data": data, "outputType": "resourceLink"})
    assert link.content[0]["type"] == "resource_link"
    assert changed.wait(WAIT)
    after = http_conn.list_resources()
    assert after is not before and name in after.names() and name not in before.names()
    assert http_conn.list_resources() is after
    assert gzip.decompress(http_conn.read_resource(link.content[0]["uri"]).blobs[0]) == b"hello over HTTP"


# ----------------------------------------------------------------- server requests


def test_roots_sampling_and_elicitation_answered_by_callbacks(url, tmp_path):
    asked: list[dict[str, Any]] = []

    def sample(params: dict[str, Any]) -> str:
        asked.append(params)
        return "a sampled reply"

    def elicit(params: dict[str, Any]) -> dict[str, Any] | None:
        asked.append(params)
        if params.get("mode") == "url":
            return None if params["url"].endswith("/decline") else {"action": "accept"}
        # The schema's defaults fill the rest. (The published 2025-11-25 schema.json allows
        # only integer numbers in ElicitResult content, so the number field is answered here.)
        return {"name": "Ada", "number": 7}

    with connect(url, name="asks", roots=[tmp_path], sampling=sample, elicitation=elicit) as conn:
        caps = sent(conn, "initialize")[0]["params"]["capabilities"]
        assert caps == {
            "roots": {"listChanged": True},
            "sampling": {},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}, "list": {}, "cancel": {}},
        }
        roots = conn.call_tool("get-roots-list").text
        assert "(1 total)" in roots and tmp_path.as_uri() in roots
        assert "a sampled reply" in conn.call_tool("trigger-sampling-request", {"prompt": "hello"}).text
        form = conn.call_tool("trigger-elicitation-request").text
        assert "Name: Ada" in form and "Favorite Integer: 42" in form and "Favorite Number: 7" in form
        accepted = conn.call_tool("trigger-url-elicitation", {"url": "https://example.com/login"}).text
        assert "completed the URL elicitation" in accepted
        declined = conn.call_tool("trigger-url-elicitation", {"url": "https://example.com/decline"}).text
        assert "declined to open the URL" in declined
        assert "hello" in asked[0]["messages"][0]["content"]["text"]
        assert [a.get("mode") for a in asked[1:]] == [None, "url", "url"]

        replies = {e.id: e.message for e in conn.trace.frames("out") if e.kind in ("response", "error")}
        answered: dict[str, list[dict[str, Any]]] = {}
        for request in conn.trace.frames("in"):
            if request.kind == "request" and request.id in replies:
                answered.setdefault(request.method, []).append(replies[request.id]["result"])
    assert answered["roots/list"] and all(
        r == {"roots": [{"uri": tmp_path.as_uri(), "name": tmp_path.name}]} for r in answered["roots/list"]
    )
    assert answered["sampling/createMessage"] == [
        {
            "role": "assistant",
            "content": {"type": "text", "text": "a sampled reply"},
            "model": "notebook-user",
            "stopReason": "endTurn",
        }
    ]
    form_reply, url_accept, url_decline = answered["elicitation/create"]
    assert form_reply["action"] == "accept"
    assert form_reply["content"]["name"] == "Ada" and form_reply["content"]["number"] == 7
    assert form_reply["content"]["integer"] == 42 and form_reply["content"]["untitledSingleSelectEnum"] == "Monica"
    assert (url_accept, url_decline) == ({"action": "accept"}, {"action": "decline"})


def test_changed_roots_are_asked_for_again(url):
    one = {"uri": "file:///srv/one", "name": "one"}
    with connect(url, name="roots", roots=[one]) as conn:
        # After this the server has our roots, and listens for roots/list_changed.
        assert "(1 total)" in conn.call_tool("get-roots-list").text
        synced = notice(conn, "notifications/message", lambda params: "2 root(s) received" in str(params.get("data")))
        conn.set_roots([one, "file:///srv/two"])
        assert sent(conn, "notifications/roots/list_changed")
        assert synced.wait(WAIT)  # it asked again (on the listening stream) and logged what it got
        view = conn.call_tool("get-roots-list").text
        assert "(2 total)" in view and "file:///srv/two" in view and conn.roots[1]["name"] == "two"
        assert len([e for e in conn.trace.frames("in") if e.method == "roots/list"]) >= 2


def test_roots_cannot_change_where_none_were_declared(url):
    with connect(url, name="bare") as conn:
        with pytest.raises(mcp_notebook.UsageError, match="declared no roots capability"):
            conn.set_roots(["/tmp"])
        assert conn.roots is None and not sent(conn, "notifications/roots/list_changed")


# ----------------------------------------------------------------- HTTP+SSE (2024-11-05)


def test_a_smoke_run_over_the_old_http_sse_transport(sse_url):
    with mcp_notebook.connect(
        sse_url, name="everything-sse", era="legacy", elicitation=lambda params: {"name": "Grace", "number": 3}
    ) as conn:
        assert conn._session.transport.kind == "sse"
        assert conn.call_tool("echo", {"message": "over sse"}).text == "Echo: over sse"
        seen: list[float] = []
        result = conn.call_tool(LONG, {"duration": 0.3, "steps": 3}, progress=lambda p, total, message: seen.append(p))
        assert "completed" in result.text and seen[-1] == 3.0
        assert "Name: Grace" in conn.call_tool("trigger-elicitation-request").text
        assert "Resource 4" in conn.read_template("Dynamic Text Resource", resourceId=4).text
        reply = next(e.message for e in conn.trace.frames("out") if e.kind == "response")
        assert reply["result"]["action"] == "accept" and reply["result"]["content"]["name"] == "Grace"
        # Everything came back on the one GET stream; each POST to the endpoint was accepted.
        assert http_events(conn)[:2] == [("POST", 404), ("GET", 200)]
        assert {status for method, status in http_events(conn)[2:] if method == "POST"} == {202}
