"""The MCP client surface on a connection: tools, resources, prompts, completion, logging,
progress, cancellation and tasks. `Connection` inherits `ClientFeatures`.

Every method waits in the caller's thread, which wakes every few hundredths of a second
to show what the session thread recorded for it (progress, log messages, questions from
the server) in the caller's cell; Ctrl-C or a timeout cancels the request on the server.
Each has an awaitable twin (`call_tool` / `acall_tool`, ...) that waits without blocking
the caller's event loop and shows the same things from the awaiting coroutine; cancelling
the awaiting task cancels the request. Works the same in a plain Python script.
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread

from ..base.errors import ConnectionClosed, McpError, UsageError
from ..runtime import get_runtime
from .exchange import TICK, adrive, drive
from .feature_steps import LOG_LEVELS, MAX_PAGES, FeatureSteps, expand_template
from .progress import LogRecord
from .results import Listing, PromptResult, ResourceResult, ToolResult
from .server_requests import roots_of
from .tasks import TaskList
from .validate import OutputSchemaError, ToolArgumentError


class ClientFeatures(FeatureSteps):
    """Tools, resources, prompts, completion, logging, progress and cancellation."""

    # ----- tools -----

    def list_tools(self, *, refresh: bool = False) -> Listing:
        """The server's tools (every page), cached until the server says the list changed."""
        return drive(self, self._list_tools(refresh))

    async def alist_tools(self, *, refresh: bool = False) -> Listing:
        return await adrive(self, self._list_tools(refresh))

    def tool(self, name: str) -> dict[str, Any]:
        """One tool's definition; an unknown name raises ToolArgumentError."""
        return drive(self, self._tool(name))

    async def atool(self, name: str) -> dict[str, Any]:
        return await adrive(self, self._tool(name))

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> None:
        """Raise ToolArgumentError if `arguments` cannot satisfy the tool's input schema."""
        drive(self, self._check_arguments(name, arguments))

    async def acheck_arguments(self, name: str, arguments: dict[str, Any]) -> None:
        await adrive(self, self._check_arguments(name, arguments))

    def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
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
        return drive(self, self._call_tool(name, arguments, timeout, max_total, reset_on_progress, progress,
                                           validate, log_level, task))

    async def acall_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
        max_total: float | None = None, reset_on_progress: bool = True, progress: Any = None, validate: bool = True,
        log_level: str | None = None, task: bool | None = None,
    ) -> ToolResult:
        """`call_tool`, awaited: the caller's event loop keeps running; cancelling cancels the call."""
        return await adrive(self, self._call_tool(name, arguments, timeout, max_total, reset_on_progress, progress,
                                                  validate, log_level, task))

    # ----- tasks (2025-11-25) -----

    def list_tasks(self) -> TaskList:
        """The server's tasks (`tasks/list`, every page)."""
        return drive(self, self._list_tasks())

    async def alist_tasks(self) -> TaskList:
        return await adrive(self, self._list_tasks())

    def get_task(self, task_id: str) -> dict[str, Any]:
        """One task's state (`tasks/get`): status, statusMessage, ttl, pollInterval, ..."""
        return drive(self, self._get_task(task_id))

    async def aget_task(self, task_id: str) -> dict[str, Any]:
        return await adrive(self, self._get_task(task_id))

    def cancel_task(self, task_id: str) -> dict[str, Any]:
        """Cancel a task (`tasks/cancel`); its final state. An ended task cannot be (McpError -32602)."""
        return drive(self, self._cancel_task(task_id))

    async def acancel_task(self, task_id: str) -> dict[str, Any]:
        return await adrive(self, self._cancel_task(task_id))

    def task_result(self, task_id: str, *, timeout: float | None = None) -> ToolResult:
        """A tool-call task's result (`tasks/result`: the server answers when the task has ended)."""
        return drive(self, self._task_result(task_id, timeout))

    async def atask_result(self, task_id: str, *, timeout: float | None = None) -> ToolResult:
        return await adrive(self, self._task_result(task_id, timeout))

    # ----- resources -----

    def list_resources(self, *, refresh: bool = False) -> Listing:
        return drive(self, self._list_resources(refresh))

    async def alist_resources(self, *, refresh: bool = False) -> Listing:
        return await adrive(self, self._list_resources(refresh))

    def list_resource_templates(self, *, refresh: bool = False) -> Listing:
        return drive(self, self._list_resource_templates(refresh))

    async def alist_resource_templates(self, *, refresh: bool = False) -> Listing:
        return await adrive(self, self._list_resource_templates(refresh))

    def read_resource(self, uri: str, *, timeout: float | None = None, log_level: str | None = None) -> ResourceResult:
        """Read a resource (text and blobs)."""
        return drive(self, self._read_resource(uri, timeout, log_level))

    async def aread_resource(self, uri: str, *, timeout: float | None = None, log_level: str | None = None) -> ResourceResult:
        return await adrive(self, self._read_resource(uri, timeout, log_level))

    def template(self, name: str) -> dict[str, Any]:
        """A resource template by name or by its uriTemplate."""
        return drive(self, self._template(name))

    async def atemplate(self, name: str) -> dict[str, Any]:
        return await adrive(self, self._template(name))

    def fill_template(self, name: str, **values: Any) -> str:
        """The URI a template (name or uriTemplate) makes from `values`."""
        return drive(self, self._fill_template(name, values))

    async def afill_template(self, name: str, **values: Any) -> str:
        return await adrive(self, self._fill_template(name, values))

    def read_template(self, name: str, **values: Any) -> ResourceResult:
        return drive(self, self._read_template(name, values))

    async def aread_template(self, name: str, **values: Any) -> ResourceResult:
        return await adrive(self, self._read_template(name, values))

    def subscribe(self, uri: str, callback: Any = None) -> None:
        """Subscribe to a resource's updates; `callback(uri)` runs in a worker thread on each one.
        Legacy: `resources/subscribe`; modern: a `subscriptions/listen` stream for that resource."""
        if self._session.era == "modern":
            self._listen_to(uri, callback)
        else:
            drive(self, self._subscribe(uri, callback))

    async def asubscribe(self, uri: str, callback: Any = None) -> None:
        if self._session.era == "modern":
            await anyio.to_thread.run_sync(self._listen_to, uri, callback)
        else:
            await adrive(self, self._subscribe(uri, callback))

    def unsubscribe(self, uri: str) -> None:
        if self._session.era == "modern":
            self._stop_listening_to(uri)
        else:
            drive(self, self._unsubscribe(uri))

    async def aunsubscribe(self, uri: str) -> None:
        if self._session.era == "modern":
            await anyio.to_thread.run_sync(self._stop_listening_to, uri)
        else:
            await adrive(self, self._unsubscribe(uri))

    def _listen_to(self, uri: str, callback: Any) -> None:
        fx = self._fx
        with fx.lock:
            listening = uri in fx.listens
        if not listening:
            subscription = self.listen(resource_uris=[uri])  # type: ignore[attr-defined]
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

    def _stop_listening_to(self, uri: str) -> None:
        fx = self._fx
        with fx.lock:
            subscription = fx.listens.pop(uri, None)
            fx.subscriptions.pop(uri, None)
        if subscription is None:
            raise UsageError(f"{self.name}: not subscribed to {uri}")
        subscription.close()

    def resource_updates(self, uri: str | None = None) -> int:
        """How many `notifications/resources/updated` arrived (for `uri`, or in all)."""
        counts = self._fx.update_counts
        return counts.get(uri, 0) if uri is not None else sum(counts.values())

    # ----- prompts and completion -----

    def list_prompts(self, *, refresh: bool = False) -> Listing:
        return drive(self, self._list_prompts(refresh))

    async def alist_prompts(self, *, refresh: bool = False) -> Listing:
        return await adrive(self, self._list_prompts(refresh))

    def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
                   log_level: str | None = None) -> PromptResult:
        """A prompt's messages; required arguments are checked first (values are sent as strings)."""
        return drive(self, self._get_prompt(name, arguments, timeout, log_level))

    async def aget_prompt(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
                          log_level: str | None = None) -> PromptResult:
        return await adrive(self, self._get_prompt(name, arguments, timeout, log_level))

    def complete(self, ref: str | dict[str, Any], argument: str, value: str = "",
                 context: dict[str, str] | None = None) -> list[str]:
        """`completion/complete`: `ref` is "prompt:NAME", "resource:URI_TEMPLATE" or a ref dict."""
        return drive(self, self._complete(ref, argument, value, context))

    async def acomplete(self, ref: str | dict[str, Any], argument: str, value: str = "",
                        context: dict[str, str] | None = None) -> list[str]:
        return await adrive(self, self._complete(ref, argument, value, context))

    # ----- logging -----

    def set_log_level(self, level: str) -> None:
        """The least severe level of the server's log messages to receive. Legacy connections send
        `logging/setLevel`; modern ones (2026-07-28 has no such request) remember it and send it
        with each later request as `_meta` `io.modelcontextprotocol/logLevel`."""
        drive(self, self._set_log_level(level))

    async def aset_log_level(self, level: str) -> None:
        await adrive(self, self._set_log_level(level))

    @property
    def log_level(self) -> str | None:
        """The log level set with `set_log_level`, if any."""
        return self._fx.log_level

    @property
    def logs(self) -> list[LogRecord]:
        """The server's recent log messages (`notifications/message`), oldest first."""
        return list(self._fx.logs)

    # ----- roots -----

    @property
    def roots(self) -> list[dict[str, Any]] | None:
        """The roots this client offers (`roots/list`), or None when it declared none."""
        roots = self._fx.requests.roots
        return None if roots is None else [dict(root) for root in roots]

    def set_roots(self, roots: Any) -> None:
        """Change the roots (paths, file:// URIs or root dicts) and tell a legacy server they
        changed (`notifications/roots/list_changed`); modern servers ask for roots per request."""
        self._change_roots(roots)
        if self._session.era != "modern":
            self.notify("notifications/roots/list_changed")  # type: ignore[attr-defined]

    async def aset_roots(self, roots: Any) -> None:
        self._change_roots(roots)
        if self._session.era != "modern":
            await self.anotify("notifications/roots/list_changed")  # type: ignore[attr-defined]

    def _change_roots(self, roots: Any) -> None:
        requests = self._fx.requests
        if requests.roots is None:
            raise UsageError(f"{self.name}: this connection declared no roots capability; "
                             "connect with roots=[path, ...] (or roots=True for the working directory)")
        listed = roots_of(roots)
        if listed is None:
            raise UsageError("set_roots() takes paths, file:// URIs or root dicts (an empty list for none)")
        requests.roots = listed

    # ----- cancellation -----

    def cancel(self, request_id: int, reason: str = "cancelled by the user") -> bool:
        """Cancel one of our in-flight requests by id (the server is told); False if none."""
        session = self._session

        def find_and_abandon() -> bool:
            pending = self._fx.pendings.get(request_id) or getattr(session, "_pending", {}).get(request_id)
            if pending is None:
                return False
            return bool(session.abandon(pending, ConnectionClosed(reason), reason))

        return get_runtime().call_sync(find_and_abandon)


__all__ = ["TICK", "LOG_LEVELS", "MAX_PAGES", "ClientFeatures", "McpError", "OutputSchemaError", "ToolArgumentError",
           "expand_template"]
