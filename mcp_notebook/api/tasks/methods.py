"""A connection's task methods (2025-11-25): the server's tasks listed, one task's state, its
cancellation and a tool-call task's result.

Each method is written once, as steps over the connection; the table at the end gives each
its blocking face and awaitable twin (`calls.twins`), which `Connection` takes by name. The
modern era (2026-07-28) moved tasks into an extension this client does not implement.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError
from ..calls.core import Core, Featured
from ..calls.exchange import CallSpec, Steps
from ..calls.steps import pages
from ..calls.twins import twin
from ..results.objects import ToolResult
from .follow import MODERN, TaskList, TaskWatch


def list_tasks(conn: Featured) -> Steps[TaskList]:
    """The server's tasks (`tasks/list`, every page)."""
    fx = conn._core
    _tasks_offered(fx, "list")
    return TaskList((yield from pages(fx, "tasks/list", "tasks")))


def get_task(conn: Featured, task_id: str) -> Steps[dict[str, Any]]:
    """One task's state (`tasks/get`): status, statusMessage, ttl, pollInterval, ..."""
    _tasks_offered(conn._core)
    return dict((yield CallSpec("tasks/get", {"taskId": _task_id(task_id)})))


def cancel_task(conn: Featured, task_id: str) -> Steps[dict[str, Any]]:
    """Cancel a task (`tasks/cancel`); its final state. An ended task cannot be (McpError -32602)."""
    _tasks_offered(conn._core, "cancel")
    return dict((yield CallSpec("tasks/cancel", {"taskId": _task_id(task_id)})))


def task_result(conn: Featured, task_id: str, *, timeout: float | None = None) -> Steps[ToolResult]:
    """A tool-call task's result (`tasks/result`: the server answers when the task has ended)."""
    fx = conn._core
    _tasks_offered(fx)
    raw = yield CallSpec("tasks/result", {"taskId": _task_id(task_id)}, timeout)
    return ToolResult(fx.get(TaskWatch).tool_of(task_id) or f"task {task_id}", raw if isinstance(raw, dict) else {})


def _tasks_offered(fx: Core, operation: str | None = None) -> None:
    if not fx.session.rules.tasks:
        raise UsageError(f"{fx.name}: {MODERN}")
    tasks = fx.session.server.capabilities.get("tasks")
    if not isinstance(tasks, dict):
        raise UsageError(f"{fx.name}: the server offers no tasks")
    if operation is not None and operation not in tasks:
        raise UsageError(f"{fx.name}: the server does not offer tasks/{operation}")


def _task_id(task_id: Any) -> str:
    if not isinstance(task_id, str) or not task_id:
        raise UsageError(f"a task id is a non-empty string, not {task_id!r}")
    return task_id


# ----- the table: each method's blocking face and awaitable twin, taken by `Connection` -----

LIST_TASKS = twin(list_tasks)
GET_TASK = twin(get_task)
CANCEL_TASK = twin(cancel_task)
TASK_RESULT = twin(task_result)
