"""A connection's tool methods: listing, one tool's definition and view, checking arguments,
calling (as a task when the tool needs it), and cancelling our requests.

Each method is written once, as steps over the connection (`calls.steps`); the table at the
end gives each its blocking face and awaitable twin (`calls.twins`), which `Connection` takes
by name. A blocking call waits in the caller's thread and shows what arrives for it (progress,
log lines, the server's questions) in the caller's cell; Ctrl-C or a timeout cancels the
request on the server.
"""

from __future__ import annotations

import difflib
from typing import Any

from ...base.errors import ConnectionClosed, UsageError
from ...base.plural import counted
from ..apps import methods as apps
from ..calls.core import Core, Featured
from ..calls.exchange import CallSpec, Steps
from ..calls.steps import listing, request_log_level
from ..calls.twins import twin
from ..results.objects import Listing, ToolResult
from ..tasks.follow import MODERN, TaskWatch, follower, takes_tool_tasks, task_metadata, task_support
from .arguments import merged, warn_undeclared
from .checks import CompiledTool, ToolChecks
from .validate import OutputSchemaError, ToolArgumentError
from .view import ToolView


def list_tools(conn: Featured, *, refresh: bool = False) -> Steps[Listing]:
    """The server's tools (every page), cached until the server says the list changed."""
    return (yield from listing(conn._core, "tools/list", "tools", refresh, "tools"))


def tool(conn: Featured, name: str) -> Steps[dict[str, Any]]:
    """One tool's definition; an unknown name raises ToolArgumentError."""
    return (yield from _definition(conn._core, name))


def describe_tool(conn: Featured, name: str) -> Steps[ToolView]:
    """One tool's own view: full description, argument and output schemas as trees, annotations,
    example calls to copy. An unknown name raises ToolArgumentError."""
    return ToolView((yield from _definition(conn._core, name)), conn._core.name)


def check_arguments(conn: Featured, name: str, arguments: dict[str, Any]) -> Steps[None]:
    """Raise ToolArgumentError if `arguments` cannot satisfy the tool's input schema."""
    _check_arguments(name, arguments, (yield from compiled_tool(conn._core, name)))


def call_tool(
    conn: Featured,
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
) -> Steps[ToolResult]:
    """Call a tool with `arguments` (a dict), keyword arguments, or both: `call_tool("get-sum", a=1, b=2)`.
    An argument named like a parameter of this method (`timeout`, `task`, ...) goes in the dict.

    Its arguments are checked against the input schema first, its structured
    result against the output schema. `progress`: None shows a bar if the server reports
    progress, a callable gets `(progress, total, message)`, False sends no progress token.
    `log_level` (modern connections): the server's log lines for this call, at or above it.
    `task` (2025-11-25): None runs the tool as a task when it requires one, True when it
    allows one; the task's status changes show like progress, and a stop cancels the task.
    """
    fx = conn._core
    given = merged(name, arguments, keywords)
    level = request_log_level(fx, log_level)
    known = None
    if validate:
        compiled = cached_checks(fx, name) or (yield from compiled_tool(fx, name))
        _check_arguments(name, given, compiled)
        if compiled.may_warn(given):
            warn_undeclared(name, given, compiled.input_schema)
        known = compiled.definition
    params: dict[str, Any] = {"name": name, "arguments": given}
    as_task = _may_run_as_task(fx, task) and (yield from _as_task(fx, name, task, known))
    if as_task:
        params["task"] = task_metadata(max_total)
    follow = follower(fx.session, fx.get(TaskWatch)) if as_task else None
    raw = yield CallSpec("tools/call", params, timeout, max_total, reset_on_progress, progress, level, follow)
    result = ToolResult(name, raw if isinstance(raw, dict) else {})
    if validate:
        checks = cached_checks(fx, name) or (yield from compiled_tool(fx, name))  # the listing may have changed meanwhile
        _check_output(name, result, checks)
    return apps.link(conn, result, given)


def cancel(self: Featured, request_id: int, reason: str = "cancelled by the user") -> bool:
    """Cancel one of our in-flight requests by id (the server is told); False if none."""
    pending = self._core.pendings.get(request_id) or self._core.session.in_flight(request_id)
    return pending is not None and pending.cancel(ConnectionClosed(reason), reason)


# ----- the steps' parts -----


def _definition(fx: Core, name: str) -> Steps[dict[str, Any]]:
    tools = yield from listing(fx, "tools/list", "tools", False, "tools")
    found = tools.get(name) or (yield from listing(fx, "tools/list", "tools", True, "tools")).get(name)
    if found is None:
        raise ToolArgumentError(f"{fx.name}: unknown tool {name!r}; {_known_tools(name, tools.names())}")
    return found


def _known_tools(name: str, names: list[str], shown: int = 3) -> str:
    """How many tools there are and a few names, the closest to `name` first; never the whole list."""
    if not names:
        return "the server has no tools"
    lowered = name.lower()
    close = difflib.get_close_matches(name, names, n=shown, cutoff=0.6)
    close += [n for n in names if n not in close and (lowered in n.lower() or n.lower() in lowered)]
    if close:
        return f"did you mean {', '.join(map(repr, close[:shown]))}? (list_tools() or %mcp tools lists all {len(names)})"
    few = ", ".join(map(repr, names[:shown])) + (", ..." if len(names) > shown else "")
    return f"the server has {counted(len(names), 'tool')}: {few} (list_tools() or %mcp tools lists them)"


def compiled_tool(fx: Core, name: str) -> Steps[CompiledTool]:
    """`tool(name)`'s checks, compiled once per listing: no request and no scan of the listing
    while the cached one lasts."""
    found = cached_checks(fx, name)
    if found is not None:
        return found
    definition = yield from _definition(fx, name)
    cached = fx.listings.cached("tools")
    found = fx.get(ToolChecks).get(cached, name) if cached is not None else None
    return found if found is not None and found.definition is definition else CompiledTool(definition)


def cached_checks(fx: Core, name: str) -> CompiledTool | None:
    """The checks of a tool in the cached listing, or None: what `compiled_tool` takes without a
    step (a call looks twice, and a generator per look more than doubles a look's cost)."""
    cached = fx.listings.cached("tools") if "tools" in fx.session.server.capabilities else None
    return fx.get(ToolChecks).get(cached, name) if cached is not None else None


def _check_arguments(name: str, arguments: dict[str, Any], compiled: CompiledTool) -> None:
    issues = compiled.argument_problems(arguments)
    if issues:
        raise ToolArgumentError(f"{name}: {'; '.join(issues)}")


def _check_output(name: str, result: ToolResult, compiled: CompiledTool) -> None:
    if compiled.output_schema and not result.is_error:
        if result.structured is None:
            raise OutputSchemaError(f"{name}: the tool declares an outputSchema but its result has no structuredContent")
        issues = compiled.output_problems(result.structured)
        if issues:
            more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
            raise OutputSchemaError(f"{name}: the server's result violates the tool's outputSchema: {issues[0]}{more}")


def _may_run_as_task(fx: Core, task: bool | None) -> bool:
    """Whether the connection takes task-augmented tool calls at all; `task=True` where it
    does not is a UsageError. Servers without tool tasks get plain calls."""
    if not fx.session.rules.tasks:
        if task:
            raise UsageError(f"{fx.name}: {MODERN}")
        return False
    if not takes_tool_tasks(fx.session.server.capabilities):
        if task:
            raise UsageError(f"{fx.name}: the server takes no task-augmented tool calls (no tasks.requests.tools.call)")
        return False
    return True


def _as_task(fx: Core, name: str, task: bool | None, known: dict[str, Any] | None = None) -> Steps[bool]:
    """Whether to call the tool task-augmented, where the connection takes such calls
    (`_may_run_as_task`): as its `execution.taskSupport` says, or as `task` asks where the tool allows."""
    tool = known or (yield from listing(fx, "tools/list", "tools", False, "tools")).get(name)
    tool = tool or (yield from listing(fx, "tools/list", "tools", True, "tools")).get(name)
    support = task_support(tool)
    if task is None:
        return support == "required"
    if task and support == "forbidden":
        raise UsageError(f"{name}: the tool cannot run as a task (its execution.taskSupport is 'forbidden' or absent)")
    if not task and support == "required":
        raise UsageError(f"{name}: the tool runs only as a task (execution.taskSupport 'required'); leave task= unset")
    return task


# ----- the table: each method's blocking face and awaitable twin, taken by `Connection` -----

LIST_TOOLS = twin(list_tools)
TOOL = twin(tool)
DESCRIBE_TOOL = twin(describe_tool)
CHECK_ARGUMENTS = twin(check_arguments)
CALL_TOOL = twin(call_tool)
