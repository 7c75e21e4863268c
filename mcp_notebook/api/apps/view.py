"""`AppView`: the host side of one MCP App view (SEP-1865): the JSON-RPC the app speaks over
`postMessage`, answered here in the kernel. A front end carries the messages (the notebook's
widget: iframe, postMessage, comm); this module knows nothing of how.

What the app may do: `ui/initialize` (host info, capabilities, the page's context), `ping`,
`tools/call` of tools whose visibility includes "app" on this same connection only (followed
as a cell's call is: its progress and log lines kept in `call_lines`, see `apps.calls`),
`resources/read`, `notifications/message`, `ui/message` and `ui/update-model-context` (kept
in `messages` and `model_context` and shown in the cell: there is no model here),
`ui/open-link` (answered only once the user clicks the link the cell shows) and
`ui/request-display-mode` (always "inline"). Every message both ways is in the connection's
trace with `detail.via = "app"`. Server requests run on the session loop and never block the
thread that delivered the message; replies go back through the front end's `send`.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from ...base.about import CLIENT_NAME, __version__
from ...base.errors import McpError
from ...base.text import esc, one_line
from ...protocol import jsonrpc as rpc
from ...runtime import get_runtime
from ...session.session import Session
from ...session.trace import IN, OUT
from ..calls.core import Core
from ..display import frontend
from ..results import app_meta
from ..results.objects import ToolResult
from .calls import followed_call

APP_VIA = "app"
DENIED = -32000
MAX_HEIGHT = 2000  # the frame grows with the app up to this (notebook/widgets/app.js caps it alike)
ENDED = ("torn down", "closed")
RECORDS = 200  # ui/message and notifications/message records kept per view


class AppView:
    """One rendered app: its tool, the call's arguments and result, and the app's records."""

    def __init__(
        self,
        connection: str,
        session: Session,
        tool: dict[str, Any],
        arguments: dict[str, Any],
        html: str,
        ui: dict[str, Any],
        tools: Callable[[], dict[str, dict[str, Any]]],
        calls: Core | None = None,
    ) -> None:
        self.connection = connection
        self.session = session
        self.tool = tool
        self.name = str(tool.get("name"))
        self.arguments = arguments
        self.html = html
        self.ui = ui
        self.csp = app_meta.csp(ui.get("csp"))
        self.permissions = app_meta.permissions(ui.get("permissions"))
        self.granted: list[str] = []
        self.messages: list[dict[str, Any]] = []
        self.model_context: dict[str, Any] | None = None
        self.logs: list[dict[str, Any]] = []
        self.call_lines: list[dict[str, Any]] = []  # progress and log lines of the app's own tool calls
        self.result: ToolResult | None = None
        self.cancelled: str | None = None
        self.done = threading.Event()  # the call ended: a result, or cancelled
        self.state = "new"  # -> initialized -> torn down (we asked) or closed (the frame left the page)
        self.page: dict[str, Any] = {}  # what the front end knows: theme, locale, timeZone, width
        self.send: Callable[[dict[str, Any]], None] | None = None  # to the front end
        self.on_change: Callable[[], None] = lambda: None  # records changed: the front end redraws them
        self._tools = tools
        self._calls = calls  # where the app's tool calls are followed (their progress and logs shown)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._links: dict[int, Any] = {}  # link id -> the app's open-link request id
        self._teardown_id: str | None = None
        self.ended_because: str | None = None  # why we tore it down (the connection closed, ...)
        self._delivered = False

    # ----- from the front end -----

    def receive(self, message: Any) -> None:
        """A message the app posted; answered now, or (server requests) from the session loop."""
        frame = rpc.classify(message)
        self._trace(IN, frame.kind, message)
        if self.state in ENDED and frame.kind in (rpc.REQUEST, rpc.NOTIFICATION):
            return  # the view was torn down or left the page: nothing more is served
        if frame.kind == rpc.REQUEST:
            self._request(message)
        elif frame.kind == rpc.NOTIFICATION and isinstance(message.get("params") or {}, dict):
            self._notification(message["method"], message.get("params") or {})
        elif frame.kind in (rpc.RESPONSE, rpc.ERROR) and message.get("id") == self._teardown_id:
            self._torn_down()

    def link_clicked(self, link: int) -> None:
        """The user clicked the link an `ui/open-link` asked for: the app's request succeeds."""
        request_id = self._links.pop(link, None)
        if request_id is not None:
            self._reply(request_id, {})

    def context_changed(self, change: dict[str, Any]) -> None:
        """The page changed (JupyterLab's theme, the cell's width): `ui/notifications/host-context-changed`
        with what changed."""
        update: dict[str, Any] = {}
        if change.get("theme") in ("light", "dark") and change["theme"] != self.page.get("theme"):
            update["theme"] = change["theme"]
        width = change.get("width")
        if isinstance(width, int) and not isinstance(width, bool) and width > 0 and width != self.page.get("width"):
            update["width"] = width
        if not update:
            return
        self.page = {**self.page, **update}
        params: dict[str, Any] = {"theme": update["theme"]} if "theme" in update else {}
        if "width" in update:
            params["containerDimensions"] = self._dimensions()
        if self.state == "initialized":
            self._send_notification("ui/notifications/host-context-changed", params)

    def teardown(self, reason: str) -> bool:
        """Ask the app to wind down (`ui/resource-teardown`); False if it never started or has
        ended. A view whose app has not started yet is removed at once, the cell saying why."""
        with self._lock:
            if self.state in ENDED:
                return False
            self.ended_because = reason
            started = self.state == "initialized"
            if started:
                self._teardown_id = f"teardown-{next(self._ids)}"
            else:
                self.state = "torn down"
        if not started:
            self._removed()
            return False
        self._out({"jsonrpc": "2.0", "id": self._teardown_id, "method": "ui/resource-teardown", "params": {"reason": reason}})
        return True

    def teardown_sent(self, request: dict[str, Any]) -> None:
        """The front end asked the app itself to wind down (its view left the page while the frame
        waits, out of sight): kept in the trace, and the app's answer ends the view."""
        if request.get("method") != "ui/resource-teardown" or not isinstance(request.get("id"), str):
            return
        params = request.get("params")
        reason = params.get("reason") if isinstance(params, dict) else None
        with self._lock:
            self._teardown_id = request["id"]
            self.ended_because = reason if isinstance(reason, str) else "the view left the page"
        self._trace(OUT, rpc.REQUEST, request)

    def restart(self) -> None:
        """A new frame will load the app (the view was drawn again): initialize and deliver anew;
        a view we tore down stays down, and the new frame is told so."""
        with self._lock:
            ended = self.state == "torn down"
            if not ended:
                self.state, self._delivered, self._teardown_id = "new", False, None
                self._links.clear()
        if ended:
            self._removed()

    # ----- from the call -----

    def deliver(self, result: dict[str, Any]) -> None:
        """The tool's result: sent as `tool-result` once the app is initialized."""
        self.result = ToolResult(self.name, result)
        self.done.set()
        self._flush()
        self.on_change()

    def cancel(self, reason: str) -> None:
        """The call ended without a result: `tool-cancelled` once the app is initialized."""
        self.cancelled = reason
        self.done.set()
        self._flush()
        self.on_change()

    def wait(self, timeout: float | None = None) -> ToolResult | None:
        """The tool's result once the call has ended (None if it was cancelled or `timeout` passed)."""
        self.done.wait(timeout)
        return self.result

    # ----- the protocol -----

    def _request(self, message: dict[str, Any]) -> None:
        method, params, request_id = message["method"], message.get("params") or {}, message["id"]
        if not isinstance(params, dict):
            self._error(request_id, rpc.INVALID_PARAMS, f"{method}: params must be an object")
        elif method == "ui/initialize":
            self._reply(request_id, self._initialize_result())
        elif method == "ping":
            self._reply(request_id, {})
        elif method == "tools/call":
            self._call_tool(request_id, params)
        elif method == "resources/read":
            self._proxy(request_id, "resources/read", {"uri": params.get("uri")})
        elif method == "ui/message":
            self._record(self.messages, {"time": time.time(), **params})
            self._reply(request_id, {})
        elif method == "ui/update-model-context":
            self.model_context = {"time": time.time(), **params}
            self.on_change()
            self._reply(request_id, {})
        elif method == "ui/open-link":
            self._open_link(request_id, params.get("url"))
        elif method == "ui/request-display-mode":
            self._reply(request_id, {"mode": "inline"})
        else:
            self._error(request_id, -32601, f"method not found: {method}")

    def _notification(self, method: str, params: dict[str, Any]) -> None:
        if method == "ui/notifications/initialized":
            with self._lock:
                self.state = "initialized" if self.state == "new" else self.state
            self._send_notification("ui/notifications/tool-input", {"arguments": self.arguments})
            self._flush()
        elif method == "notifications/message":
            self._record(self.logs, {"time": time.time(), **params})
        elif method == "ui/notifications/size-changed" and self.send is not None:
            self.send({"kind": "size", "params": params})

    def _initialize_result(self) -> dict[str, Any]:
        page = self.page
        context: dict[str, Any] = {
            "toolInfo": {"tool": self.tool},
            "theme": "dark" if page.get("theme") == "dark" else "light",
            "displayMode": "inline",
            "availableDisplayModes": ["inline"],
            "containerDimensions": self._dimensions(),
            "locale": page.get("locale") or "en-US",
            "timeZone": page.get("timeZone") or "UTC",
            "userAgent": f"{CLIENT_NAME}/{__version__}",
            "platform": "web",
        }
        sandbox: dict[str, Any] = {"csp": {k: v for k, v in (self.ui.get("csp") or {}).items() if app_meta.origins(v)}}
        if self.granted:
            sandbox["permissions"] = {key: {} for key, name in app_meta.PERMISSIONS.items() if name in self.granted}
        return {
            "protocolVersion": app_meta.PROTOCOL_VERSION,
            "hostInfo": {"name": CLIENT_NAME, "version": __version__},
            "hostCapabilities": {
                "openLinks": {},
                "serverTools": {},
                "serverResources": {},
                "logging": {},
                "sandbox": sandbox,
            },
            "hostContext": context,
        }

    def _dimensions(self) -> dict[str, Any]:
        width = self.page.get("width")
        return {"maxHeight": MAX_HEIGHT, **({"width": width} if width else {})}

    def _call_tool(self, request_id: Any, params: dict[str, Any]) -> None:
        name = params.get("name")
        tool = self._tools().get(name) if isinstance(name, str) else None
        if tool is None:
            self._error(request_id, -32602, f"unknown tool on {self.connection}: {name!r}")
        elif not app_meta.callable_by_app(tool):
            self._error(request_id, DENIED, f"{name}: not callable by apps (its visibility is {app_meta.visibility(tool)})")
        else:
            self._proxy(request_id, "tools/call", {"name": name, "arguments": params.get("arguments") or {}})

    def _proxy(self, request_id: Any, method: str, params: dict[str, Any]) -> None:
        def shown(line: str) -> None:
            self._record(self.call_lines, {"time": time.time(), "text": line})

        async def forward() -> None:
            try:
                if method == "tools/call" and self._calls is not None:
                    result = await followed_call(self._calls, params, shown)
                else:
                    result = await self.session.request(method, params)
            except McpError as exc:
                self._error(request_id, exc.code, exc.message)
            except Exception as exc:  # noqa: BLE001 - the app gets one line, the session goes on
                self._error(request_id, rpc.INTERNAL_ERROR, str(exc) or type(exc).__name__)
            else:
                self._reply(request_id, result)

        get_runtime().spawn(forward)

    def _open_link(self, request_id: Any, url: Any) -> None:
        parts = urlsplit(url) if isinstance(url, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
            self._error(request_id, DENIED, "Invalid URL: only http and https links open")
            return
        link = next(self._ids)
        self._links[link] = request_id
        if self.send is not None:
            self.send({"kind": "link", "id": link, "url": url})

    def _flush(self) -> None:
        """Send the result or the cancellation, once, after initialization."""
        with self._lock:
            if self.state != "initialized" or self._delivered or (self.result is None and self.cancelled is None):
                return
            self._delivered = True
        if self.result is not None:
            self._send_notification("ui/notifications/tool-result", self.result.raw)
        else:
            self._send_notification("ui/notifications/tool-cancelled", {"reason": self.cancelled})

    def _torn_down(self) -> None:
        with self._lock:
            self.state = "torn down"
        self._removed()

    @property
    def removed_because(self) -> str | None:
        """Why the view is gone for good (we tore it down), or None while it may still be shown."""
        return (self.ended_because or "torn down") if self.state == "torn down" else None

    def _removed(self) -> None:
        """Tell the front end the view is gone for good, and why."""
        if self.send is not None:
            self.send({"kind": "remove", "reason": self.removed_because})

    def _record(self, records: list[dict[str, Any]], record: dict[str, Any]) -> None:
        records.append(record)
        del records[:-RECORDS]
        self.on_change()

    # ----- to the front end -----

    def _reply(self, request_id: Any, result: Any) -> None:
        self._out({"jsonrpc": "2.0", "id": request_id, "result": result})

    def _error(self, request_id: Any, code: int, message: str) -> None:
        self._out({"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}})

    def _send_notification(self, method: str, params: dict[str, Any]) -> None:
        self._out({"jsonrpc": "2.0", "method": method, "params": params})

    def _out(self, message: dict[str, Any]) -> None:
        self._trace(OUT, rpc.classify(message).kind, message)
        if self.send is not None:
            self.send({"kind": "rpc", "message": message})

    def _trace(self, direction: str, kind: str, message: Any) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        request_id = message.get("id") if isinstance(message, dict) else None
        raw = json.dumps(message, default=str)
        self.session.trace.frame(direction, kind, raw, message, method=method, id=request_id, via=APP_VIA)

    def text(self) -> str:
        """The view as text: what the call returned, and what the app said."""
        lines = [f"[{self.connection}] {self.name}: MCP App view ({self.state})"]
        if self.result is not None:
            lines.append(str(self.result))
        elif self.cancelled is not None:
            lines.append(f"cancelled: {self.cancelled}")
        lines += [f"app message: {message_text(m)}" for m in self.messages]
        if self.model_context is not None:
            lines.append(f"model context: {message_text(self.model_context)}")
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        shown = self.result._html() if self.result is not None else f"<pre>{esc(self.text())}</pre>"
        return frontend.current().app_bundle(lambda: self, {"text/plain": self.text(), "text/html": shown})

    def __repr__(self) -> str:
        return f"<AppView {self.name!r} on {self.connection!r} {self.state}, {len(self.messages)} messages>"


def message_text(record: dict[str, Any]) -> str:
    """An app's `ui/message` or model context as one line of plain text."""
    content = record.get("content")
    blocks = content if isinstance(content, list) else [content] if isinstance(content, dict) else []
    texts = [str(b.get("text")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    if not texts and record.get("structuredContent") is not None:
        texts = [json.dumps(record["structuredContent"], default=str)]
    return one_line(" ".join(texts)) or "(no text)"
