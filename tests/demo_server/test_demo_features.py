"""The demo server's lesson features through our own client, on both transports and in both eras.

Resources and templates, prompts with `completion/complete`, resource subscriptions
(legacy `resources/subscribe`, modern `subscriptions/listen`), logging levels, elicitation
and sampling (legacy server requests, modern `input_required` rounds) and, on legacy HTTP,
a dropped response stream that only resumption (`Last-Event-ID`) brings back. Every frame
the server sent is validated against the official schema of the negotiated version, and
every frame the client sent too. The real-peer versions of these checks (server-everything,
the official SDK server) are in tests/api.
"""

from __future__ import annotations

import threading

import httpx2
import pytest
from support.demo_wire import LEGACY, initialize_params, tool_call
from support.schema import _check, _result_definition, method_definition, validate_client_frame

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.session import health_view

EMPTY_RESULTS = {"resources/subscribe", "resources/unsubscribe", "logging/setLevel", "ping"}
COMBOS = [("stdio", "legacy"), ("stdio", "modern"), ("http", "legacy"), ("http", "modern")]
WAIT = 30.0


def validate_server_frame(frame: dict, version: str, answers: str | None) -> None:
    """Assert `frame` is a valid server-to-client message of `version` (`answers`: the request's method)."""
    modern_envelopes = version >= "2025-11-25"
    if "method" in frame:
        union = "ServerRequest" if "id" in frame else "ServerNotification"
        _check(frame, version, "JSONRPCRequest" if "id" in frame else "JSONRPCNotification", "server message")
        name = method_definition(version, frame["method"], union)
        assert name is not None, f"{frame['method']} is not a {union} in {version}"
        _check(frame, version, name, f"server {frame['method']}")
        return
    if "error" in frame:
        _check(frame, version, "JSONRPCErrorResponse" if modern_envelopes else "JSONRPCError", "server error")
        return
    _check(frame, version, "JSONRPCResultResponse" if modern_envelopes else "JSONRPCResponse", "server response")
    assert answers is not None
    result = frame["result"]
    if result.get("resultType") == "input_required":
        _check(result, version, "InputRequiredResult", f"result of {answers}")
    elif answers in EMPTY_RESULTS:
        _check(result, version, "EmptyResult", f"result of {answers}")
    elif answers != "subscriptions/listen":
        request_def = method_definition(version, answers, "ClientRequest")
        assert request_def is not None, answers
        _check(result, version, _result_definition(version, request_def, answers), f"result of {answers}")


def validate_trace(conn: mcp_notebook.Connection) -> int:
    version = conn.protocol_version
    assert version is not None
    checked = 0
    for entry in conn.trace.filter(frames_only=True):
        if not isinstance(entry.message, dict):
            continue
        if entry.direction == "in":
            validate_server_frame(entry.message, version, entry.method)
        elif "method" in entry.message or "result" in entry.message:
            validate_client_frame(entry.message, version, answers_method=entry.method if "method" not in entry.message else None)
        checked += 1
    return checked


def answer_elicitation(params: dict) -> dict:
    assert params["requestedSchema"]["required"] == ["name"]
    return {"action": "accept", "content": {"name": "Ada", "colour": "blue"}}


def answer_sampling(params: dict) -> dict:
    assert "long text" in params["messages"][0]["content"]["text"]
    return {"role": "assistant", "content": {"type": "text", "text": "It is long."}, "model": "test-model"}


@pytest.fixture(params=COMBOS, ids=[f"{t}-{e}" for t, e in COMBOS])
def demo_conn(request):
    transport, era = request.param
    c = mcp_notebook.demo(
        f"features-{transport}-{era}",
        transport=transport,
        era=era,
        keepalive=None,
        load_magics=False,
        elicitation=answer_elicitation,
        sampling=answer_sampling,
    )
    try:
        yield c
    finally:
        c.close()
    assert validate_trace(c) >= 6


def test_resources_and_templates(demo_conn):
    assert demo_conn.server_capabilities["resources"] == {"subscribe": True, "listChanged": False}
    assert demo_conn.list_resources().names() == ["readme", "counter", "image"]
    assert demo_conn.read_resource("demo://readme").text.startswith("# mcp-notebook demo server")
    image = demo_conn.read_resource("demo://image")
    assert image.contents[0]["mimeType"] == "image/png" and image.contents[0]["blob"]
    assert demo_conn.read_template("greeting", person="Grace Hopper").text == "Hello, Grace Hopper!"
    assert demo_conn.read_template("square", n=12).text == '{"n": 12, "square": 144}'
    with pytest.raises(mcp_notebook.McpError) as missing:
        demo_conn.read_resource("demo://nowhere")
    assert missing.value.code == -32002


def test_prompts_and_completion(demo_conn):
    assert demo_conn.list_prompts().names() == ["greet", "review"]
    prompt = demo_conn.get_prompt("greet", {"name": "Ada", "style": "pirate"})
    assert "Ahoy, Ada!" in prompt.text
    assert demo_conn.complete("prompt:greet", "name", "g") == ["Grace", "Guido"]
    assert demo_conn.complete("prompt:greet", "style", "f") == ["formal", "friendly"]
    assert "Cap'n Ada" in demo_conn.complete("prompt:greet", "name", "", context={"style": "pirate"})
    assert demo_conn.complete("resource:demo://greeting/{person}", "person", "A") == ["Ada", "Alan"]
    with pytest.raises(mcp_notebook.McpError) as missing:
        demo_conn.request("prompts/get", {"name": "greet", "arguments": {}})  # get_prompt() would refuse to send it
    assert missing.value.code == -32602


def test_subscription_updates(demo_conn):
    updated = threading.Event()
    demo_conn.subscribe("demo://counter", lambda *args: updated.set())
    assert demo_conn.call_tool("bump", {"by": 2}).text == "counter is 2; 1 subscriber told"
    assert updated.wait(WAIT)
    assert demo_conn.subscriptions.updates("demo://counter") == 1
    assert demo_conn.read_resource("demo://counter").text == "2"
    demo_conn.unsubscribe("demo://counter")
    assert demo_conn.call_tool("bump").text == "counter is 3; 0 subscribers told"


def test_log_levels(demo_conn):
    demo_conn.set_log_level("warning")
    assert demo_conn.call_tool("log", {"message": "quiet", "level": "info"}).text.startswith("not sent")
    assert demo_conn.call_tool("log", {"message": "loud", "level": "error"}).text == "sent at error"
    assert [(r.level, r.data) for r in demo_conn.logs] == [("error", "loud")]


def test_elicitation_and_sampling(demo_conn):
    assert demo_conn.call_tool("ask_name").text == "Hello, Ada! (blue is a fine colour.)"
    assert demo_conn.call_tool("summarize", {"text": "a long text"}).text == "test-model says: It is long."
    asked = "elicitation/create" if demo_conn.era == "legacy" else "tools/call"
    assert demo_conn.trace.filter(method=asked, direction="in" if demo_conn.era == "legacy" else "out")


def test_asking_a_client_without_the_capability():
    with mcp_notebook.demo("no-elicitation", keepalive=None, load_magics=False) as legacy:
        refused = legacy.call_tool("ask_name")
        assert refused.is_error and "elicitation capability" in refused.text
    with mcp_notebook.demo("no-sampling", era="modern", keepalive=None, load_magics=False) as modern:
        with pytest.raises(mcp_notebook.McpError) as missing:
            modern.call_tool("summarize", {"text": "x"})
        assert missing.value.code == -32021


def test_drop_stream_is_resumed_with_last_event_id(demo_conn):
    if (demo_conn.health.transport, demo_conn.era) != ("http", "legacy"):
        refused = demo_conn.call_tool("drop_stream", {"seconds": 0})
        assert refused.is_error and "legacy era only" in refused.text
        return
    assert demo_conn.call_tool("drop_stream", {"seconds": 0.2}).text == "after the drop"
    resumes = demo_conn.trace.filter(direction="event", kind="stream-resume")
    assert resumes and resumes[0].detail["last_event_id"] == "s2/0"
    health = demo_conn.health
    assert health.reconnects == 1
    assert "1 reconnect," in health_view.text(health)  # `conn.health` says it as `%mcp health` does
    with pytest.warns(DeprecationWarning, match=r"use Health\.reconnects"):
        assert health.stream_resumes == 1  # its old second name, for one release


def test_resumed_stream_on_the_wire():
    """The priming event (id, retry) ends the POST stream; a GET with Last-Event-ID replays the answer."""
    process, url = demo_server.start_http()
    try:
        accept = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        with httpx2.Client(timeout=WAIT) as http:
            initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": initialize_params()}
            opened = http.post(url, json=initialize, headers=accept)
            headers = {**accept, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": LEGACY}
            dropped = http.post(url, json=tool_call(2, "drop_stream", seconds=0.2), headers=headers)
            assert dropped.text == "id: s1/0\nretry: 100\ndata: \n\n"
            resumed = http.get(url, headers={**headers, "accept": "text/event-stream", "last-event-id": "s1/0"})
        assert resumed.text.startswith("id: s1/1\nevent: message\ndata: ")
        assert '"text":"after the drop"' in resumed.text
    finally:
        process.stop()
