"""What each client feature does, written once: generators that yield the requests they need
(`Exchange`) and return the method's result, as functions of the connection's feature state.
The public methods (`features`) run them in the caller's thread (`call_tool`) or await them
(`acall_tool`); the steps know neither.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from ...base.errors import UsageError
from ..results.objects import Listing, PromptResult, ResourceResult, ToolResult
from ..tasks.follow import MODERN, TaskList, takes_tool_tasks, task_metadata, task_support
from ..tools.arguments import warn_undeclared
from ..tools.checks import CompiledTool
from ..tools.validate import OutputSchemaError, ToolArgumentError, mapping
from .exchange import Exchange, Steps
from .feature_state import FeatureState
from .progress import LOG_LEVELS

MAX_PAGES = 1000


def _request_log_level(fx: FeatureState, level: str | None) -> str | None:
    """A per-request log level, checked: it exists in the modern era only (2026-07-28 `_meta`)."""
    if level is None:
        return None
    if level not in LOG_LEVELS:
        raise UsageError(f"unknown log level {level!r}; use one of: {', '.join(LOG_LEVELS)}")
    if fx.session.era != "modern":
        raise UsageError(
            f"{fx.name}: a log level per request needs a modern (2026-07-28) connection; this one is legacy: use set_log_level()"
        )
    return level


def _list(fx: FeatureState, method: str, key: str, refresh: bool, capability: str) -> Steps[Listing]:
    if capability not in fx.session.server.capabilities:
        return Listing(key, [])  # a server without the capability has none: an empty list, in either era
    cached = None if refresh else fx.cached(key)
    if cached is not None:
        return cached
    before = fx.list_changes.get(key, 0)
    listing = Listing(key, (yield from _pages(fx, method, key)))
    fx.store(key, listing, before)
    return listing


def _pages(fx: FeatureState, method: str, key: str) -> Steps[list[dict[str, Any]]]:
    """Every page of a paginated list (an opaque cursor seen twice ends it)."""
    items: list[dict[str, Any]] = []
    cursor: str | None = None
    seen: set[str] = set()
    for _ in range(MAX_PAGES):
        result = yield Exchange(method, {"cursor": cursor} if cursor else None)
        items += [item for item in result.get(key) or [] if isinstance(item, dict)]
        cursor = result.get("nextCursor")
        if not isinstance(cursor, str) or not cursor or cursor in seen:
            break
        seen.add(cursor)
    return items


# ----- tools -----


def list_tools(fx: FeatureState, refresh: bool = False) -> Steps[Listing]:
    return (yield from _list(fx, "tools/list", "tools", refresh, "tools"))


def tool(fx: FeatureState, name: str) -> Steps[dict[str, Any]]:
    tools = yield from list_tools(fx)
    found = tools.get(name) or (yield from list_tools(fx, refresh=True)).get(name)
    if found is None:
        close = [n for n in tools.names() if name.lower() in n.lower() or n.lower() in name.lower()]
        hint = f"; did you mean {', '.join(close[:3])}?" if close else f"; the tools are: {', '.join(tools.names()) or 'none'}"
        raise ToolArgumentError(f"{fx.name}: unknown tool {name!r}{hint}")
    return found


def compiled_tool(fx: FeatureState, name: str) -> Steps[CompiledTool]:
    """`tool(name)`'s checks, compiled once per listing: no request and no scan of the listing
    while the cached one lasts."""
    listing = fx.cached("tools") if "tools" in fx.session.server.capabilities else None
    found = fx.tool_checks.get(listing, name) if listing is not None else None
    if found is not None:
        return found
    definition = yield from tool(fx, name)
    listing = fx.cached("tools")
    found = fx.tool_checks.get(listing, name) if listing is not None else None
    return found if found is not None and found.definition is definition else CompiledTool(definition)


def check_arguments(fx: FeatureState, name: str, arguments: dict[str, Any]) -> Steps[None]:
    _check_arguments(name, arguments, (yield from compiled_tool(fx, name)))


def _check_arguments(name: str, arguments: dict[str, Any], compiled: CompiledTool) -> None:
    issues = compiled.argument_problems(arguments)
    if issues:
        raise ToolArgumentError(f"{name}: {'; '.join(issues)}")


def call_tool(
    fx: FeatureState,
    name: str,
    arguments: dict[str, Any],
    timeout: float | None,
    max_total: float | None,
    reset_on_progress: bool,
    progress: Any,
    validate: bool,
    log_level: str | None,
    task: bool | None = None,
) -> Steps[ToolResult]:
    """`arguments`: a dict of its own, as `arguments.merged` makes it (names checked, dict and keywords merged)."""
    level = _request_log_level(fx, log_level)
    known = None
    if validate:
        compiled = yield from compiled_tool(fx, name)
        _check_arguments(name, arguments, compiled)
        if compiled.may_warn(arguments):
            warn_undeclared(name, arguments, compiled.input_schema)
        known = compiled.definition
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    as_task = yield from _as_task(fx, name, task, known)
    if as_task:
        params["task"] = task_metadata(max_total)
    raw = yield Exchange("tools/call", params, timeout, max_total, reset_on_progress, progress, level, task=as_task)
    result = ToolResult(name, raw if isinstance(raw, dict) else {})
    if not validate:
        return result
    compiled = yield from compiled_tool(fx, name)  # the listing may have changed during the call
    if compiled.output_schema and not result.is_error:
        if result.structured is None:
            raise OutputSchemaError(f"{name}: the tool declares an outputSchema but its result has no structuredContent")
        issues = compiled.output_problems(result.structured)
        if issues:
            more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
            raise OutputSchemaError(f"{name}: the server's result violates the tool's outputSchema: {issues[0]}{more}")
    return result


def _as_task(fx: FeatureState, name: str, task: bool | None, known: dict[str, Any] | None = None) -> Steps[bool]:
    """Whether to call the tool task-augmented: as its `execution.taskSupport` says, or as
    `task` asks where the tool allows. Servers without tool tasks get plain calls."""
    if fx.session.era == "modern":
        if task:
            raise UsageError(f"{fx.name}: {MODERN}")
        return False
    if not takes_tool_tasks(fx.session.server.capabilities):
        if task:
            raise UsageError(f"{fx.name}: the server takes no task-augmented tool calls (no tasks.requests.tools.call)")
        return False
    tool = known or (yield from list_tools(fx)).get(name) or (yield from list_tools(fx, refresh=True)).get(name)
    support = task_support(tool)
    if task is None:
        return support == "required"
    if task and support == "forbidden":
        raise UsageError(f"{name}: the tool cannot run as a task (its execution.taskSupport is 'forbidden' or absent)")
    if not task and support == "required":
        raise UsageError(f"{name}: the tool runs only as a task (execution.taskSupport 'required'); leave task= unset")
    return task


# ----- tasks (2025-11-25) -----


def _tasks_offered(fx: FeatureState, operation: str | None = None) -> None:
    if fx.session.era == "modern":
        raise UsageError(f"{fx.name}: {MODERN}")
    tasks = fx.session.server.capabilities.get("tasks")
    if not isinstance(tasks, dict):
        raise UsageError(f"{fx.name}: the server offers no tasks")
    if operation is not None and operation not in tasks:
        raise UsageError(f"{fx.name}: the server does not offer tasks/{operation}")


def list_tasks(fx: FeatureState) -> Steps[TaskList]:
    _tasks_offered(fx, "list")
    return TaskList((yield from _pages(fx, "tasks/list", "tasks")))


def get_task(fx: FeatureState, task_id: str) -> Steps[dict[str, Any]]:
    _tasks_offered(
        fx,
    )
    return dict((yield Exchange("tasks/get", {"taskId": _task_id(task_id)})))


def cancel_task(fx: FeatureState, task_id: str) -> Steps[dict[str, Any]]:
    _tasks_offered(fx, "cancel")
    return dict((yield Exchange("tasks/cancel", {"taskId": _task_id(task_id)})))


def task_result(fx: FeatureState, task_id: str, timeout: float | None) -> Steps[ToolResult]:
    """The payload of a tool-call task (the server holds it until the task ends)."""
    _tasks_offered(
        fx,
    )
    raw = yield Exchange("tasks/result", {"taskId": _task_id(task_id)}, timeout)
    return ToolResult(fx.task_watch.tool_of(task_id) or f"task {task_id}", raw if isinstance(raw, dict) else {})


# ----- resources -----


def list_resources(fx: FeatureState, refresh: bool = False) -> Steps[Listing]:
    return (yield from _list(fx, "resources/list", "resources", refresh, "resources"))


def list_resource_templates(fx: FeatureState, refresh: bool = False) -> Steps[Listing]:
    return (yield from _list(fx, "resources/templates/list", "resourceTemplates", refresh, "resources"))


def read_resource(
    fx: FeatureState, uri: str, timeout: float | None = None, log_level: str | None = None
) -> Steps[ResourceResult]:
    level = _request_log_level(fx, log_level)
    return ResourceResult(uri, (yield Exchange("resources/read", {"uri": uri}, timeout, log_level=level)))


def template(fx: FeatureState, name: str) -> Steps[dict[str, Any]]:
    templates = yield from list_resource_templates(fx)
    found = templates.get(name) or next((t for t in templates if t.get("uriTemplate") == name), None)
    if found is None:
        raise UsageError(
            f"{fx.name}: unknown resource template {name!r}; the templates are: {', '.join(templates.names()) or 'none'}"
        )
    return found


def fill_template(fx: FeatureState, name: str, values: dict[str, Any]) -> Steps[str]:
    return expand_template((yield from template(fx, name))["uriTemplate"], values)


def read_template(fx: FeatureState, name: str, values: dict[str, Any]) -> Steps[ResourceResult]:
    return (yield from read_resource(fx, (yield from fill_template(fx, name, values))))


def subscribe(fx: FeatureState, uri: str, callback: Any = None) -> Steps[None]:
    if not (fx.session.server.capabilities.get("resources") or {}).get("subscribe"):
        raise UsageError(f"{fx.name}: the server does not support resource subscriptions")
    yield Exchange("resources/subscribe", {"uri": uri})
    with fx.lock:
        fx.subscriptions.setdefault(uri, [])
        if callback is not None:
            fx.subscriptions[uri].append(callback)


def unsubscribe(fx: FeatureState, uri: str) -> Steps[None]:
    yield Exchange("resources/unsubscribe", {"uri": uri})
    with fx.lock:
        fx.subscriptions.pop(uri, None)


# ----- prompts and completion -----


def list_prompts(fx: FeatureState, refresh: bool = False) -> Steps[Listing]:
    return (yield from _list(fx, "prompts/list", "prompts", refresh, "prompts"))


def get_prompt(
    fx: FeatureState, name: str, arguments: dict[str, Any] | None, timeout: float | None, log_level: str | None
) -> Steps[PromptResult]:
    level = _request_log_level(fx, log_level)
    prompts = yield from list_prompts(fx)
    prompt = prompts.get(name)
    if prompt is None:
        raise UsageError(f"{fx.name}: unknown prompt {name!r}; the prompts are: {', '.join(prompts.names()) or 'none'}")
    arguments = {k: v if isinstance(v, str) else str(v) for k, v in mapping(arguments, f"{name}: the arguments").items()}
    missing = [a["name"] for a in prompt.get("arguments") or [] if a.get("required") and a.get("name") not in arguments]
    if missing:
        raise UsageError(f"{name}: missing required argument(s) {', '.join(missing)}")
    params: dict[str, Any] = {"name": name, "arguments": arguments} if arguments else {"name": name}
    return PromptResult(name, (yield Exchange("prompts/get", params, timeout, log_level=level)))


def complete(
    fx: FeatureState,
    ref: str | dict[str, Any],
    argument: str,
    value: str,
    context: dict[str, str] | None,
    timeout: float | None = None,
) -> Steps[list[str]]:
    if "completions" not in fx.session.server.capabilities:
        return []
    if isinstance(ref, str):
        kind, _, target = ref.partition(":")
        if kind == "prompt":
            ref = {"type": "ref/prompt", "name": target}
        elif kind == "resource":
            ref = {"type": "ref/resource", "uri": target}
        else:
            raise UsageError(f"a completion ref is 'prompt:NAME' or 'resource:URI_TEMPLATE', not {ref!r}")
    params: dict[str, Any] = {"ref": ref, "argument": {"name": argument, "value": value}}
    if context:
        params["context"] = {"arguments": dict(context)}
    result = yield Exchange("completion/complete", params, timeout)
    values = (result.get("completion") or {}).get("values") or []
    return [str(v) for v in values]


# ----- logging -----


def set_log_level(fx: FeatureState, level: str) -> Steps[None]:
    """Legacy: `logging/setLevel`. Modern (no such request in 2026-07-28): remembered, and sent
    as `_meta` `io.modelcontextprotocol/logLevel` on each later feature request."""
    if level not in LOG_LEVELS:
        raise UsageError(f"unknown log level {level!r}; use one of: {', '.join(LOG_LEVELS)}")
    if "logging" not in fx.session.server.capabilities:
        raise UsageError(f"{fx.name}: the server does not offer logging")
    if fx.session.era != "modern":
        yield Exchange("logging/setLevel", {"level": level})
    fx.log_level = level


def _task_id(task_id: Any) -> str:
    if not isinstance(task_id, str) or not task_id:
        raise UsageError(f"a task id is a non-empty string, not {task_id!r}")
    return task_id


def expand_template(template: str, values: dict[str, Any]) -> str:
    """RFC 6570 expansion for the common operators: {x}, {+x}, {#x}, {/x}, {?x,y}, {&x}."""

    def one(match: re.Match[str]) -> str:
        body = match.group(1)
        op, names = (body[0], body[1:]) if body[0] in ("+", "#", "/", "?", "&", ".") else ("", body)
        parts = []
        for name in [n.strip().rstrip("*") for n in names.split(",")]:
            if name not in values:
                if op in ("?", "&"):
                    continue
                raise UsageError(f"the template {template} needs a value for {name!r}")
            text = str(values[name])
            encoded = quote(text, safe=":/?#[]@!$&'()*+,;=") if op in ("+", "#") else quote(text, safe="")
            parts.append(f"{name}={encoded}" if op in ("?", "&") else encoded)
        if not parts:
            return ""
        joiner = {"": ",", "+": ",", "#": ",", "/": "/", ".": ".", "?": "&", "&": "&"}[op]
        prefix = {"": "", "+": "", "#": "#", "/": "/", ".": ".", "?": "?", "&": "&"}[op]
        return prefix + joiner.join(parts)

    unknown = set(values) - set(re.findall(r"[\w.]+", " ".join(re.findall(r"\{([^}]*)\}", template))))
    if unknown:
        raise UsageError(f"the template {template} has no variable(s) {', '.join(sorted(unknown))}")
    return re.sub(r"\{([^}]+)\}", one, template)
