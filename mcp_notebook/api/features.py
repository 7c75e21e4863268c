"""The MCP client surface of a connection: tools, resources, prompts, completion, logging,
roots, cancellation and tasks, as plain functions over the connection's feature state.
`Connection` lists them in its class body; each takes the connection as `self`.

Every method waits in the caller's thread, which wakes every few hundredths of a second
to show what the session thread recorded for it (progress, log messages, questions from
the server) in the caller's cell; Ctrl-C or a timeout cancels the request on the server.
Each has an awaitable twin (`call_tool` / `acall_tool`, ...) that waits without blocking
the caller's event loop and shows the same things from the awaiting coroutine; cancelling
the awaiting task cancels the request. Works the same in a plain Python script.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import anyio.to_thread

from ..base.errors import ConnectionClosed, UsageError
from ..runtime import get_runtime
from ..session.subscriptions import Subscription
from . import feature_steps as steps
from .exchange import adrive, drive
from .feature_state import FeatureState
from .progress import LogRecord
from .results import Listing, PromptResult, ResourceResult, ToolResult
from .server_requests import roots_of
from .tasks import TaskList


class Featured(Protocol):
    """What the feature methods use of their connection."""

    name: str

    @property
    def feature_state(self) -> FeatureState: ...

    def listen(
        self, *, tools: bool = False, prompts: bool = False, resources: bool = False, resource_uris: Sequence[str] = (),
        callback: Callable[[str, dict[str, Any]], Any] | None = None, timeout: float | None = None,
    ) -> Subscription: ...

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None: ...

    async def anotify(self, method: str, params: dict[str, Any] | None = None) -> None: ...


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

def check_arguments(self: Featured, name: str, arguments: dict[str, Any]) -> None:
    """Raise ToolArgumentError if `arguments` cannot satisfy the tool's input schema."""
    drive(self.feature_state, steps.check_arguments(self.feature_state, name, arguments))

async def acheck_arguments(self: Featured, name: str, arguments: dict[str, Any]) -> None:
    await adrive(self.feature_state, steps.check_arguments(self.feature_state, name, arguments))

def call_tool(
    self: Featured, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
    max_total: float | None = None, reset_on_progress: bool = True, progress: Any = None, validate: bool = True,
    log_level: str | None = None, task: bool | None = None,
) -> ToolResult:
    """Call a tool; its arguments are checked against the input schema first, its structured
    result against the output schema. `progress`: None shows a bar if the server reports
    progress, a callable gets `(progress, total, message)`, False sends no progress token.
    `log_level` (modern connections): the server's log lines for this call, at or above it.
    `task` (2025-11-25): None runs the tool as a task when it requires one, True when it
    allows one; the task's status changes show like progress, and a stop cancels the task.
    """
    return drive(self.feature_state, steps.call_tool(self.feature_state, name, arguments, timeout, max_total, reset_on_progress, progress,
                                       validate, log_level, task))

async def acall_tool(
    self: Featured, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
    max_total: float | None = None, reset_on_progress: bool = True, progress: Any = None, validate: bool = True,
    log_level: str | None = None, task: bool | None = None,
) -> ToolResult:
    """`call_tool`, awaited: the caller's event loop keeps running; cancelling cancels the call."""
    return await adrive(self.feature_state, steps.call_tool(self.feature_state, name, arguments, timeout, max_total, reset_on_progress, progress,
                                              validate, log_level, task))

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

# ----- resources -----

def list_resources(self: Featured, *, refresh: bool = False) -> Listing:
    return drive(self.feature_state, steps.list_resources(self.feature_state, refresh))

async def alist_resources(self: Featured, *, refresh: bool = False) -> Listing:
    return await adrive(self.feature_state, steps.list_resources(self.feature_state, refresh))

def list_resource_templates(self: Featured, *, refresh: bool = False) -> Listing:
    return drive(self.feature_state, steps.list_resource_templates(self.feature_state, refresh))

async def alist_resource_templates(self: Featured, *, refresh: bool = False) -> Listing:
    return await adrive(self.feature_state, steps.list_resource_templates(self.feature_state, refresh))

def read_resource(self: Featured, uri: str, *, timeout: float | None = None, log_level: str | None = None) -> ResourceResult:
    """Read a resource (text and blobs)."""
    return drive(self.feature_state, steps.read_resource(self.feature_state, uri, timeout, log_level))

async def aread_resource(self: Featured, uri: str, *, timeout: float | None = None, log_level: str | None = None) -> ResourceResult:
    return await adrive(self.feature_state, steps.read_resource(self.feature_state, uri, timeout, log_level))

def template(self: Featured, name: str) -> dict[str, Any]:
    """A resource template by name or by its uriTemplate."""
    return drive(self.feature_state, steps.template(self.feature_state, name))

async def atemplate(self: Featured, name: str) -> dict[str, Any]:
    return await adrive(self.feature_state, steps.template(self.feature_state, name))

def fill_template(self: Featured, name: str, **values: Any) -> str:
    """The URI a template (name or uriTemplate) makes from `values`."""
    return drive(self.feature_state, steps.fill_template(self.feature_state, name, values))

async def afill_template(self: Featured, name: str, **values: Any) -> str:
    return await adrive(self.feature_state, steps.fill_template(self.feature_state, name, values))

def read_template(self: Featured, name: str, **values: Any) -> ResourceResult:
    return drive(self.feature_state, steps.read_template(self.feature_state, name, values))

async def aread_template(self: Featured, name: str, **values: Any) -> ResourceResult:
    return await adrive(self.feature_state, steps.read_template(self.feature_state, name, values))

def subscribe(self: Featured, uri: str, callback: Any = None) -> None:
    """Subscribe to a resource's updates; `callback(uri)` runs in a worker thread on each one.
    Legacy: `resources/subscribe`; modern: a `subscriptions/listen` stream for that resource."""
    if self.feature_state.session.era == "modern":
        _listen_to(self, uri, callback)
    else:
        drive(self.feature_state, steps.subscribe(self.feature_state, uri, callback))

async def asubscribe(self: Featured, uri: str, callback: Any = None) -> None:
    if self.feature_state.session.era == "modern":
        await anyio.to_thread.run_sync(_listen_to, self, uri, callback)
    else:
        await adrive(self.feature_state, steps.subscribe(self.feature_state, uri, callback))

def unsubscribe(self: Featured, uri: str) -> None:
    if self.feature_state.session.era == "modern":
        _stop_listening_to(self, uri)
    else:
        drive(self.feature_state, steps.unsubscribe(self.feature_state, uri))

async def aunsubscribe(self: Featured, uri: str) -> None:
    if self.feature_state.session.era == "modern":
        await anyio.to_thread.run_sync(_stop_listening_to, self, uri)
    else:
        await adrive(self.feature_state, steps.unsubscribe(self.feature_state, uri))

def _listen_to(self: Featured, uri: str, callback: Any) -> None:
    fx = self.feature_state
    with fx.lock:
        listening = uri in fx.listens
    if not listening:
        subscription = self.listen(resource_uris=[uri])
        granted = (subscription.acknowledged or {}).get("resourceSubscriptions") or []
        if uri not in granted:
            subscription.close()
            raise UsageError(f"{self.name}: the server did not take a subscription to {uri}")
        with fx.lock:
            fx.listens[uri] = subscription
    with fx.lock:
        fx.subscriptions.setdefault(uri, [])
        if callback is not None:
            fx.subscriptions[uri].append(callback)

def _stop_listening_to(self: Featured, uri: str) -> None:
    fx = self.feature_state
    with fx.lock:
        subscription = fx.listens.pop(uri, None)
        fx.subscriptions.pop(uri, None)
    if subscription is None:
        raise UsageError(f"{self.name}: not subscribed to {uri}")
    subscription.close()

def resource_updates(self: Featured, uri: str | None = None) -> int:
    """How many `notifications/resources/updated` arrived (for `uri`, or in all)."""
    counts = self.feature_state.update_counts
    return counts.get(uri, 0) if uri is not None else sum(counts.values())

# ----- prompts and completion -----

def list_prompts(self: Featured, *, refresh: bool = False) -> Listing:
    return drive(self.feature_state, steps.list_prompts(self.feature_state, refresh))

async def alist_prompts(self: Featured, *, refresh: bool = False) -> Listing:
    return await adrive(self.feature_state, steps.list_prompts(self.feature_state, refresh))

def get_prompt(self: Featured, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
               log_level: str | None = None) -> PromptResult:
    """A prompt's messages; required arguments are checked first (values are sent as strings)."""
    return drive(self.feature_state, steps.get_prompt(self.feature_state, name, arguments, timeout, log_level))

async def aget_prompt(self: Featured, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
                      log_level: str | None = None) -> PromptResult:
    return await adrive(self.feature_state, steps.get_prompt(self.feature_state, name, arguments, timeout, log_level))

def complete(self: Featured, ref: str | dict[str, Any], argument: str, value: str = "",
             context: dict[str, str] | None = None) -> list[str]:
    """`completion/complete`: `ref` is "prompt:NAME", "resource:URI_TEMPLATE" or a ref dict."""
    return drive(self.feature_state, steps.complete(self.feature_state, ref, argument, value, context))

async def acomplete(self: Featured, ref: str | dict[str, Any], argument: str, value: str = "",
                    context: dict[str, str] | None = None) -> list[str]:
    return await adrive(self.feature_state, steps.complete(self.feature_state, ref, argument, value, context))

# ----- logging -----

def set_log_level(self: Featured, level: str) -> None:
    """The least severe level of the server's log messages to receive. Legacy connections send
    `logging/setLevel`; modern ones (2026-07-28 has no such request) remember it and send it
    with each later request as `_meta` `io.modelcontextprotocol/logLevel`."""
    drive(self.feature_state, steps.set_log_level(self.feature_state, level))

async def aset_log_level(self: Featured, level: str) -> None:
    await adrive(self.feature_state, steps.set_log_level(self.feature_state, level))

def log_level(self: Featured) -> str | None:
    """The log level set with `set_log_level`, if any."""
    return self.feature_state.log_level

def logs(self: Featured) -> list[LogRecord]:
    """The server's recent log messages (`notifications/message`), oldest first."""
    return list(self.feature_state.logs)

# ----- roots -----

def roots(self: Featured) -> list[dict[str, Any]] | None:
    """The roots this client offers (`roots/list`), or None when it declared none."""
    roots = self.feature_state.requests.roots
    return None if roots is None else [dict(root) for root in roots]

def set_roots(self: Featured, roots: Any) -> None:
    """Change the roots (paths, file:// URIs or root dicts) and tell a legacy server they
    changed (`notifications/roots/list_changed`); modern servers ask for roots per request."""
    _change_roots(self, roots)
    if self.feature_state.session.era != "modern":
        self.notify("notifications/roots/list_changed")

async def aset_roots(self: Featured, roots: Any) -> None:
    _change_roots(self, roots)
    if self.feature_state.session.era != "modern":
        await self.anotify("notifications/roots/list_changed")

def _change_roots(self: Featured, roots: Any) -> None:
    requests = self.feature_state.requests
    if requests.roots is None:
        raise UsageError(f"{self.name}: this connection declared no roots capability; "
                         "connect with roots=[path, ...] (or roots=True for the working directory)")
    listed = roots_of(roots)
    if listed is None:
        raise UsageError("set_roots() takes paths, file:// URIs or root dicts (an empty list for none)")
    requests.roots = listed

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
