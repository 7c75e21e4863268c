"""Tasks the client runs for the server (2025-11-25 Tasks, the receiver side).

A `sampling/createMessage` or `elicitation/create` that carries `params.task` is answered
at once with a `CreateTaskResult`; the same answer a plain request gets (the callback, or
the question in the waiting cell) is then worked out in the background, and the server
follows it with `tasks/get`, `tasks/result` (held until the task ends), `tasks/list` and
`tasks/cancel`. A task is kept for its `ttl` (at most MAX_TTL), then forgotten. The
table lives on the session loop and is only touched there, so it needs no lock.

Tasks are bound to the session: only the server that made one can reach it.
"""

from __future__ import annotations

import itertools
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from datetime import datetime, timezone
from typing import Any

import anyio

from ...base.errors import McpError, McpNotebookError
from ...protocol import jsonrpc as rpc
from ...session.handlers import RELATED_TASK, Handler, reply_from_handler

TERMINAL = ("completed", "failed", "cancelled")
DEFAULT_TTL = 600_000  # ms a task is kept when the server names no ttl
MAX_TTL = 3_600_000  # ms: the longest we keep a task, whatever the server asks
POLL_INTERVAL = 500  # ms between the server's tasks/get that we suggest
PAGE_SIZE = 50  # tasks per tasks/list page
MAX_TASKS = 100  # tasks kept at once; the oldest ended ones make room for new ones

Method = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class ReceivedTask:
    """One task we run for the server: its state, and its outcome once it has one."""

    def __init__(self, seq: int, method: str, ttl: int) -> None:
        self.seq = seq  # creation order, for tasks/list cursors
        self.id = secrets.token_urlsafe(16)  # unguessable: the id is all a requestor needs (the spec's MUST)
        self.method = method
        self.ttl = ttl
        self.created_at = self.updated_at = _now()
        self.status = "working"
        self.message: str | None = None
        self.reply: dict[str, Any] | None = None  # the JSON-RPC reply a plain request would have got
        self.ended = anyio.Event()  # terminal, or forgotten
        self.life: anyio.CancelScope | None = None  # the task's whole time with us (its ttl)
        self.work: anyio.CancelScope | None = None  # working its answer out

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def state(self) -> dict[str, Any]:
        """The `Task` the protocol shows."""
        task: dict[str, Any] = {
            "taskId": self.id,
            "status": self.status,
            "createdAt": self.created_at,
            "lastUpdatedAt": self.updated_at,
            "ttl": self.ttl,
            "pollInterval": POLL_INTERVAL,
        }
        if self.message:
            task["statusMessage"] = self.message
        return task

    def end(self, status: str, message: str | None = None, reply: dict[str, Any] | None = None) -> bool:
        """Move to a terminal status (once: a cancelled task stays cancelled); False if it had ended."""
        if self.terminal:
            return False
        self.status, self.message, self.reply, self.updated_at = status, message, reply, _now()
        self.ended.set()
        return True


class TaskReceiver:
    """The tasks one session runs for its server, and the `tasks/*` methods that reach them."""

    def __init__(self, session: Any, methods: set[str]) -> None:
        self.session = session
        self.methods = methods  # the requests we accept as tasks
        self.tasks: OrderedDict[str, ReceivedTask] = OrderedDict()
        self._seq = itertools.count(1)

    def capability(self) -> dict[str, Any]:
        """The client `tasks` capability: task-augmented requests we take, list and cancel."""
        requests: dict[str, Any] = {}
        if "sampling/createMessage" in self.methods:
            requests["sampling"] = {"createMessage": {}}
        if "elicitation/create" in self.methods:
            requests["elicitation"] = {"create": {}}
        return {"requests": requests, "list": {}, "cancel": {}}

    def handlers(self, answers: dict[str, Method]) -> dict[str, Method]:
        """`answers` with the task-capable ones accepting `params.task`, plus the `tasks/*` methods."""
        table = {method: self._accepting(method, fn) if method in self.methods else fn for method, fn in answers.items()}
        table.update(
            {
                "tasks/get": self.get_task,
                "tasks/result": self.task_result,
                "tasks/list": self.list_tasks,
                "tasks/cancel": self.cancel_task,
            }
        )
        return table

    def _accepting(self, method: str, answer: Method) -> Method:
        async def accept(params: dict[str, Any]) -> dict[str, Any]:
            if not isinstance(params.get("task"), dict):
                return await answer(params)  # a plain request, answered as ever
            return {"task": self.create(method, answer, params).state()}

        return accept

    # ----- running a task -----

    def create(self, method: str, answer: Handler, params: dict[str, Any]) -> ReceivedTask:
        """Accept a task-augmented request: record the task and start its work."""
        self._make_room()
        requested = params["task"].get("ttl")
        given = isinstance(requested, int) and not isinstance(requested, bool) and requested > 0
        ttl = min(requested, MAX_TTL) if given else DEFAULT_TTL
        task = ReceivedTask(next(self._seq), method, ttl)
        self.tasks[task.id] = task
        self.session.spawn(self._run, task, answer, params)
        return task

    def _make_room(self) -> None:
        if len(self.tasks) < MAX_TASKS:
            return
        ended = next((task for task in self.tasks.values() if task.terminal), None)
        if ended is None:
            raise McpError(
                rpc.INTERNAL_ERROR, f"this client already runs {MAX_TASKS} tasks for the server; it takes no more until one ends"
            )
        self._forget(ended)

    async def _run(self, task: ReceivedTask, answer: Handler, params: dict[str, Any]) -> None:
        """Work the answer out, keep it for the task's ttl, then forget the task."""
        if self.tasks.get(task.id) is not task:  # cancelled, then forgotten, before it started
            return
        try:
            with anyio.move_on_after(task.ttl / 1000) as task.life:
                if not task.terminal:  # else cancelled before it started
                    with anyio.CancelScope() as task.work:
                        reply, problem = await reply_from_handler(answer, {"id": task.id, "params": params})
                        if problem:
                            self.session.trace.event("handler-error", note=problem, method=task.method)
                        if "result" in reply:
                            self._end(task, "completed", None, reply)
                        else:
                            self._end(task, "failed", str(reply["error"].get("message", "")), reply)
                    task.work = None
                await anyio.sleep_forever()
        finally:
            self._forget(task)

    def _end(self, task: ReceivedTask, status: str, message: str | None, reply: dict[str, Any] | None = None) -> None:
        if task.end(status, message, reply):
            self._announce(task)

    def _announce(self, task: ReceivedTask) -> None:
        """`notifications/tasks/status` (the spec's MAY): the server need not poll to see the end."""
        try:
            self.session.notify("notifications/tasks/status", task.state())
        except McpNotebookError:  # the connection is closing: nobody to tell
            pass

    def _forget(self, task: ReceivedTask) -> None:
        if self.tasks.get(task.id) is task:
            del self.tasks[task.id]
        if task.life is not None:
            task.life.cancel()
        task.ended.set()  # wakes a tasks/result that waits on it: the task is gone

    # ----- the server's tasks/* requests -----

    def _task(self, params: dict[str, Any]) -> ReceivedTask:
        task_id = params.get("taskId")
        task = self.tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise McpError(rpc.INVALID_PARAMS, f"Failed to retrieve task: no task {task_id!r} (unknown, or its ttl ran out)")
        return task

    async def get_task(self, params: dict[str, Any]) -> dict[str, Any]:
        return self._task(params).state()

    async def task_result(self, params: dict[str, Any]) -> dict[str, Any]:
        """Held until the task ends; then exactly what the plain request would have got."""
        task = self._task(params)
        await task.ended.wait()
        if task.reply is None:
            if self.tasks.get(task.id) is not task:
                raise McpError(rpc.INVALID_PARAMS, f"Failed to retrieve task: task {task.id!r} expired")
            raise McpError(rpc.INTERNAL_ERROR, f"task {task.id!r} was cancelled before it had a result")
        if "error" in task.reply:
            error = task.reply["error"]
            raise McpError(error["code"], error["message"], error.get("data"))
        value = task.reply["result"]
        meta = value.get("_meta") if isinstance(value.get("_meta"), dict) else {}
        return {**value, "_meta": {**meta, RELATED_TASK: {"taskId": task.id}}}  # the spec's MUST for tasks/result

    async def list_tasks(self, params: dict[str, Any]) -> dict[str, Any]:
        """A page of tasks in creation order; the cursor is where the last page stopped."""
        cursor = params.get("cursor")
        after = 0
        if cursor is not None:
            if not (isinstance(cursor, str) and cursor.isdigit()):
                raise McpError(rpc.INVALID_PARAMS, f"Invalid cursor: {cursor!r}")
            after = int(cursor)
        tasks = [task for task in self.tasks.values() if task.seq > after]
        listing: dict[str, Any] = {"tasks": [task.state() for task in tasks[:PAGE_SIZE]]}
        if len(tasks) > PAGE_SIZE:
            listing["nextCursor"] = str(tasks[PAGE_SIZE - 1].seq)
        return listing

    async def cancel_task(self, params: dict[str, Any]) -> dict[str, Any]:
        """Stop the task's work (an open question is cancelled) and mark it cancelled."""
        task = self._task(params)
        if task.terminal:
            raise McpError(rpc.INVALID_PARAMS, f"Cannot cancel task: already in terminal status {task.status!r}")
        if task.work is not None:
            task.work.cancel()
        self._end(task, "cancelled", "The task was cancelled by request.")
        return task.state()
