"""The client surface against server-everything over stdio: every tool family it has,
resources, templates, prompts, completion, logging, subscriptions, progress, cancellation
and server requests (roots, sampling, elicitation), plus the one-line errors."""

from __future__ import annotations

import threading

import pytest
from support.feature_checks import *  # noqa: F403 - its checks are tests here too (stdio); test_features_http runs them over HTTP
from support.features import ctrl_c_on_first_report, sent
from support.servers import fastmcp_server_cmd, server_everything_cmd
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.runtime import get_runtime

pytestmark = [pytest.mark.node]


def test_list_changed_drops_the_cache(conn):
    conn.list_tools()
    tools = conn.list_tools()
    assert conn.list_tools() is tools
    calls = len(sent(conn, "tools/list"))
    # As if the server had sent it: through the session's frame path.
    frame = '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}'
    get_runtime().call_sync(conn._session.inbound.frame_received, frame)
    assert conn.list_tools() is not tools and len(sent(conn, "tools/list")) == calls + 1


def test_progress_resets_the_timeout_and_the_maximum_total_holds(conn):
    seen = []
    result = conn.call_tool(
        "trigger-long-running-operation",
        {"duration": 2, "steps": 4},
        timeout=0.9,
        progress=lambda p, total, message: seen.append((p, total)),
    )
    assert "completed" in result.text and seen == [(1.0, 4.0), (2.0, 4.0), (3.0, 4.0), (4.0, 4.0)]  # each one
    token = sent(conn, "tools/call")[-1]["params"]["_meta"]["progressToken"]
    assert isinstance(token, str)
    with pytest.raises(mcp_notebook.RequestTimeout, match="maximum total time of 1.2 s"):
        conn.call_tool("trigger-long-running-operation", {"duration": 2, "steps": 4}, timeout=0.9, max_total=1.2)
    with pytest.raises(mcp_notebook.RequestTimeout, match="timed out after 0.3 s"):
        conn.call_tool("trigger-long-running-operation", {"duration": 2, "steps": 4}, timeout=0.3, reset_on_progress=False)
    assert len(sent(conn, "notifications/cancelled")) == 2


def test_a_progress_callback_gets_every_report_of_a_burst(conn):
    seen = []
    conn.call_tool(
        "trigger-long-running-operation", {"duration": 0.01, "steps": 5}, progress=lambda p, total, message: seen.append(p)
    )
    assert seen == [1.0, 2.0, 3.0, 4.0, 5.0]  # reports milliseconds apart are not merged


def test_text_progress_in_a_terminal(shown_as, conn, capsys):
    shown_as("ipython")
    conn.call_tool("trigger-long-running-operation", {"duration": 0.4, "steps": 2})
    err = capsys.readouterr().err
    assert "[###############################" not in err and "2/2" in err and "tools/call" in err


def test_cancel_by_id_and_ctrl_c_send_cancelled(conn):
    outcome, running = [], threading.Event()

    def run():
        try:
            conn.call_tool("trigger-long-running-operation", {"duration": 5, "steps": 5}, progress=lambda *a: running.set())
        except mcp_notebook.McpNotebookError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    assert running.wait(10)  # the first progress: the call is in flight
    [request_id] = [r["id"] for r in conn.in_flight() if r["method"] == "tools/call"]
    assert conn.cancel(request_id, reason="stopped by id")
    worker.join(10)
    assert isinstance(outcome[0], mcp_notebook.ConnectionClosed)
    [by_id] = sent(conn, "notifications/cancelled")
    assert by_id["params"] == {"requestId": request_id, "reason": "stopped by id"}
    assert not conn.cancel(request_id)
    assert request_id not in [r["id"] for r in conn.in_flight()]

    with pytest.raises(KeyboardInterrupt):
        conn.call_tool("trigger-long-running-operation", {"duration": 5, "steps": 5}, progress=ctrl_c_on_first_report())
    [_, by_ctrl_c] = sent(conn, "notifications/cancelled")  # one more, for the interrupted call
    interrupted = sent(conn, "tools/call")[-1]["id"]
    assert interrupted != request_id
    assert by_ctrl_c["params"] == {"requestId": interrupted, "reason": "cancelled by the user"}
    assert conn.call_tool("echo", {"message": "still usable"}).text == "Echo: still usable"


def test_logging_goes_to_the_waiting_cell_and_to_the_log(shown_as, conn, capsys):
    shown_as("ipython")
    conn.set_log_level("debug")
    conn.call_tool("toggle-simulated-logging")  # logs once at once, then every 5 s
    try:
        wait_until(lambda: any(r.logger is None for r in conn.logs), "a log line with no logger", 10)
        assert any("-level message" in str(r.data) or "level-message" in str(r.data) for r in conn.logs)
    finally:
        conn.call_tool("toggle-simulated-logging")
    assert sent(conn, "logging/setLevel")[0]["params"] == {"level": "debug"}
    with pytest.raises(mcp_notebook.UsageError, match="unknown log level"):
        conn.set_log_level("loud")


def test_subscriptions_count_updates_and_call_back(conn):
    uri = "demo://resource/dynamic/text/1"
    updates = []
    conn.subscribe(uri, updates.append)
    conn.call_tool("toggle-subscriber-updates")  # one update at once, then every 5 s
    try:
        wait_until(lambda: updates, "a resource update", 10)
        assert updates[0] == uri and conn.subscriptions.updates(uri) >= 1
    finally:
        conn.call_tool("toggle-subscriber-updates")
        conn.unsubscribe(uri)
    assert [m["params"]["uri"] for m in sent(conn, "resources/unsubscribe")] == [uri]


def test_roots_sampling_and_elicitation_callbacks(tmp_path):
    asked = []

    def sample(params):
        asked.append(params)
        return "a sampled reply"

    with mcp_notebook.connect(
        server_everything_cmd(),
        name="caps",
        era="legacy",
        roots=[tmp_path],
        sampling=sample,
        elicitation=lambda params: {"name": "Ada", "number": 7},
    ) as conn:
        caps = sent(conn, "initialize")[0]["params"]["capabilities"]
        assert caps == {
            "roots": {"listChanged": True},
            "sampling": {},
            "elicitation": {"form": {}, "url": {}},
            "tasks": {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}, "list": {}, "cancel": {}},
        }
        assert tmp_path.name in conn.call_tool("get-roots-list").text
        assert "a sampled reply" in conn.call_tool("trigger-sampling-request", {"prompt": "hello"}).text
        assert "hello" in asked[0]["messages"][0]["content"]["text"]
        text = conn.call_tool("trigger-elicitation-request").text
        # The schema's defaults fill the rest. (The published 2025-11-25 schema.json allows only integer
        # numbers in ElicitResult content, so this test answers the number field itself.)
        assert "Name: Ada" in text and "Favorite Integer: 42" in text and "Favorite Number: 7" in text
        url = conn.call_tool("trigger-url-elicitation", {"url": "https://example.com/login"}).text
        assert "completed the URL elicitation" in url
        roots_replies = [m for m in sent(conn, kind="response") if "roots" in m["result"]]
        assert roots_replies and roots_replies[0]["id"] == 0  # the server's first request has id 0


def test_without_a_capability_a_server_request_gets_method_not_found():
    with mcp_notebook.connect(server_everything_cmd(), name="bare", era="legacy", capabilities={"roots": {}}) as conn:
        wait_until(lambda: sent(conn, kind="error"), "the error reply", 10)
        error = sent(conn, kind="error")[0]
        assert error["id"] == 0 and error["error"]["code"] == -32601


def test_without_a_cell_or_terminal_questions_are_declined(shown_as, monkeypatch):
    shown_as("script")
    monkeypatch.setattr("sys.stdin", None)
    with mcp_notebook.connect(server_everything_cmd(), name="ask", era="legacy", sampling=True, elicitation=True) as conn:
        assert "declined" in conn.call_tool("trigger-elicitation-request").text
        result = conn.call_tool("trigger-sampling-request", {"prompt": "x"})
        assert result.is_error and "rejected" in result.text
        assert sent(conn, kind="error")[-1]["error"] == {"code": -1, "message": "User rejected sampling request"}


def test_a_url_elicitation_required_error_is_answered_then_retried():
    """server-everything's -32042 path: the error lists a prerequisite URL; once accepted the
    same call is retried, and that retry asks for the original URL the ordinary way."""
    asked = []

    def open_it(params):
        asked.append(params["url"])
        return {"action": "accept"}

    with mcp_notebook.connect(server_everything_cmd(), name="urls", era="legacy", elicitation=open_it) as conn:
        text = conn.call_tool("trigger-url-elicitation", {"url": "https://example.com/login", "errorPath": True}).text
        assert "completed the URL elicitation" in text
        assert asked == ["https://modelcontextprotocol.io", "https://example.com/login"]
        calls = sent(conn, "tools/call")
        assert len(calls) == 2 and calls[0]["params"]["arguments"] == calls[1]["params"]["arguments"]


@pytest.mark.parametrize(
    "answer, words", [(lambda params: None, "decline by the user"), ("defaults", 'elicitation="defaults" does not open URLs')]
)
def test_a_url_elicitation_required_error_not_accepted_names_the_url(answer, words):
    with mcp_notebook.connect(server_everything_cmd(), name="urls", era="legacy", elicitation=answer) as conn:
        with pytest.raises(mcp_notebook.UrlElicitationRequired) as info:
            conn.call_tool("trigger-url-elicitation", {"url": "https://example.com/x", "errorPath": True})
        message = str(info.value)
        assert "https://modelcontextprotocol.io" in message and words in message and "\n" not in message
        assert info.value.code == -32042 and len(sent(conn, "tools/call")) == 1


def test_audio_content_plays_in_the_result():
    with mcp_notebook.connect(fastmcp_server_cmd(), name="fast", era="legacy") as conn:
        result = conn.call_tool("beep")
        assert [b["type"] for b in result.content] == ["audio"] and result.content[0]["mimeType"] == "audio/wav"
        html = result._repr_mimebundle_()["text/html"]
        assert '<audio controls src="data:audio/wav;base64,UklGR' in html  # a RIFF header: the WAV itself
