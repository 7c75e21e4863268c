"""A connection's tools and tasks: listing, calling (as tasks when a tool needs it), and
cancelling our requests. Plain functions over the connection's feature state that
`Connection` lists in its class body; each takes the connection as `self`.

Every method waits in the caller's thread, which wakes every few hundredths of a second
to show what the session thread recorded for it (progress, log messages, questions from
the server) in the caller's cell; Ctrl-C or a timeout cancels the request on the server.
Each has an awaitable twin that waits without blocking the caller's event loop.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import ConnectionClosed
from ...runtime import get_runtime
from ..apps import methods as apps
from ..calls import feature_steps as steps
from ..calls.exchange import adrive, drive
from ..calls.feature_state import Featured
from ..results.objects import Listing, ToolResult
from ..tasks.follow import TaskList
from .arguments import merged
from .view import ToolView

# ----- tools -----


def list_tools(self: Featured, *, refresh: bool = False) -> Listing:
    """The server's tools (every page), cached until the server says the list changed."""
    return drive(self.feature_state, steps.list_tools(self.feature_state, refresh))


async def alist_tools(self: Featured, *, refresh: bool = False) -> Listing:
    return await adrive(self.feature_state, steps.list_tools(self.feature_state, refresh))


def tool(self: Featured, name: str) -> dict[str, Any]:
    """One tool's definition; an unknown name raises ToolArgumentError."""
    return drive(self.feature_state, steps.tool(self.feature_state, name))


async def atool(self: Featured, name: str) -> dict[str, Any]:
    return await adrive(self.feature_state, steps.tool(self.feature_state, name))


def describe_tool(self: Featured, name: str) -> ToolView:
    """One tool's own view: full description, argument and output schemas as trees, annotations,
    example calls to copy. An unknown name raises ToolArgumentError."""
    return ToolView(tool(self, name), self.feature_state.name)


async def adescribe_tool(self: Featured, name: str) -> ToolView:
    return ToolView(await atool(self, name), self.feature_state.name)


def check_arguments(self: Featured, name: str, arguments: dict[str, Any]) -> None:
    """Raise ToolArgumentError if `arguments` cannot satisfy the tool's input schema."""
    drive(self.feature_state, steps.check_arguments(self.feature_state, name, arguments))


async def acheck_arguments(self: Featured, name: str, arguments: dict[str, Any]) -> None:
    await adrive(self.feature_state, steps.check_arguments(self.feature_state, name, arguments))


def call_tool(
    self: Featured,
    name: str,
    arguments: dict[str, Any] | None = None,
    /,
    *,
    timeout: float | None = None,
    max_total: float | None = None,
    reset_on_progress: bool = True,
    progress: Any = None,
    validate: bool = True,
    log_level: str | None = None,
    task: bool | None = None,
    **keywords: Any,
) -> ToolResult:
    """Call a tool with `arguments` (a dict), keyword arguments, or both: `call_tool("get-sum", a=1, b=2)`.
    An argument named like a parameter of this method (`timeout`, `task`, ...) goes in the dict.

    Its arguments are checked against the input schema first, its structured
    result against the output schema. `progress`: None shows a bar if the server reports
    progress, a callable gets `(progress, total, message)`, False sends no progress token.
    `log_level` (modern connections): the server's log lines for this call, at or above it.
    `task` (2025-11-25): None runs the tool as a task when it requires one, True when it
    allows one; the task's status changes show like progress, and a stop cancels the task.
    """
    given = merged(name, arguments, keywords)
    call = steps.call_tool(
        self.feature_state, name, given, timeout, max_total, reset_on_progress, progress, validate, log_level, task
    )
    return apps.link(self, drive(self.feature_state, call), given)


async def acall_tool(
    self: Featured,
    name: str,
    arguments: dict[str, Any] | None = None,
    /,
    *,
    timeout: float | None = None,
    max_total: float | None = None,
    reset_on_progress: bool = True,
    progress: Any = None,
    validate: bool = True,
    log_level: str | None = None,
    task: bool | None = None,
    **keywords: Any,
) -> ToolResult:
    """`call_tool`, awaited: the caller's event loop keeps running; cancelling cancels the call."""
    given = merged(name, arguments, keywords)
    call = steps.call_tool(
        self.feature_state, name, given, timeout, max_total, reset_on_progress, progress, validate, log_level, task
    )
    return apps.link(self, await adrive(self.feature_state, call), given)


# ----- tasks (2025-11-25) -----


def list_tasks(self: Featured) -> TaskList:
    """The server's tasks (`tasks/list`, every page)."""
    return drive(self.feature_state, steps.list_tasks(self.feature_state))


async def alist_tasks(self: Featured) -> TaskList:
    return await adrive(self.feature_state, steps.list_tasks(self.feature_state))


def get_task(self: Featured, task_id: str) -> dict[str, Any]:
    """One task's state (`tasks/get`): status, statusMessage, ttl, pollInterval, ..."""
    return drive(self.feature_state, steps.get_task(self.feature_state, task_id))


async def aget_task(self: Featured, task_id: str) -> dict[str, Any]:
    return await adrive(self.feature_state, steps.get_task(self.feature_state, task_id))


def cancel_task(self: Featured, task_id: str) -> dict[str, Any]:
    """Cancel a task (`tasks/cancel`); its final state. An ended task cannot be (McpError -32602)."""
    return drive(self.feature_state, steps.cancel_task(self.feature_state, task_id))


async def acancel_task(self: Featured, task_id: str) -> dict[str, Any]:
    return await adrive(self.feature_state, steps.cancel_task(self.feature_state, task_id))


def task_result(self: Featured, task_id: str, *, timeout: float | None = None) -> ToolResult:
    """A tool-call task's result (`tasks/result`: the server answers when the task has ended)."""
    return drive(self.feature_state, steps.task_result(self.feature_state, task_id, timeout))


async def atask_result(self: Featured, task_id: str, *, timeout: float | None = None) -> ToolResult:
    return await adrive(self.feature_state, steps.task_result(self.feature_state, task_id, timeout))


# ----- cancellation -----


def cancel(self: Featured, request_id: int, reason: str = "cancelled by the user") -> bool:
    """Cancel one of our in-flight requests by id (the server is told); False if none."""
    session = self.feature_state.session

    def find_and_abandon() -> bool:
        pending = self.feature_state.pendings.get(request_id) or session.requests.get(request_id)
        if pending is None:
            return False
        return bool(session.abandon(pending, ConnectionClosed(reason), reason))

    return get_runtime().call_sync(find_and_abandon)
