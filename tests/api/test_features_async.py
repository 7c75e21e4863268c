"""The awaitable twins of the feature methods (`conn.aio.call_tool`, `conn.aio.list_tools`, ...), from a user's
asyncio loop: the loop keeps running while they wait, progress, log lines and questions are
shown from the awaiting coroutine, and cancelling the awaiting task cancels the request."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import threading
import time

import pytest
from support.features import Terminal, meta_of, sent
from support.http_servers import sdk_http
from support.servers import sdk_server_cmd, server_everything_cmd
from support.waiting import until

import mcp_notebook
from mcp_notebook import AsyncConnection, Connection
from mcp_notebook.notebook import frontend as _display

pytestmark = [pytest.mark.node]

ERAS = ["legacy", "modern"]
WAIT = 20.0  # seconds a poll may take before the test fails: a hang guard, not a timing claim


def sdk(era, **options):
    return mcp_notebook.connect(sdk_server_cmd(), name=f"sdk-{era}", era=era, **options)


def test_every_feature_method_that_sends_a_request_has_a_twin():
    for name in (
        "list_tools",
        "tool",
        "check_arguments",
        "call_tool",
        "list_resources",
        "list_resource_templates",
        "read_resource",
        "template",
        "fill_template",
        "read_template",
        "subscribe",
        "unsubscribe",
        "list_prompts",
        "get_prompt",
        "complete",
        "set_log_level",
    ):
        assert asyncio.iscoroutinefunction(getattr(AsyncConnection, name)), name


def test_each_twin_shows_the_parameters_of_its_blocking_face():
    """Both faces are made from one steps function: help(), IPython's `?` and inspect see the
    real parameters (not *args, **kwargs), the name, and a docstring on each."""
    for name in ("call_tool", "read_resource", "get_prompt", "complete", "fill_template", "task_result", "set_log_level"):
        blocking, awaiting = getattr(Connection, name), getattr(AsyncConnection, name)
        assert inspect.signature(blocking) == inspect.signature(awaiting), name
        assert "args" not in inspect.signature(blocking).parameters, name
        assert (blocking.__qualname__, awaiting.__qualname__) == (f"Connection.{name}", f"AsyncConnection.{name}")
        assert blocking.__doc__ and awaiting.__doc__ and f"`{name}`, awaited" in awaiting.__doc__
    parameters = inspect.signature(Connection.call_tool).parameters
    assert list(parameters)[:3] == ["self", "name", "arguments"] and parameters["timeout"].kind is inspect.Parameter.KEYWORD_ONLY
    assert str(inspect.signature(Connection.call_tool).return_annotation) == "ToolResult"


def test_the_new_twins_discover_listen_and_wait_closed():
    """The three request methods that had no awaitable twin before have one on `conn.aio`."""

    async def use(conn):
        assert await conn.aio.discover() == conn.discover()
        subscription = await conn.aio.listen(resource_uris=["file:///watched"])
        assert subscription.acknowledged == {"resourceSubscriptions": ["file:///watched"]}
        subscription.close()
        assert await conn.aio.wait_closed(timeout=0.2) is False  # still open: the timeout answers
        await conn.aio.close()
        assert await conn.aio.wait_closed() is True and conn.closed

    with sdk("modern") as conn:  # closing again after the test's own close is a no-op
        asyncio.run(use(conn))
    with sdk("legacy") as legacy, pytest.raises(mcp_notebook.UsageError, match="modern era"):
        asyncio.run(legacy.aio.discover())


def test_the_old_spellings_warn_naming_the_new_and_still_work():
    """The names `Connection` gave up (issue #38) work for one release, each with a
    DeprecationWarning naming its new spelling; none is in dir() any more."""
    with sdk("legacy") as conn:
        with pytest.warns(DeprecationWarning, match=r"Connection\.aping is deprecated; use conn\.aio\.ping"):
            assert asyncio.run(conn.aping()) > 0
        with pytest.warns(DeprecationWarning, match=r"use conn\.aio\.list_tools"):
            assert asyncio.run(conn.alist_tools()) is conn.list_tools()
        with pytest.warns(DeprecationWarning, match=r"use conn\.logs\.records"):
            assert conn.log_records() == conn.logs.records()
        with pytest.warns(DeprecationWarning, match=r"use conn\.subscriptions\.updates"):
            assert conn.resource_updates() == conn.subscriptions.updates() == 0
        with pytest.warns(DeprecationWarning, match=r"use conn\.subscriptions\.records"):
            assert conn.subscription_records() == []
        with pytest.warns(DeprecationWarning, match=r"use conn\.monitor\.history"):
            assert conn.health_history == list(conn.monitor.history)
        with pytest.warns(DeprecationWarning, match=r"session_of"):
            assert conn.session is conn._session
        gone = ("aping", "acall_tool", "aclose", "session", "log_records", "log_panel", "subscriptions_panel", "health_history")
        assert not set(gone) & set(dir(conn))
        with pytest.raises(AttributeError, match="no attribute 'acall_tools'"):
            conn.acall_tools  # noqa: B018 - a name that never was: no warning, the usual error


def test_aconnect_takes_connects_options_and_a_name_in_use_from_the_old_connection():
    async def main():
        first = await mcp_notebook.aconnect(sdk_server_cmd(), name="twice", era="legacy", timeout=30)
        second = await mcp_notebook.aconnect(sdk_server_cmd(), name="twice", era="legacy")
        return first, second

    first, second = asyncio.run(main())
    with second:
        assert first.closed and mcp_notebook.get_connection("twice") is second
        assert second.era == "legacy" and second.ping() > 0
    with pytest.raises(TypeError, match=r"aconnect\(\) got an unexpected keyword argument 'nmae'"):
        asyncio.run(mcp_notebook.aconnect(sdk_server_cmd(), nmae="x"))


def test_resources_prompts_completion_and_logging_against_server_everything():
    async def use(conn):
        await conn.aio.list_tools()  # server-everything says its tool list changed just after the handshake
        tools = await conn.aio.list_tools()
        assert "get-sum" in tools.names() and await conn.aio.list_tools() is tools  # cached, as in sync
        assert (await conn.aio.tool("get-sum"))["name"] == "get-sum"
        with pytest.raises(mcp_notebook.ToolArgumentError, match="missing required 'b'"):
            await conn.aio.check_arguments("get-sum", {"a": 1})
        assert (await conn.aio.call_tool("get-sum", {"a": 2, "b": 3})).text.endswith("5.")
        resources = await conn.aio.list_resources()
        assert (await conn.aio.read_resource(resources.get("architecture.md")["uri"])).text
        templates = await conn.aio.list_resource_templates()
        assert (await conn.aio.template("Dynamic Text Resource")) == templates.get("Dynamic Text Resource")
        assert await conn.aio.fill_template("Dynamic Text Resource", resourceId=7) == "demo://resource/dynamic/text/7"
        assert "Resource 7" in (await conn.aio.read_template("Dynamic Text Resource", resourceId=7)).text
        assert (await conn.aio.list_prompts()).get("args-prompt")
        assert "Paris" in (await conn.aio.get_prompt("args-prompt", {"city": "Paris"})).text
        assert await conn.aio.complete("prompt:completable-prompt", "department", "E") == ["Engineering"]
        await conn.aio.set_log_level("debug")
        await conn.aio.subscribe("demo://resource/dynamic/text/1")
        await conn.aio.unsubscribe("demo://resource/dynamic/text/1")

    with mcp_notebook.connect(server_everything_cmd(), name="everything", era="legacy") as conn:
        asyncio.run(use(conn))
        assert sent(conn, "logging/setLevel")[0]["params"] == {"level": "debug"}
        assert [m["params"]["uri"] for m in sent(conn, "resources/unsubscribe")] == ["demo://resource/dynamic/text/1"]


@pytest.mark.parametrize("era", ERAS)
def test_the_loop_runs_while_a_call_waits_and_progress_is_shown_from_the_coroutine(era):
    events, seen = [], []

    async def main(conn):
        async def ticker():
            events.append("tick")

        tick = asyncio.get_running_loop().create_task(ticker())
        result = await conn.aio.call_tool(
            "steps", {"count": 3, "seconds": 0.6}, progress=lambda p, total, message: seen.append((threading.current_thread(), p))
        )
        events.append("result")
        await tick
        return result

    with sdk(era) as conn:
        assert asyncio.run(main(conn)).text == "done after 3 steps"
    assert events == ["tick", "result"]  # the caller's loop ran other tasks while the call waited
    assert [p for _, p in seen][-1] == 3.0 and {t for t, _ in seen} == {threading.current_thread()}


def test_two_concurrent_calls_on_one_loop_each_get_their_own_progress_and_logs(port, shown_as, capsys):
    """Over HTTP a request's log lines come on its own response stream, so each goes to its own call."""
    first, second = [], []
    shown: dict = {}

    class Recording(_display.Presenter):
        def log(self, record):
            shown.setdefault(id(self), []).append(record.data)
            super().log(record)

    class RecordingFrontEnd(_display.NotebookFrontEnd):
        def presenter(self, label, progress, connection):
            return Recording(label, progress, connection, where="ipython")

    shown_as("ipython", RecordingFrontEnd())

    async def both(conn):
        return await asyncio.gather(
            conn.aio.call_tool("steps", {"count": 2, "seconds": 0.4}, log_level="info", progress=lambda *a: first.append(a)),
            conn.aio.call_tool("steps", {"count": 3, "seconds": 0.4}, log_level="info", progress=lambda *a: second.append(a)),
        )

    with sdk_http(port) as base, mcp_notebook.connect(base + "/mcp", name="web", era="modern") as conn:
        results = asyncio.run(both(conn))
        assert [r.text for r in results] == ["done after 2 steps", "done after 3 steps"]
        assert first[-1][:2] == (2.0, 2.0) and second[-1][:2] == (3.0, 3.0)
        assert {a[1] for a in first} == {2.0} and {a[1] for a in second} == {3.0}
        tokens = [meta_of(m)["progressToken"] for m in sent(conn, "tools/call")]
        assert len(set(tokens)) == 2
    out = capsys.readouterr().out
    assert out.count("[web info steps]") == 5 and "step 3/3" in out
    assert sorted(shown.values()) == [["step 1/2", "step 2/2"], ["step 1/3", "step 2/3", "step 3/3"]]


@pytest.mark.parametrize("era", ERAS)
def test_cancelling_the_awaiting_task_cancels_the_request(era):
    async def main(conn):
        await conn.aio.list_tools()  # so the one request in flight is the call
        task = asyncio.get_running_loop().create_task(conn.aio.call_tool("slow", {"seconds": 30}))
        await until(lambda: [r for r in conn.in_flight() if r["method"] == "tools/call"], "the call to be in flight")
        [request_id] = [r["id"] for r in conn.in_flight() if r["method"] == "tools/call"]
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return request_id

    with sdk(era) as conn:
        request_id = asyncio.run(main(conn))
        [cancel] = sent(conn, "notifications/cancelled")
        assert cancel["params"] == {"requestId": request_id, "reason": "cancelled by the user"}
        assert request_id == sent(conn, "tools/call")[-1]["id"]
        assert not conn._core.pendings and not conn._core.waiting
        assert request_id not in [r["id"] for r in conn.in_flight()]
        assert asyncio.run(conn.aio.call_tool("echo", {"text": "still usable"})).text == "still usable"


@pytest.mark.parametrize("era", ERAS)
def test_an_awaited_call_times_out_and_cancels_on_the_server(era):
    with sdk(era) as conn:
        with pytest.raises(mcp_notebook.RequestTimeout, match="no response or progress within 0.4 s"):
            asyncio.run(conn.aio.call_tool("slow", {"seconds": 30}, timeout=0.4))
        [cancel] = sent(conn, "notifications/cancelled")
        assert cancel["params"]["requestId"] == sent(conn, "tools/call")[-1]["id"]


def test_an_awaited_modern_call_asks_the_user_from_the_coroutine(monkeypatch, shown_as):
    user = Terminal(monkeypatch, shown_as, lambda question: question.accept({"name": "Grace"}))
    with sdk("modern", elicitation=True) as conn:
        assert asyncio.run(conn.aio.call_tool("ask_name")).text == "hello Grace"
        [(thread, question)] = user.asked
        assert thread is threading.current_thread() and question.kind == "elicitation"


def test_cancelling_while_a_question_waits_for_the_user_sends_no_further_round(monkeypatch, shown_as):
    shown_as("kernel")
    shown = []
    monkeypatch.setattr("IPython.display.display", shown.append)

    async def main(conn):
        task = asyncio.get_running_loop().create_task(conn.aio.call_tool("ask_name"))
        await until(lambda: shown, "the question widget")  # it is up; nobody answers it
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        return task

    with sdk("modern", elicitation=True) as conn:
        task = asyncio.run(main(conn))
        assert task.cancelled()
        assert len(sent(conn, "tools/call")) == 1  # no retry with an answer went out
        assert not conn._core.waiting


# ------------------------------------------------------------- in a Jupyter async cell

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@pytest.mark.kernel
@pytest.mark.timeout(180)
def test_in_an_async_cell_the_progress_bar_and_the_question_form_work(tmp_path):
    """ipykernel runs an awaiting cell's coroutine on its loop and keeps taking messages: the
    bar is drawn in the cell, and a click on the question's form answers it meanwhile."""
    from support import kernels as test_kernel  # the kernel harness; imported here, as only this test needs it

    kernel = test_kernel._start_kernel(tmp_path)
    try:
        command = json.dumps(sdk_server_cmd())
        out = test_kernel.ok(
            kernel.run(
                f"import json, mcp_notebook\n"
                f"conn = mcp_notebook.connect({command}, name='m', era='modern', elicitation=True)\n"
                "print('PID', conn._session.transport.pid)"
            )
        )
        kernel.server_pids.add(int(test_kernel.json_line(out, "PID")))

        cell = test_kernel.Cell(
            kernel.kc, "r = await conn.aio.call_tool('steps', {'count': 2, 'seconds': 0.4})\nprint('RESULT', json.dumps(r.text))"
        )
        assert test_kernel.json_line(test_kernel.ok(cell.finish(60)), "RESULT") == "done after 2 steps"
        bars = [
            m["content"]["data"]["state"]
            for m in cell.messages
            if m["msg_type"] == "comm_open" and m["content"]["data"]["state"].get("_model_name") == "FloatProgressModel"
        ]
        assert len(bars) == 1 and any(
            WIDGET_MIME in m["content"]["data"] for m in cell.messages if m["msg_type"] == "display_data"
        )

        cell = test_kernel.Cell(kernel.kc, "r = await conn.aio.call_tool('ask_name')\nprint('RESULT', json.dumps(r.text))")

        def shown() -> bool:
            return any(m["msg_type"] == "display_data" and WIDGET_MIME in m["content"]["data"] for m in cell.messages)

        cell.pump(time.monotonic() + 60, stop=shown)
        assert shown(), cell._result("timeout").describe()
        models = {m["content"]["comm_id"]: m["content"]["data"]["state"] for m in cell.messages if m["msg_type"] == "comm_open"}
        [text] = [cid for cid, s in models.items() if s.get("_model_name") == "TextModel"]
        [accept] = [
            cid for cid, s in models.items() if s.get("_model_name") == "ButtonModel" and s.get("description") == "Accept"
        ]
        kc = kernel.kc
        kc.shell_channel.send(
            kc.session.msg(
                "comm_msg", {"comm_id": text, "data": {"method": "update", "state": {"value": "Ada"}, "buffer_paths": []}}
            )
        )
        kc.shell_channel.send(
            kc.session.msg("comm_msg", {"comm_id": accept, "data": {"method": "custom", "content": {"event": "click"}}})
        )
        assert test_kernel.json_line(test_kernel.ok(cell.finish(60)), "RESULT") == "hello Ada"
        test_kernel.ok(kernel.run("conn.close()"))
    finally:
        test_kernel._stop_kernel(kernel)


def test_a_url_elicitation_required_error_is_answered_then_retried_when_awaited():
    """`conn.aio.call_tool` on server-everything's -32042 path: the URL asked for, then the call retried once."""
    asked = []

    def open_it(params):
        asked.append(params["url"])
        return {"action": "accept"}

    with mcp_notebook.connect(server_everything_cmd(), name="urls", era="legacy", elicitation=open_it) as conn:
        result = asyncio.run(
            conn.aio.call_tool("trigger-url-elicitation", {"url": "https://example.com/login", "errorPath": True})
        )
        assert "completed the URL elicitation" in result.text
        assert asked == ["https://modelcontextprotocol.io", "https://example.com/login"]
        assert len([e for e in conn.trace.frames("out") if e.method == "tools/call"]) == 2
