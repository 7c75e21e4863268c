"""Task-augmented tool calls (2025-11-25 tasks) against server-everything's
`simulate-research-query` (`execution.taskSupport: "required"`, four one-second stages; with
`ambiguous=True` it asks for a clarification through `tasks/result` while `input_required`):
the call follows the task to its report, its status messages show like progress, questions
are answered by callbacks and in the waiting cell, a stop (timeout, Ctrl-C, a cancelled
await) sends `tasks/cancel`, and `list_tasks` / `get_task` / `cancel_task` / `task_result`
reach the session's tasks. Over stdio, and once over Streamable HTTP."""

from __future__ import annotations

import _thread
import asyncio
import threading
from collections.abc import Iterator

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.features import sent
from support.servers import sdk_server_cmd, server_everything_cmd
from support.waiting import wait_until
from support.widgets import in_background, replies

import mcp_notebook
from mcp_notebook import AsyncConnection, TaskCancelled, TaskList
from mcp_notebook.notebook.widgets import interaction as iw

pytestmark = [pytest.mark.node]

RESEARCH = "simulate-research-query"
RELATED = "io.modelcontextprotocol/related-task"
WAIT = 20.0  # how long an awaited event may take before the test fails: a hang guard, not a timing claim
STAGES = [
    "working: Gathering sources...",
    "working: Analyzing content...",
    "working: Synthesizing findings...",
    "working: Generating report...",
]


def everything_stdio(**options) -> mcp_notebook.Connection:
    return mcp_notebook.connect(server_everything_cmd(), name="tasks", era="legacy", **options)


@pytest.fixture
def tasks_conn() -> Iterator[mcp_notebook.Connection]:
    with everything_stdio() as c:
        yield c


def created(conn: mcp_notebook.Connection) -> str:
    """The id of the task the last tools/call made (from its CreateTaskResult on the wire)."""
    call_id = sent(conn, "tools/call")[-1]["id"]
    return next(
        e.message["result"]["task"]["taskId"] for e in conn.trace.frames("in") if e.kind == "response" and e.id == call_id
    )


def position(conn: mcp_notebook.Connection, direction: str, kind: str, method: str) -> int:
    return next(i for i, e in enumerate(conn.trace.frames()) if (e.direction, e.kind, e.method) == (direction, kind, method))


# ----------------------------------------------------------------- a task to its end


def test_a_tool_that_requires_a_task_runs_as_one_to_its_report(tasks_conn):
    messages: list[str] = []
    result = tasks_conn.call_tool(RESEARCH, {"topic": "tides"}, progress=lambda p, total, message: messages.append(message))
    assert result.text.startswith("# Research Report: tides") and not result.is_error
    [call] = sent(tasks_conn, "tools/call")
    assert call["params"]["task"] == {"ttl": 3_600_000} and isinstance(call["params"]["_meta"]["progressToken"], str)
    task_id = created(tasks_conn)
    assert result.raw["_meta"][RELATED] == {"taskId": task_id}
    assert all(m["params"] == {"taskId": task_id} for m in sent(tasks_conn, "tasks/get"))  # no related-task _meta there
    assert [m["params"] for m in sent(tasks_conn, "tasks/result")] == [{"taskId": task_id}]
    assert not sent(tasks_conn, "tasks/cancel") and not sent(tasks_conn, "notifications/cancelled")
    assert "tasks" not in sent(tasks_conn, "initialize")[0]["params"]["capabilities"]  # a requestor only
    # Each status change reached the progress callback once, in order, as a message.
    assert [m for m in messages if m.startswith("working")] == STAGES and messages[-1].startswith("completed")
    assert not tasks_conn._core.waiting and not tasks_conn._core.pendings

    again = tasks_conn.task_result(task_id)  # the server keeps the payload for the task's ttl
    assert again.name == RESEARCH and again.text == result.text
    assert tasks_conn.get_task(task_id)["status"] == "completed"
    listing = tasks_conn.list_tasks()
    assert isinstance(listing, TaskList) and listing.get(task_id)["status"] == "completed"
    assert task_id in listing._text() and "completed" in listing._repr_mimebundle_()["text/html"]


def test_status_changes_reset_the_idle_timeout(tasks_conn):
    """The four stages take about 4 s; each status change is news, as progress is."""
    assert "Research Report" in tasks_conn.call_tool(RESEARCH, {"topic": "reefs"}, timeout=2.5).text


def test_an_ambiguous_query_asks_through_tasks_result_and_a_callback_answers():
    asked = []

    def clarify(params):
        asked.append(params)
        return {"interpretation": "snake"}

    messages: list[str] = []
    with everything_stdio(elicitation=clarify) as conn:
        result = conn.call_tool(
            RESEARCH, {"topic": "python", "ambiguous": True}, progress=lambda p, total, message: messages.append(message)
        )
        assert result.text.startswith("# Research Report: python (snake)")
        task_id = created(conn)
        [question] = asked
        assert question["_meta"][RELATED] == {"taskId": task_id}
        [reply] = replies(conn, "elicitation/create")
        assert reply["result"]["content"] == {"interpretation": "snake"}
        assert reply["result"]["_meta"][RELATED] == {"taskId": task_id}  # the answer names its task too
        # The question came while tasks/result was open, and tasks/result answered after it.
        assert (
            position(conn, "out", "request", "tasks/result")
            < position(conn, "in", "request", "elicitation/create")
            < position(conn, "in", "response", "tasks/result")
        )
        assert any(m.startswith("input required: Found multiple interpretations") for m in messages)
        assert any(m.startswith('working: Continuing with interpretation: "snake"') for m in messages)


def test_a_question_the_task_asks_is_answered_in_the_waiting_cell(kernel_cell):
    shown, forms = kernel_cell
    with everything_stdio(elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, RESEARCH, {"topic": "python", "ambiguous": True})
        wait_until(lambda: forms, timeout=WAIT)
        form = forms[0]
        assert "multiple interpretations" in form.header.value
        form.fields["interpretation"].value = "comedy"
        form.accept_button.click()
        thread.join(WAIT)
        assert box["result"].text.startswith("# Research Report: python (comedy)")
        assert replies(conn, "elicitation/create")[0]["result"]["content"] == {"interpretation": "comedy"}
    bars = [
        w
        for w in shown
        if isinstance(w, iw.widgets.VBox)
        and isinstance(w.children[0], iw.widgets.HBox)
        and isinstance(w.children[0].children[1], iw.widgets.FloatProgress)
    ]
    assert bars and bars[0].children[1].value.strip().startswith(
        "completed: Generating report..."
    )  # the status as progress, no bare count


# ----------------------------------------------------------------- the session's tasks


def test_list_get_and_cancel_a_running_task(tasks_conn):
    announced = threading.Event()
    tasks_conn.on_notification("notifications/tasks/status", lambda params: announced.set())
    thread, box = in_background(tasks_conn.call_tool, RESEARCH, {"topic": "glaciers"})
    assert announced.wait(WAIT)
    [task] = tasks_conn.list_tasks()
    assert task["status"] in ("working", "input_required") and task["pollInterval"] == 1000
    assert tasks_conn.get_task(task["taskId"])["taskId"] == task["taskId"]
    assert tasks_conn.cancel_task(task["taskId"])["status"] == "cancelled"
    thread.join(WAIT)
    error = box["error"]
    assert isinstance(error, TaskCancelled) and error.task["status"] == "cancelled"
    assert f"task {task['taskId']} was cancelled" in str(error) and "\n" not in str(error)
    assert len(sent(tasks_conn, "tasks/cancel")) == 1  # ours only: the caller did not give up, the task ended
    with pytest.raises(mcp_notebook.McpError) as ended:
        tasks_conn.cancel_task(task["taskId"])
    assert ended.value.code == -32602  # an ended task cannot be cancelled
    with pytest.raises(mcp_notebook.McpError) as unknown:
        tasks_conn.get_task("no-such-task")
    assert unknown.value.code == -32602
    with pytest.raises(mcp_notebook.UsageError, match="a task id is a non-empty string"):
        tasks_conn.get_task("")


def test_the_tasks_magic_lists_them(tasks_conn):
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    tasks_conn.call_tool(RESEARCH, {"topic": "moss"})
    listing = shell.run_line_magic("mcp", "tasks tasks")
    assert isinstance(listing, TaskList) and listing.names() == [created(tasks_conn)]


def test_task_options_that_do_not_fit_the_tool_are_one_line_and_send_nothing(tasks_conn):
    tasks_conn.list_tools()
    with pytest.raises(mcp_notebook.UsageError, match="cannot run as a task"):
        tasks_conn.call_tool("echo", {"message": "hi"}, task=True)
    with pytest.raises(mcp_notebook.UsageError, match="runs only as a task"):
        tasks_conn.call_tool(RESEARCH, {"topic": "x"}, task=False)
    assert not sent(tasks_conn, "tools/call")
    assert tasks_conn.call_tool("echo", {"message": "hi"}).text == "Echo: hi"  # forbidden: a plain call, as before
    assert "task" not in sent(tasks_conn, "tools/call")[-1]["params"] and not sent(tasks_conn, "tasks/get")


def test_an_optional_task_runs_as_one_only_when_asked(tasks_conn):
    tasks_conn.list_tools()  # server-everything says its tool list changed just after the handshake: then it is cached
    tasks_conn.tool(RESEARCH)["execution"]["taskSupport"] = "optional"  # as if the server allowed both (the cached copy)
    plain = tasks_conn.call_tool(RESEARCH, {"topic": "x"})
    assert plain.is_error and "requires task augmentation" in plain.text  # the server's own rule, as a tool error
    assert "task" not in sent(tasks_conn, "tools/call")[-1]["params"]
    assert tasks_conn.call_tool(RESEARCH, {"topic": "kelp"}, task=True).text.startswith("# Research Report: kelp")
    assert sent(tasks_conn, "tools/call")[-1]["params"]["task"] == {"ttl": 3_600_000}


def test_every_task_method_has_a_twin():
    for name in ("list_tasks", "get_task", "cancel_task", "task_result"):
        assert asyncio.iscoroutinefunction(getattr(AsyncConnection, name)), name


# ----------------------------------------------------------------- a stop cancels the task


def test_a_timeout_cancels_the_task(tasks_conn):
    with pytest.raises(mcp_notebook.RequestTimeout, match="maximum total time of 0.5 s"):
        tasks_conn.call_tool(RESEARCH, {"topic": "dunes"}, max_total=0.5)
    task_id = created(tasks_conn)
    assert [m["params"] for m in sent(tasks_conn, "tasks/cancel")] == [{"taskId": task_id}]
    call_id = sent(tasks_conn, "tools/call")[-1]["id"]
    assert call_id not in [m["params"]["requestId"] for m in sent(tasks_conn, "notifications/cancelled")]  # the spec's MUST
    assert tasks_conn.get_task(task_id)["status"] == "cancelled"
    assert not tasks_conn._core.waiting and not tasks_conn._core.pendings


def test_ctrl_c_while_the_task_asks_cancels_tasks_result_and_the_task():
    leave = threading.Event()

    def interrupt(params):  # the question arrives while tasks/result is open: Ctrl-C then
        _thread.interrupt_main()
        leave.wait(WAIT)
        return {"interpretation": "snake"}

    with everything_stdio(elicitation=interrupt) as conn:
        try:
            with pytest.raises(mcp_notebook.Interrupted, match="^cancelled; the server was sent tasks/cancel$"):
                conn.call_tool(RESEARCH, {"topic": "python", "ambiguous": True})
        finally:
            leave.set()
        task_id = created(conn)
        [result_request] = sent(conn, "tasks/result")
        assert [m["params"] for m in sent(conn, "notifications/cancelled")] == [
            {"requestId": result_request["id"], "reason": "cancelled by the user"}
        ]
        assert [m["params"] for m in sent(conn, "tasks/cancel")] == [{"taskId": task_id}]
        assert conn.get_task(task_id)["status"] == "cancelled"
        assert conn.call_tool("echo", {"message": "still usable"}).text == "Echo: still usable"


def test_cancelling_an_awaited_call_cancels_the_task(tasks_conn):
    async def main() -> None:
        loop = asyncio.get_running_loop()
        announced = asyncio.Event()
        tasks_conn.on_notification("notifications/tasks/status", lambda params: loop.call_soon_threadsafe(announced.set))
        call = loop.create_task(tasks_conn.aio.call_tool(RESEARCH, {"topic": "comets"}))
        await asyncio.wait_for(announced.wait(), WAIT)
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call

    try:
        asyncio.run(main())
    finally:
        tasks_conn.on_notification("notifications/tasks/status", None)
    task_id = created(tasks_conn)
    assert [m["params"] for m in sent(tasks_conn, "tasks/cancel")] == [{"taskId": task_id}]
    assert tasks_conn.get_task(task_id)["status"] == "cancelled"


# ----------------------------------------------------------------- what declares no tasks


def test_without_sampling_or_elicitation_the_client_runs_no_tasks_so_the_async_demo_tools_are_absent():
    with everything_stdio(roots=True) as conn:
        assert "tasks" not in sent(conn, "initialize")[0]["params"]["capabilities"]
        names = conn.list_tools(refresh=True).names()
        assert "get-roots-list" in names and RESEARCH in names
        # server-everything registers these only for clients that run sampling/elicitation as tasks
        # (with sampling= or elicitation= they are there: tests/api/client_side/test_task_receiver.py).
        assert "trigger-sampling-request-async" not in names and "trigger-elicitation-request-async" not in names


@pytest.mark.parametrize(
    "era, words",
    [
        ("modern", "2026-07-28 made them the io.modelcontextprotocol/tasks extension"),
        ("legacy", "the server offers no tasks"),
    ],
)
def test_without_tasks_every_task_request_is_one_line(era, words):
    with mcp_notebook.connect(sdk_server_cmd(), name="plain", era=era) as conn:
        for attempt in (
            conn.list_tasks,
            lambda: conn.get_task("t"),
            lambda: conn.cancel_task("t"),
            lambda: conn.task_result("t"),
        ):
            with pytest.raises(mcp_notebook.UsageError, match=words):
                attempt()
        with pytest.raises(mcp_notebook.UsageError, match="2026-07-28" if era == "modern" else "tasks.requests.tools.call"):
            conn.call_tool("echo", {"text": "hi"}, task=True)
        assert conn.call_tool("echo", {"text": "hi"}).text == "hi"  # no execution.taskSupport: as before
        assert not [e for e in conn.trace.frames("out") if (e.method or "").startswith("tasks/")]


# ----------------------------------------------------------------- over Streamable HTTP


def test_over_streamable_http_the_task_asks_completes_and_a_timeout_cancels(url):
    asked = []

    def clarify(params):
        asked.append(params)
        return {"interpretation": "programming"}

    with mcp_notebook.connect(url, name="tasks-http", era="legacy", elicitation=clarify) as conn:
        # server-everything sends status notifications on the GET listening stream, open by now.
        result = conn.call_tool(RESEARCH, {"topic": "python", "ambiguous": True})
        assert result.text.startswith("# Research Report: python (programming)")
        assert asked[0]["_meta"][RELATED] == {"taskId": created(conn)}
        with pytest.raises(mcp_notebook.RequestTimeout):
            conn.call_tool(RESEARCH, {"topic": "dunes"}, max_total=0.5)
        task_id = created(conn)
        assert [m["params"] for m in sent(conn, "tasks/cancel")] == [{"taskId": task_id}]
        assert conn.get_task(task_id)["status"] == "cancelled"
        assert {task["status"] for task in conn.list_tasks()} == {"completed", "cancelled"}
