"""The MCP client surface on a connection: tools, resources, prompts, completion, logging,
progress and cancellation. `Connection` inherits `ClientFeatures`.

Every call waits in the caller's thread, which wakes every few hundredths of a second to
show what the session thread recorded for it (progress, log messages, questions from the
server) in the caller's cell. Ctrl-C or a timeout cancels the request on the server.
Works the same in a plain Python script: no IPython needed.
"""

from __future__ import annotations

import re
import threading
from typing import Any
from urllib.parse import quote

from ._errors import ConnectionClosed, McpError, RequestTimeout, UsageError
from ._feature_state import FeatureState, state_of
from ._progress import Call, Deadline, LogRecord, new_token
from ._results import Listing, PromptResult, ResourceResult, ToolResult
from ._runtime import CANCEL_GRACE, get_runtime
from ._validate import OutputSchemaError, ToolArgumentError, problems

TICK = 0.05  # seconds between the caller's looks at progress, logs and questions
MAX_PAGES = 1000
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


class ClientFeatures:
    """Tools, resources, prompts, completion, logging, progress and cancellation."""

    _session: Any
    name: str

    @property
    def _fx(self) -> FeatureState:
        return state_of(self._session)

    # ----- the request core -----

    def _exchange(
        self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None,
        max_total: float | None = None, reset_on_progress: bool = True, progress: Any = None,
    ) -> Any:
        """Send a request and wait in this thread; progress (unless progress=False) resets the timeout."""
        from ._display import Presenter

        session, runtime, fx = self._session, get_runtime(), self._fx
        limit = session.timeout if timeout is None else timeout
        if getattr(session, "era", "legacy") == "modern":  # multi-round requests run on the session loop
            return runtime.call(_request_on_loop, session, method, params, limit)
        token = None if progress is False else new_token()
        if token is not None:
            params = dict(params or {})
            params["_meta"] = {**(params.get("_meta") or {}), "progressToken": token}
        call = Call(method, Deadline(limit, max_total, reset_on_progress), token)
        waker = threading.Lock()
        waker.acquire()
        pending = session.new_request(method, params, waker)
        presenter = Presenter(f"{self.name} {method}", progress, self.name)
        fx.begin(call, pending)
        failed, seen = True, 0
        try:
            runtime.call_soon(session.launch, pending)
            while True:
                remaining = call.deadline.remaining()
                if waker.acquire(timeout=TICK if remaining is None else max(0.0, min(TICK, remaining))):
                    break
                seen = presenter.attend(call, seen)
                if remaining is not None and call.deadline.remaining() <= 0:  # type: ignore[operator]
                    reason = call.deadline.reason()
                    failure = RequestTimeout(f"{method}: {reason}; the request was cancelled")
                    if runtime.call_sync(session.abandon, pending, failure, reason):
                        raise failure
                    break
            result = pending.outcome()
            failed = False
            return result
        except KeyboardInterrupt:
            runtime.call_sync(session.abandon, pending, ConnectionClosed("cancelled by the user"),
                              "cancelled by the user", timeout=CANCEL_GRACE)
            raise
        finally:
            fx.end(call, pending)
            presenter.attend(call, seen)
            presenter.close(failed)

    def cancel(self, request_id: int, reason: str = "cancelled by the user") -> bool:
        """Cancel one of our in-flight requests by id (sends notifications/cancelled); False if none."""
        session = self._session

        def find_and_abandon() -> bool:
            pending = self._fx.pendings.get(request_id) or getattr(session, "_pending", {}).get(request_id)
            if pending is None:
                return False
            return bool(session.abandon(pending, ConnectionClosed(reason), reason))

        return get_runtime().call_sync(find_and_abandon)

    def _list(self, method: str, key: str, refresh: bool, capability: str) -> Listing:
        if capability not in self._session.server_capabilities:
            raise UsageError(f"{self.name}: the server offers no {capability}")
        fx = self._fx
        cached = None if refresh else fx.cached(key)
        if cached is not None:
            return cached
        before = fx.list_changes.get(key, 0)
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        for _ in range(MAX_PAGES):
            result = self._exchange(method, {"cursor": cursor} if cursor else None, progress=False)
            items += [item for item in result.get(key) or [] if isinstance(item, dict)]
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or not cursor or cursor in seen:
                break
            seen.add(cursor)
        listing = Listing(key, items)
        fx.store(key, listing, before)
        return listing

    # ----- tools -----

    def list_tools(self, *, refresh: bool = False) -> Listing:
        """The server's tools (every page), cached until the server says the list changed."""
        return self._list("tools/list", "tools", refresh, "tools")

    def tool(self, name: str) -> dict[str, Any]:
        """One tool's definition; an unknown name raises ToolArgumentError."""
        tools = self.list_tools()
        found = tools.get(name) or self.list_tools(refresh=True).get(name)
        if found is None:
            close = [n for n in tools.names() if name.lower() in n.lower() or n.lower() in name.lower()]
            hint = f"; did you mean {', '.join(close[:3])}?" if close else f"; the tools are: {', '.join(tools.names()) or 'none'}"
            raise ToolArgumentError(f"{self.name}: unknown tool {name!r}{hint}")
        return found

    def check_arguments(self, name: str, arguments: dict[str, Any]) -> None:
        """Raise ToolArgumentError if `arguments` cannot satisfy the tool's input schema."""
        issues = problems(arguments, self.tool(name).get("inputSchema"))
        if issues:
            raise ToolArgumentError(f"{name}: {'; '.join(issues)}")

    def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None,
        max_total: float | None = None, reset_on_progress: bool = True, progress: Any = None, validate: bool = True,
    ) -> ToolResult:
        """Call a tool; its arguments are checked against the input schema first, its structured
        result against the output schema. `progress`: None shows a bar if the server reports
        progress, a callable gets `(progress, total, message)`, False sends no progress token.
        """
        arguments = dict(arguments or {})
        if validate:
            self.check_arguments(name, arguments)
        raw = self._exchange("tools/call", {"name": name, "arguments": arguments}, timeout=timeout,
                             max_total=max_total, reset_on_progress=reset_on_progress, progress=progress)
        result = ToolResult(name, raw if isinstance(raw, dict) else {})
        schema = self.tool(name).get("outputSchema") if validate else None
        if schema and not result.is_error:
            if result.structured is None:
                raise OutputSchemaError(f"{name}: the tool declares an outputSchema but its result has no structuredContent")
            issues = problems(result.structured, schema, "structuredContent")
            if issues:
                more = f" (and {len(issues) - 1} more)" if len(issues) > 1 else ""
                raise OutputSchemaError(f"{name}: the server's result violates the tool's outputSchema: {issues[0]}{more}")
        return result

    # ----- resources -----

    def list_resources(self, *, refresh: bool = False) -> Listing:
        return self._list("resources/list", "resources", refresh, "resources")

    def list_resource_templates(self, *, refresh: bool = False) -> Listing:
        return self._list("resources/templates/list", "resourceTemplates", refresh, "resources")

    def read_resource(self, uri: str, *, timeout: float | None = None) -> ResourceResult:
        """Read a resource (text and blobs)."""
        return ResourceResult(uri, self._exchange("resources/read", {"uri": uri}, timeout=timeout, progress=False))

    def template(self, name: str) -> dict[str, Any]:
        """A resource template by name or by its uriTemplate."""
        templates = self.list_resource_templates()
        found = templates.get(name) or next((t for t in templates if t.get("uriTemplate") == name), None)
        if found is None:
            raise UsageError(f"{self.name}: unknown resource template {name!r}; the templates are: {', '.join(templates.names()) or 'none'}")
        return found

    def fill_template(self, name: str, **values: Any) -> str:
        """The URI a template (name or uriTemplate) makes from `values`."""
        return expand_template(self.template(name)["uriTemplate"], values)

    def read_template(self, name: str, **values: Any) -> ResourceResult:
        return self.read_resource(self.fill_template(name, **values))

    def subscribe(self, uri: str, callback: Any = None) -> None:
        """Subscribe to a resource's updates; `callback(uri)` runs in a worker thread on each one."""
        if not (self._session.server_capabilities.get("resources") or {}).get("subscribe"):
            raise UsageError(f"{self.name}: the server does not support resource subscriptions")
        self._exchange("resources/subscribe", {"uri": uri}, progress=False)
        fx = self._fx
        with fx.lock:
            fx.subscriptions.setdefault(uri, [])
            if callback is not None:
                fx.subscriptions[uri].append(callback)

    def unsubscribe(self, uri: str) -> None:
        self._exchange("resources/unsubscribe", {"uri": uri}, progress=False)
        with self._fx.lock:
            self._fx.subscriptions.pop(uri, None)

    def resource_updates(self, uri: str | None = None) -> int:
        """How many `notifications/resources/updated` arrived (for `uri`, or in all)."""
        counts = self._fx.update_counts
        return counts.get(uri, 0) if uri is not None else sum(counts.values())

    # ----- prompts and completion -----

    def list_prompts(self, *, refresh: bool = False) -> Listing:
        return self._list("prompts/list", "prompts", refresh, "prompts")

    def get_prompt(self, name: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None) -> PromptResult:
        """A prompt's messages; required arguments are checked first (values are sent as strings)."""
        prompts = self.list_prompts()
        prompt = prompts.get(name)
        if prompt is None:
            raise UsageError(f"{self.name}: unknown prompt {name!r}; the prompts are: {', '.join(prompts.names()) or 'none'}")
        arguments = {k: v if isinstance(v, str) else str(v) for k, v in (arguments or {}).items()}
        missing = [a["name"] for a in prompt.get("arguments") or [] if a.get("required") and a.get("name") not in arguments]
        if missing:
            raise UsageError(f"{name}: missing required argument(s) {', '.join(missing)}")
        params: dict[str, Any] = {"name": name, "arguments": arguments} if arguments else {"name": name}
        return PromptResult(name, self._exchange("prompts/get", params, timeout=timeout, progress=False))

    def complete(self, ref: str | dict[str, Any], argument: str, value: str = "",
                 context: dict[str, str] | None = None) -> list[str]:
        """`completion/complete`: `ref` is "prompt:NAME", "resource:URI_TEMPLATE" or a ref dict."""
        if "completions" not in self._session.server_capabilities:
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
        result = self._exchange("completion/complete", params, progress=False)
        values = (result.get("completion") or {}).get("values") or []
        return [str(v) for v in values]

    # ----- logging -----

    def set_log_level(self, level: str) -> None:
        """`logging/setLevel`: the least severe level the server should send."""
        if level not in LOG_LEVELS:
            raise UsageError(f"unknown log level {level!r}; use one of: {', '.join(LOG_LEVELS)}")
        if "logging" not in self._session.server_capabilities:
            raise UsageError(f"{self.name}: the server does not offer logging")
        self._exchange("logging/setLevel", {"level": level}, progress=False)
        self._fx.log_level = level

    @property
    def logs(self) -> list[LogRecord]:
        """The server's recent log messages (`notifications/message`), oldest first."""
        return list(self._fx.logs)


async def _request_on_loop(session: Any, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
    return await session.request(method, params, timeout=timeout)


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


__all__ = ["ClientFeatures", "McpError", "OutputSchemaError", "ToolArgumentError", "expand_template"]
