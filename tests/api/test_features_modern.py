"""The feature API on modern (2026-07-28) connections, as on legacy ones: progress bars and
callbacks, request-scoped log lines in the calling cell, per-request log levels, questions
from `input_required` rounds asked of the user, timeouts and cancellation.

Peers: the official SDK server (tests/servers/sdk_server.py: `steps`, `ask_name`, `slow`)
and our demo server (it declares `logging`, so `set_log_level` applies to it)."""

from __future__ import annotations

import contextlib
import threading

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.features import Terminal, ctrl_c_on_first_report, meta_of
from support.http_servers import sdk_http
from support.servers import sdk_server_cmd
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.api.resources import updates as resource_updates

LOG_LEVEL = "io.modelcontextprotocol/logLevel"


@pytest.fixture
def modern():
    with mcp_notebook.connect(sdk_server_cmd(), name="modern", era="modern", elicitation=True) as c:
        assert c.era == "modern"
        yield c


def sent(conn, method):
    return [e.message for e in conn.trace.frames("out") if e.method == method]


def test_progress_reaches_a_callback_and_resets_the_timeout(modern):
    seen = []
    result = modern.call_tool(
        "steps", {"count": 4, "seconds": 1.6}, timeout=1.2, progress=lambda p, total, message: seen.append((p, total, message))
    )
    assert result.text == "done after 4 steps"
    assert seen[-1] == (4.0, 4.0, "step 4/4") and len(seen) >= 2
    [call] = sent(modern, "tools/call")
    assert isinstance(meta_of(call)["progressToken"], str)
    assert LOG_LEVEL not in meta_of(call)  # no level asked for: the server must send no log lines
    assert not modern.logs


def test_text_progress_bar_in_a_terminal(shown_as, modern, capsys):
    shown_as("ipython")
    modern.call_tool("steps", {"count": 2, "seconds": 0.2})
    err = capsys.readouterr().err
    assert "modern tools/call" in err and "2/2" in err


def test_request_scoped_log_lines_reach_the_calling_cell(shown_as, modern, capsys):
    shown_as("ipython")
    result = modern.call_tool("steps", {"count": 2, "seconds": 0.2}, log_level="info")
    assert result.text == "done after 2 steps"
    out = capsys.readouterr().out
    assert "[modern info steps] step 1/2" in out and "[modern info steps] step 2/2" in out
    assert "debug 1/2" not in out  # below the level asked for: the server kept it
    assert meta_of(sent(modern, "tools/call")[-1])[LOG_LEVEL] == "info"
    assert [r.data for r in modern.logs] == ["step 1/2", "step 2/2"]
    modern.call_tool("steps", {"count": 1, "seconds": 0}, log_level="debug")
    assert meta_of(sent(modern, "tools/call")[-1])[LOG_LEVEL] == "debug"
    assert "[modern debug steps] debug 1/1" in capsys.readouterr().out
    modern.call_tool("echo", {"text": "quiet"})
    assert LOG_LEVEL not in meta_of(sent(modern, "tools/call")[-1])  # the override was for that call only


def test_set_log_level_is_remembered_and_sent_with_each_request():
    with mcp_notebook.connect(demo_server.command("stdio", era="modern"), name="demo", era="modern") as conn:
        assert "logging" in conn.server_capabilities
        conn.set_log_level("info")
        assert conn.log_level == "info" and not sent(conn, "logging/setLevel")  # gone in 2026-07-28
        result = conn.call_tool("faults", {"flood": 2})
        logged = [r.data for r in conn.logs]
        assert "flood: sent 2 notifications/message" in result.text and logged == ["flood 1/2", "flood 2/2"]
        assert all(meta_of(m)[LOG_LEVEL] == "info" for m in sent(conn, "tools/list") + sent(conn, "tools/call"))
        conn.call_tool("faults", {"flood": 1}, log_level="error")  # a call's own level wins
        assert meta_of(sent(conn, "tools/call")[-1])[LOG_LEVEL] == "error" and len(conn.logs) == 2
    with mcp_notebook.connect(sdk_server_cmd(), name="sdk", era="modern") as conn:  # declares no logging
        with pytest.raises(mcp_notebook.UsageError, match="does not offer logging"):
            conn.set_log_level("info")


def test_subscribe_on_modern_listens_for_that_resource(modern):
    updated = threading.Event()
    modern.subscribe("file:///watched", lambda uri: updated.set())
    listen = sent(modern, "subscriptions/listen")[-1]
    assert listen["params"]["notifications"] == {"resourceSubscriptions": ["file:///watched"]}
    modern.call_tool("touch", {"uri": "file:///watched"})
    assert updated.wait(20) and modern.subscriptions.updates("file:///watched") == 1
    subscription = resource_updates.of(modern).listens["file:///watched"]
    modern.unsubscribe("file:///watched")
    assert subscription.wait_for(lambda s: s.ended is not None, 10) and subscription.ended == "closed by the client"
    assert not sent(modern, "resources/subscribe") and not sent(modern, "resources/unsubscribe")  # not in 2026-07-28
    with pytest.raises(mcp_notebook.UsageError, match="not subscribed"):
        modern.unsubscribe("file:///watched")


def test_a_log_level_per_request_is_refused_on_legacy_before_anything_is_sent():
    with mcp_notebook.connect(sdk_server_cmd(), name="legacy", era="legacy") as conn:
        with pytest.raises(mcp_notebook.UsageError, match="needs a modern"):
            conn.call_tool("echo", {"text": "x"}, log_level="info")
        with pytest.raises(mcp_notebook.UsageError, match="unknown log level"):
            conn.read_resource("file:///x", log_level="loud")
        assert not sent(conn, "tools/call") and not sent(conn, "tools/list")


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_percent_mcp_loglevel_says_how_the_level_travels(era, capsys):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    conn = mcp_notebook.connect(demo_server.command("stdio", era=era), name="demo", era=era)
    try:
        ip.run_line_magic("mcp", "loglevel info --conn demo")
        out = capsys.readouterr().out
        conn.call_tool("echo", {"text": "x"})
        if era == "modern":
            assert "sent with each request" in out and not sent(conn, "logging/setLevel")
            assert meta_of(sent(conn, "tools/call")[-1])[LOG_LEVEL] == "info"
        else:
            assert "(logging/setLevel)" in out and sent(conn, "logging/setLevel")[0]["params"] == {"level": "info"}
            assert LOG_LEVEL not in (sent(conn, "tools/call")[-1]["params"].get("_meta") or {})
    finally:
        conn.close()


def test_a_question_from_an_input_required_round_is_asked_in_the_calling_cell(modern, monkeypatch, shown_as):
    user = Terminal(monkeypatch, shown_as, lambda question: question.accept({"name": "Ada"}))
    assert modern.call_tool("ask_name").text == "hello Ada"
    [(thread, question)] = user.asked
    assert thread is threading.current_thread()  # asked where the caller waits, not on the session thread
    assert question.kind == "elicitation" and question.params["message"] == "What is your name?"
    first, retry = sent(modern, "tools/call")
    assert "inputResponses" not in first["params"]
    assert list(retry["params"]["inputResponses"].values()) == [{"action": "accept", "content": {"name": "Ada"}}]
    assert meta_of(retry)["progressToken"] == meta_of(first)["progressToken"]  # one call, one progress token


def test_without_a_cell_or_terminal_the_question_is_declined(shown_as, modern, monkeypatch):
    shown_as("script")
    monkeypatch.setattr("sys.stdin", None)
    assert modern.call_tool("ask_name").text == "decline"


def test_timeouts_reset_on_progress_and_the_maximum_total_holds(modern):
    with pytest.raises(mcp_notebook.RequestTimeout, match="maximum total time of 0.6 s"):
        modern.call_tool("steps", {"count": 10, "seconds": 5}, timeout=2, max_total=0.6)
    with pytest.raises(mcp_notebook.RequestTimeout, match="no response or progress within 0.4 s"):
        modern.call_tool("slow", {"seconds": 30}, timeout=0.4)
    calls, cancels = sent(modern, "tools/call"), sent(modern, "notifications/cancelled")
    assert [c["params"]["requestId"] for c in cancels] == [m["id"] for m in calls]
    assert "no response or progress within 0.4 s" in cancels[-1]["params"]["reason"]
    assert modern.call_tool("echo", {"text": "still usable"}).text == "still usable"


def test_ctrl_c_and_cancel_by_id_cancel_on_the_server(modern):
    with pytest.raises(mcp_notebook.Interrupted, match="^cancelled; the server was sent notifications/cancelled$"):
        modern.call_tool("steps", {"count": 60, "seconds": 30}, progress=ctrl_c_on_first_report())
    [cancel] = sent(modern, "notifications/cancelled")
    assert cancel["params"] == {"requestId": sent(modern, "tools/call")[-1]["id"], "reason": "cancelled by the user"}

    outcome = []
    worker = threading.Thread(target=lambda: outcome.append(_catch(modern.call_tool, "slow", {"seconds": 30})))
    worker.start()
    wait_until(lambda: modern._core.pendings, "the call in flight", 10)
    [request_id] = modern._core.pendings
    assert modern.cancel(request_id, "enough")
    worker.join(10)
    assert isinstance(outcome[0], mcp_notebook.ConnectionClosed)
    assert sent(modern, "notifications/cancelled")[-1]["params"] == {"requestId": request_id, "reason": "enough"}
    assert not modern._core.pendings and not modern.cancel(request_id)


def test_over_http_progress_logs_and_a_timeout_that_closes_the_stream(shown_as, port, capsys):
    shown_as("ipython")
    with contextlib.ExitStack() as stack:
        base = stack.enter_context(sdk_http(port))
        conn = stack.enter_context(mcp_notebook.connect(base + "/mcp", name="web", era="modern"))
        seen = []
        conn.call_tool("steps", {"count": 2, "seconds": 0.2}, log_level="info", progress=lambda *a: seen.append(a[:2]))
        assert seen[-1] == (2.0, 2.0) and "[web info steps] step 2/2" in capsys.readouterr().out
        with pytest.raises(mcp_notebook.RequestTimeout):
            conn.call_tool("slow", {"seconds": 30}, timeout=0.4)
        call = sent(conn, "tools/call")[-1]
        assert [e.detail["id"] for e in conn.trace.entries() if e.kind == "stream-cancelled"] == [call["id"]]
        assert not sent(conn, "notifications/cancelled")


def _catch(fn, *args):
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001 - handed to the test
        return exc
