"""Tasks the client runs for the server (2025-11-25 Tasks, the receiver side).

With sampling= or elicitation= configured the client declares the `tasks` capability, so
server-everything offers `trigger-sampling-request-async` and
`trigger-elicitation-request-async`: it sends the request with `params.task`, we answer
with a CreateTaskResult at once, work the answer out (a callback, or the question in the
waiting cell) and the server polls `tasks/get`, then fetches `tasks/result`.
server-everything never sends `tasks/list` or `tasks/cancel`, nor `tasks/result` before a
task ends: tests/peers/task_requestor.mjs, a small server on the official TypeScript SDK
(which checks every answer against its own schemas), does. Over stdio, and once over
Streamable HTTP. Every frame we send is checked against the 2025-11-25 schema (conftest).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from support.features import sent
from support.servers import PEERS_DIR, node_executable, sdk_server_cmd, server_everything_cmd
from support.waiting import wait_until
from support.widgets import in_background, replies

import mcp_notebook
from mcp_notebook.api.client_side import answers as _server_requests

pytestmark = [pytest.mark.node]

RELATED = "io.modelcontextprotocol/related-task"
WAIT = 20.0  # how long an awaited event may take before the test fails: a hang guard, not a timing claim
SAMPLING_ASYNC = "trigger-sampling-request-async"
ELICITATION_ASYNC = "trigger-elicitation-request-async"
BOTH = {"requests": {"sampling": {"createMessage": {}}, "elicitation": {"create": {}}}, "list": {}, "cancel": {}}


def everything_stdio(**options: Any) -> mcp_notebook.Connection:
    return mcp_notebook.connect(server_everything_cmd(), name="receiver", era="legacy", **options)


def requestor(**options: Any) -> mcp_notebook.Connection:
    cmd = [node_executable(), str(PEERS_DIR / "task_requestor.mjs")]
    return mcp_notebook.connect(cmd, name="requestor", era="legacy", **options)


def answered(conn: mcp_notebook.Connection, method: str) -> list[dict[str, Any]]:
    """Our replies to the server's `method` requests, in order (result or error objects)."""
    return [reply.get("result", reply.get("error")) for reply in replies(conn, method)]


def seen(result: mcp_notebook.ToolResult) -> dict[str, Any]:
    return json.loads(result.text)


@pytest.fixture
def questions(monkeypatch) -> list[_server_requests.Question]:
    """Every Question the connection posts to a cell."""
    made: list[_server_requests.Question] = []

    class Recorded(_server_requests.Question):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            made.append(self)

    monkeypatch.setattr(_server_requests, "Question", Recorded)
    return made


# ----------------------------------------------------------------- server-everything


def check_the_sampling_task(conn: mcp_notebook.Connection, asked: list[dict[str, Any]]) -> None:
    """trigger-sampling-request-async, answered by a callback: the server's report has our reply."""
    assert sent(conn, "initialize")[0]["params"]["capabilities"]["tasks"] == BOTH
    assert {SAMPLING_ASYNC, ELICITATION_ASYNC} <= set(conn.list_tools(refresh=True).names())
    text = conn.call_tool(SAMPLING_ASYNC, {"prompt": "tides"}).text
    assert text.startswith("[COMPLETED] Async sampling completed!") and '"text": "forty-two"' in text
    [params] = asked
    assert params["task"] == {"ttl": 300000} and "tides" in params["messages"][0]["content"]["text"]
    [created] = answered(conn, "sampling/createMessage")
    task = created["task"]
    assert task["status"] == "working" and task["ttl"] == 300000 and task["pollInterval"] > 0
    assert f"Task created: {task['taskId']}" in text
    polls = answered(conn, "tasks/get")
    assert polls and all(p["taskId"] == task["taskId"] for p in polls) and polls[-1]["status"] == "completed"
    [payload] = answered(conn, "tasks/result")
    assert payload["content"] == {"type": "text", "text": "forty-two"} and payload["role"] == "assistant"
    assert payload["_meta"][RELATED] == {"taskId": task["taskId"]}  # the spec's MUST for tasks/result
    [status] = [m["params"] for m in sent(conn, "notifications/tasks/status")]
    assert status["taskId"] == task["taskId"] and status["status"] == "completed"


def test_async_sampling_runs_as_a_task_a_callback_answers():
    asked: list[dict[str, Any]] = []

    def sample(params: dict[str, Any]) -> str:
        asked.append(params)
        return "forty-two"

    with everything_stdio(sampling=sample) as conn:
        assert sent(conn, "initialize")[0]["params"]["capabilities"]["tasks"] == {
            "requests": {"sampling": {"createMessage": {}}},
            "list": {},
            "cancel": {},
        }  # only what is configured
        names = conn.list_tools(refresh=True).names()
        assert SAMPLING_ASYNC in names and ELICITATION_ASYNC not in names
    with everything_stdio(sampling=sample, elicitation=lambda params: {"name": "Ada"}) as conn:
        check_the_sampling_task(conn, asked)
        # A plain request is answered as ever, with no task.
        assert "forty-two" in conn.call_tool("trigger-sampling-request", {"prompt": "plain"}).text
        assert answered(conn, "sampling/createMessage")[-1]["content"] == {"type": "text", "text": "forty-two"}


def test_async_elicitation_runs_as_a_task_a_callback_answers():
    with everything_stdio(elicitation=lambda params: {"name": "Ada", "favoriteColor": "Blue", "agreeToTerms": True}) as conn:
        text = conn.call_tool(ELICITATION_ASYNC).text
        assert text.startswith("[COMPLETED] User provided the requested information!")
        assert "- Name: Ada" in text and "- Favorite Color: Blue" in text and "- Agreed to terms: true" in text
        [created] = answered(conn, "elicitation/create")
        [payload] = answered(conn, "tasks/result")
        assert payload["action"] == "accept" and payload["_meta"][RELATED] == {"taskId": created["task"]["taskId"]}


def test_a_refused_sampling_task_fails_with_the_error_a_plain_request_gets():
    with everything_stdio(sampling=lambda params: None) as conn:
        text = conn.call_tool(SAMPLING_ASYNC, {"prompt": "no"}).text
        assert text.startswith("[FAILED] User rejected sampling request")  # the status message, seen by the server
        assert answered(conn, "tasks/get")[-1]["status"] == "failed"
        assert not answered(conn, "tasks/result")  # server-everything fetches no result of a failed task


def test_the_question_of_a_task_is_answered_in_the_waiting_cell(kernel_cell):
    _, forms = kernel_cell
    with everything_stdio(elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, ELICITATION_ASYNC)
        wait_until(lambda: forms, timeout=WAIT)
        form = forms[0]
        assert "async task demo" in form.header.value
        # While the form waits, the server polls and sees the task working.
        wait_until(lambda: answered(conn, "tasks/get"), timeout=WAIT)
        assert answered(conn, "tasks/get")[0]["status"] == "working"
        form.fields["name"].value = "Grace"
        form.accept_button.click()
        thread.join(WAIT)
        assert "- Name: Grace" in box["result"].text
        assert answered(conn, "tasks/result")[0]["content"]["name"] == "Grace"


# ----------------------------------------------------------------- tasks/result, tasks/list, tasks/cancel


def test_tasks_result_is_held_until_the_question_in_the_cell_is_answered(kernel_cell):
    _, forms = kernel_cell
    with requestor(elicitation=True) as conn:
        thread, box = in_background(conn.call_tool, "ask-and-wait", {"ttl": 60000})
        wait_until(lambda: forms, timeout=WAIT)
        wait_until(lambda: sent_to_us(conn, "tasks/result"), timeout=WAIT)
        assert not answered(conn, "tasks/result")  # held: the task has not ended
        forms[0].fields["colour"].value = "teal"
        forms[0].accept_button.click()
        thread.join(WAIT)
        report = seen(box["result"])
        task_id = report["created"]["taskId"]
        assert report["result"] == {"action": "accept", "content": {"colour": "teal"}, "_meta": {RELATED: {"taskId": task_id}}}
        assert report["after"]["status"] == "completed"


def test_a_failed_task_gives_tasks_result_the_error_a_plain_request_gets():
    with requestor(elicitation=lambda params: "not a dict") as conn:
        report = seen(conn.call_tool("ask-and-wait", {"ttl": 60000}))
        error = report["result"]["error"]
        assert error["code"] == -32603 and "the elicitation callback returned str" in error["message"]
        assert report["after"]["status"] == "failed" and "returned str" in report["after"]["statusMessage"]


def sent_to_us(conn: mcp_notebook.Connection, method: str) -> list[Any]:
    return [e for e in conn.trace.frames("in") if e.kind == "request" and e.method == method]


def test_tasks_cancel_cancels_the_open_question(kernel_cell, questions):
    with requestor(elicitation=True) as conn:
        report = seen(conn.call_tool("ask-then-cancel"))
        task_id = report["created"]["taskId"]
        assert task_id in [t["taskId"] for t in report["listed"]["tasks"]]
        assert report["before"]["status"] == "working"
        assert report["cancelled"]["status"] == "cancelled" and report["cancelled"]["taskId"] == task_id
        assert report["after"]["status"] == "cancelled"
        assert report["again"]["error"]["code"] == -32602  # an ended task cannot be cancelled (the spec's MUST)
        assert report["result"]["error"]["code"] == -32603 and "cancelled" in report["result"]["error"]["message"]
        [question] = questions
        assert question.future.result(WAIT) == {"action": "cancel"}  # the question in the cell ended with it
        statuses = [m["params"]["status"] for m in sent(conn, "notifications/tasks/status")]
        assert statuses == ["cancelled"]


def test_a_task_is_forgotten_when_its_ttl_runs_out(kernel_cell, questions):
    with requestor(elicitation=True) as conn:
        report = seen(conn.call_tool("ask-and-wait", {"ttl": 1}))
        assert report["created"]["ttl"] == 1
        assert report["result"]["error"]["code"] == -32602  # expired (or already unknown)
        assert report["after"]["error"]["code"] == -32602
        assert not conn._core.get(_server_requests.ServerRequests).tasks.tasks
        assert all(q.future.result(WAIT) == {"action": "cancel"} for q in questions)


def test_tasks_list_pages_with_an_opaque_cursor():
    with requestor(sampling=lambda params: "ok") as conn:
        report = seen(conn.call_tool("many-tasks", {"count": 53}))
        pages = report["pages"]
        assert [len(page["ids"]) for page in pages] == [50, 3] and pages[-1]["nextCursor"] is None
        assert [task_id for page in pages for task_id in page["ids"]] == report["created"]  # each once, in order
        assert report["badCursor"]["error"]["code"] == -32602
        assert report["lastResult"]["content"] == {"type": "text", "text": "ok"}
        assert len(set(report["created"])) == 53


# ----------------------------------------------------------------- what declares no tasks


def test_the_modern_era_declares_no_tasks():
    with mcp_notebook.connect(sdk_server_cmd(), name="modern", era="auto", sampling=lambda params: "hi") as conn:
        assert conn._session.era == "modern"
        modern_requests = [e for e in conn.trace.frames("out") if e.kind == "request" and e.message["method"] != "initialize"]
        metas = [e.message["params"]["_meta"] for e in modern_requests]  # (a slow probe has initialize offered beside it)
        assert metas and all("tasks" not in m["io.modelcontextprotocol/clientCapabilities"] for m in metas)
        assert "sampling" in metas[0]["io.modelcontextprotocol/clientCapabilities"]
    with mcp_notebook.connect(sdk_server_cmd(), name="modern", era="modern", sampling=lambda params: "hi") as conn:
        assert (
            conn._core.get(_server_requests.ServerRequests).tasks is None
            and conn._session.request_handlers.get("tasks/get") is None
        )


def test_a_handler_of_the_users_own_is_not_made_a_task():
    with everything_stdio(
        sampling=lambda params: "ours",
        elicitation=lambda params: {},
        handlers={
            "sampling/createMessage": lambda params: {
                "role": "assistant",
                "content": {"type": "text", "text": "theirs"},
                "model": "m",
            }
        },
    ) as conn:
        assert sent(conn, "initialize")[0]["params"]["capabilities"]["tasks"]["requests"] == {"elicitation": {"create": {}}}
        assert SAMPLING_ASYNC not in conn.list_tools(refresh=True).names()


# ----------------------------------------------------------------- over Streamable HTTP


def test_over_streamable_http_both_async_tools_run_as_tasks(url):
    asked: list[dict[str, Any]] = []

    def sample(params: dict[str, Any]) -> str:
        asked.append(params)
        return "forty-two"

    with mcp_notebook.connect(
        url, name="receiver-http", era="legacy", sampling=sample, elicitation=lambda params: {"name": "Ada"}
    ) as conn:
        check_the_sampling_task(conn, asked)
        text = conn.call_tool(ELICITATION_ASYNC).text
        assert text.startswith("[COMPLETED]") and "- Name: Ada" in text
