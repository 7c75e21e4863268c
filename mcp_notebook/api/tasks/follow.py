"""Tasks (2025-11-25, experimental): a task-augmented request followed to its end.

A `tools/call` whose tool requires a task (`execution.taskSupport: "required"`, or
"optional" when asked) goes out with `params.task`; the server answers at once with a
`CreateTaskResult`. We then follow the task: its `notifications/tasks/status` when the
server sends them, else `tasks/get` at the server's `pollInterval` (never faster than
POLL_FLOOR), each status change shown like a progress message and resetting the idle
timeout. At `input_required` or a terminal status we ask `tasks/result`, which the server
holds until the task ends, sending its questions (elicitation, sampling) meanwhile; the
usual handlers answer them. Stopped (Ctrl-C, a timeout, a cancelled await), the round on
the wire is cancelled (`notifications/cancelled`) and the task too (`tasks/cancel`).

This is the requestor side; the tasks we run for servers (task-augmented sampling and
elicitation) are `client_side.task_receiver`'s. A connection's `TaskWatch` is this feature's
state, added to its core; `follower` is what a task-augmented `CallSpec` carries, so the
request core follows a task without knowing what one is. 2026-07-28 moved tasks into an extension
(io.modelcontextprotocol/tasks) with other methods, which this client does not implement.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime
from typing import Any

import anyio

from ...base.errors import ConnectionClosed, McpError, McpNotebookError, ProtocolViolation
from ...base.public import public
from ...base.text import clip
from ...runtime import CANCEL_GRACE
from ...session.era import RoundSender
from ...session.handlers import RELATED_TASK
from ...session.session import CallOptions, PendingCall
from ..calls.progress import Caller
from ..results.objects import Listing

TERMINAL = ("completed", "failed", "cancelled")
POLL_FLOOR = 0.2  # seconds: the fastest we poll tasks/get, whatever the server suggests
POLL_DEFAULT = 1.0  # seconds between polls when the server suggests nothing
POLL_CEILING = 30.0  # status notifications still wake us at once
TASK_TTL = 3600.0  # seconds we ask the server to keep a task (longer when max_total is)
REMEMBERED = 1000  # task states and tool names kept per session
MODERN = (
    "tasks belong to the 2025-11-25 era; 2026-07-28 made them the io.modelcontextprotocol/tasks "
    "extension, which this client does not implement"
)

__all__ = ["RELATED_TASK", "TaskCancelled", "TaskList", "TaskRun", "task_metadata", "task_support", "takes_tool_tasks"]


@public
class TaskCancelled(McpNotebookError):
    """The task ended cancelled without us asking (`tasks/cancel` from elsewhere, or the server)."""

    def __init__(self, message: str, task: dict[str, Any]) -> None:
        self.task = task
        super().__init__(message)


def task_support(tool: dict[str, Any] | None) -> str:
    """A tool's `execution.taskSupport`: "required", "optional" or "forbidden" (the default)."""
    execution = (tool or {}).get("execution")
    value = execution.get("taskSupport") if isinstance(execution, dict) else None
    return value if value in ("required", "optional") else "forbidden"


def takes_tool_tasks(capabilities: dict[str, Any]) -> bool:
    """Whether the server declared `tasks.requests.tools.call` (without it: no task augmentation)."""
    tasks = capabilities.get("tasks")
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and "call" in tools


def task_metadata(max_total: float | None) -> dict[str, Any]:
    """`params.task`: how long (ms) the server should keep the task, outlasting our own wait."""
    return {"ttl": int(max(TASK_TTL, (max_total or 0.0) + 60.0) * 1000)}


def status_line(task: dict[str, Any]) -> str:
    """`input required: Which one do you mean?`: a task's status as a progress message."""
    status = str(task.get("status", "?")).replace("_", " ")
    message = task.get("statusMessage")
    return f"{status}: {clip(message, 200)}" if isinstance(message, str) and message else status


@public
class TaskList(Listing):
    """Tasks (plain Task dicts) that display as a table; `names()` and `get()` go by task id."""

    COLUMNS = {
        **Listing.COLUMNS,
        "tasks": [
            ("taskId", lambda t: t.get("taskId")),
            ("status", lambda t: t.get("status")),
            ("statusMessage", lambda t: clip(t.get("statusMessage"), 70)),
            ("createdAt", lambda t: t.get("createdAt")),
            ("lastUpdatedAt", lambda t: t.get("lastUpdatedAt")),
        ],
    }

    def __init__(self, items: list[dict[str, Any]]) -> None:
        super().__init__("tasks", items)

    KEY = "taskId"


class TaskWatch:
    """Per session: status notifications routed by task id (inline, on the session thread),
    the newest state seen of each task, and the tool each of our tasks runs."""

    def __init__(self, session: Any) -> None:
        self.listeners: dict[str, Callable[[dict[str, Any]], None]] = {}
        self.latest: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self.tools: OrderedDict[str, str] = OrderedDict()
        session.notification_handlers.set_inline("notifications/tasks/status", self.on_status)

    def on_status(self, params: dict[str, Any]) -> None:
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            return
        _remember(self.latest, task_id, params)
        listener = self.listeners.get(task_id)
        if listener is not None:
            listener(params)

    def tool_of(self, task_id: str) -> str | None:
        return self.tools.get(task_id)


def follower(session: Any, watch: TaskWatch) -> Callable[[Caller, Any, Callable[[], bool], str, dict[str, Any] | None], Any]:
    """How a task-augmented request of `session` is followed to its end (an `CallSpec.follow`)."""

    def follow(call: Caller, send: Any, stopped: Callable[[], bool], method: str, params: dict[str, Any] | None) -> Any:
        return TaskRun(session, watch, call, send, stopped).run(method, params)

    return follow


def _remember(table: OrderedDict[str, Any], key: str, value: Any) -> None:
    table[key] = value
    table.move_to_end(key)
    while len(table) > REMEMBERED:
        table.popitem(last=False)


def created_task(result: Any, method: str) -> dict[str, Any]:
    """The Task of a CreateTaskResult; anything else is the server breaking the protocol."""
    task = result.get("task") if isinstance(result, dict) else None
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        raise ProtocolViolation(f"{method}: the server accepted a task-augmented request without a CreateTaskResult")
    return task


def _older(task: dict[str, Any], than: dict[str, Any]) -> bool:
    """Whether `task` was last updated before `than` (False when either time is unreadable)."""
    try:
        return _when(task) < _when(than)
    except (TypeError, ValueError):
        return False


def _when(task: dict[str, Any]) -> datetime:
    text = task.get("lastUpdatedAt")
    if not isinstance(text, str):
        raise ValueError("no lastUpdatedAt")
    return datetime.fromisoformat(text[:-1] + "+00:00" if text.endswith("Z") else text)


class TaskRun:
    """One task-augmented request followed to its end, on the session loop.

    `send(method, params)` puts one follow-up round (tasks/get, tasks/result) on the wire
    for the caller, who may abandon it; the creating request is ours to see through, so a
    stop while it is in flight still learns the task id and cancels the task.
    """

    def __init__(
        self,
        session: Any,
        watch: TaskWatch,
        call: Caller,
        send: RoundSender,
        stopped: Callable[[], bool],
    ) -> None:
        self.session = session
        self.call = call
        self.send = send
        self.stopped = stopped  # the caller gave up (its round may end in a failure rather than a cancellation)
        self.watch = watch
        self.task: dict[str, Any] = {}  # the newest state seen
        self.shown: tuple[Any, Any] | None = None
        self.changed = anyio.Event()

    async def run(self, method: str, params: dict[str, Any] | None) -> Any:
        """Create the task, follow it, return its payload; stopped: cancel it on the server."""
        creating = self.session.call(method, params, CallOptions(own_deadline=True))
        try:
            await creating.wait_async()
            task = created_task(creating.outcome(), method)
            task_id = task["taskId"]
            if isinstance(params, dict) and isinstance(params.get("name"), str):
                _remember(self.watch.tools, task_id, params["name"])
            self.task = task
            self.watch.listeners[task_id] = self.observe
            try:
                return await self._follow(task_id)
            finally:
                self.watch.listeners.pop(task_id, None)
        except BaseException as exc:
            if not (isinstance(exc, anyio.get_cancelled_exc_class()) or self.stopped()):
                raise
            with anyio.move_on_after(CANCEL_GRACE, shield=True):
                if not self.task:  # no notifications/cancelled for it: its task is cancelled instead
                    await creating.wait_async()
                await self._cancel(creating, method)
            if not creating.settled:  # the grace ran out before the server answered
                creating.cancel(ConnectionClosed("cancelled by the user"), "cancelled by the user")
            raise

    async def _follow(self, task_id: str) -> Any:
        self.observe(self.task)
        latest = self.watch.latest.get(task_id)
        if latest is not None and latest.get("status") in TERMINAL:  # it ended before its CreateTaskResult was read
            self.observe(latest)
        while self.task.get("status") not in (*TERMINAL, "input_required"):
            self.changed = anyio.Event()
            with anyio.move_on_after(self._interval()):
                await self.changed.wait()
            if not self.changed.is_set():  # no status notification meanwhile: ask
                self.observe((await self.send("tasks/get", {"taskId": task_id})).outcome())
        if self.task.get("status") == "cancelled":
            raise self._cancelled()
        try:  # held by the server until the task ends; its questions arrive meanwhile
            return (await self.send("tasks/result", {"taskId": task_id})).outcome()
        except McpError as error:
            if self.task.get("status") == "cancelled":
                raise self._cancelled() from error
            raise

    def observe(self, task: Any) -> None:
        """A state of our task (CreateTaskResult, tasks/get, a status notification): show what changed."""
        if not isinstance(task, dict) or task.get("taskId") != self.task.get("taskId"):
            return
        if (self.task.get("status") in TERMINAL and task.get("status") not in TERMINAL) or _older(task, self.task):
            return  # a stale answer, read after a newer status notification
        self.task = task
        shown = (task.get("status"), task.get("statusMessage"))
        if shown != self.shown:
            self.shown = shown
            state = self.call.progress  # the status message is this call's progress message
            self.call.on_progress({"progress": state.progress, "total": state.total, "message": status_line(task)})
        self.changed.set()

    def _interval(self) -> float:
        suggested = self.task.get("pollInterval")
        seconds = suggested / 1000 if isinstance(suggested, (int, float)) and suggested > 0 else POLL_DEFAULT
        return min(POLL_CEILING, max(POLL_FLOOR, seconds))

    def _cancelled(self) -> TaskCancelled:
        why = self.task.get("statusMessage")
        return TaskCancelled(
            f"{self.call.method}: task {self.task.get('taskId')} was cancelled"
            + (f" ({why})" if isinstance(why, str) and why else ""),
            dict(self.task),
        )

    async def _cancel(self, creating: PendingCall, method: str) -> None:
        """We stopped: `tasks/cancel` the task, unless none was made or it has ended."""
        if not self.task:
            try:
                self.task = created_task(creating.outcome(), method)
            except Exception:  # noqa: BLE001 - no task was made: nothing to cancel
                return
        if self.task.get("status") in TERMINAL:
            return
        try:
            self.observe(await self.session.request("tasks/cancel", {"taskId": self.task["taskId"]}))
        except McpNotebookError:  # it ended meanwhile (-32602), the server refuses, or the connection is gone
            pass
