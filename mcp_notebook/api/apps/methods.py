"""MCP Apps on a connection: finding a tool's view, fetching it (`resources/read`, cached per
connection until `notifications/resources/updated` for it or a resource list change),
and showing it through the front end: `conn.app(tool, arguments)`, and a `ToolResult` of a
tool with a view when it is displayed. Where Apps are off or the front end cannot draw
them, the text result is what shows.

Plain functions over the connection (`Connection` lists `app` in its class body).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import anyio

from ...base.errors import McpNotebookError, UsageError
from ...runtime import get_runtime
from ..calls.core import Core, Featured
from ..display import frontend
from ..resources import updates
from ..results import app_meta
from ..results.objects import Listing, ToolResult
from .host import AppHost, AppResource
from .view import AppView


def warn_flat_keys(fx: Core, tools: Listing) -> None:
    """Say in the trace, once per tool, that it names its view with the deprecated flat key."""
    for tool in tools:
        name = str(tool.get("name"))
        if app_meta.uses_flat_key(tool) and fx.get(AppHost).first_warning(name):
            fx.session.trace.event(
                "warning",
                f"{name}: names its view with the deprecated _meta['{app_meta.FLAT_KEY}']; "
                "MCP Apps servers should use _meta.ui.resourceUri",
                via="app",
            )


class _ViewsOff(Listing):
    """A tool listing on a connection with Apps off: a tool's view is marked, and said to be off."""

    def _rows(self) -> tuple[list[str], list[list[str]]]:
        head, rows = super()._rows()
        at = head.index("view")
        for row in rows:
            row[at] = f"{row[at]} (off here)" if row[at] else ""
        return head, rows


def model_tools(tools: Listing, *, everything: bool = False, views: bool = True) -> Listing:
    """The tools for people and code: app-only ones (visibility ["app"]) left out unless `everything`;
    where `views` are off (Apps off on the connection), tools with a view say so, with one note."""
    shown = list(tools) if everything else [tool for tool in tools if not app_meta.app_only(tool)]
    hidden = len(tools) - len(shown)
    notes = [note for note in (tools.note, f"{hidden} app-only hidden (--all lists them)" if hidden else "") if note]
    if views or not any(app_meta.resource_uri(tool) for tool in shown):
        return Listing("tools", shown, "; ".join(notes))
    notes.append("MCP Apps are off on this connection: results show as text (connect with apps=True for views)")
    return _ViewsOff("tools", shown, "; ".join(notes))


def fetch(conn: Featured, uri: str) -> AppResource:
    """The view at `uri`: from the connection's cache, else read now (`resources/read`)."""
    fx = conn._core
    stamp = (fx.listings.changed("resources"), updates.of(conn).counts.get(uri, 0))
    kept = fx.get(AppHost).cached(uri, stamp)
    if kept is not None:
        return kept
    read = conn.read_resource(uri)  # type: ignore[attr-defined]
    contents = [c for c in read.contents if c.get("uri") in (uri, None)] or read.contents
    if not contents:
        raise McpNotebookError(f"{fx.name}: {uri} has no content")
    content = contents[0]
    if "text" in content:
        html = str(content["text"])
    else:
        html = base64.b64decode(str(content.get("blob", ""))).decode("utf-8", "replace")
    ui = app_meta.resource_meta(content, None) or app_meta.resource_meta({}, _listed(conn, uri))
    resource = AppResource(uri, html, ui)
    fx.get(AppHost).store(resource, stamp)
    fx.session.trace.event("app-csp", f"{uri}: {app_meta.csp(resource.ui.get('csp'))}", via="app")
    return resource


def _listed(conn: Featured, uri: str) -> dict[str, Any] | None:
    """The view's `resources/list` entry (listed once per connection), where the server lists
    resources: its `_meta.ui` counts where the content has none (draft spec)."""
    fx = conn._core
    listing = fx.listings.cached("resources")
    if listing is None and fx.session.server.capabilities.get("resources") is not None:
        try:
            listing = conn.list_resources()  # type: ignore[attr-defined]
        except McpNotebookError:
            listing = None
    return next((r for r in listing or () if r.get("uri") == uri), None)


def open_view(conn: Featured, tool: dict[str, Any], arguments: dict[str, Any]) -> AppView:
    """A view of `tool` for a call with `arguments`, its HTML fetched (or cached)."""
    fx = conn._core
    uri = app_meta.resource_uri(tool)
    if uri is None:
        raise UsageError(f"{tool.get('name')}: the tool has no view (no _meta.ui.resourceUri)")
    resource = fetch(conn, uri)
    view = AppView(fx.name, fx.session, tool, arguments, resource.html, resource.ui, lambda: _tools(conn), fx)
    fx.get(AppHost).add(view)
    return view


def _tools(conn: Featured) -> dict[str, dict[str, Any]]:
    """The connection's tools by name, for the app's tools/call (cached listing, else fetched)."""
    listing = conn._core.listings.cached("tools")
    if listing is None:
        listing = conn.list_tools()  # type: ignore[attr-defined]
    return {str(tool.get("name")): tool for tool in listing}


class AppLink:
    """What a `ToolResult` of a tool with a view keeps, to show the view when displayed."""

    def __init__(self, conn: Featured, tool: dict[str, Any], arguments: dict[str, Any], result: ToolResult) -> None:
        self.conn, self.tool, self.arguments, self.result = conn, tool, arguments, result
        self.view: AppView | None = None

    def make_view(self) -> AppView:
        if self.view is None:
            self.view = open_view(self.conn, self.tool, self.arguments)
            self.view.deliver(self.result.raw)
        return self.view

    def bundle(self, fallback: dict[str, Any]) -> dict[str, Any]:
        return frontend.current().app_bundle(self.make_view, fallback)


def link(conn: Featured, result: ToolResult, arguments: dict[str, Any] | None) -> ToolResult:
    """Give `result` its view to show, when Apps are on and the tool has one."""
    fx = conn._core
    if not fx.get(AppHost).enabled:
        return result
    listing = fx.listings.cached("tools")
    tool = listing.get(result.name) if listing is not None else None
    if tool is not None and app_meta.resource_uri(tool) is not None:
        warn_flat_keys(fx, Listing("tools", [tool]))
        result.app = AppLink(conn, tool, dict(arguments or {}), result)
    return result


def app(self: Featured, tool: str, arguments: dict[str, Any] | None = None, *, timeout: float | None = None) -> AppView:
    """Show `tool`'s view (MCP Apps) and call the tool; the view gets the arguments at once and
    the result when it comes. Returns the view: `view.result`, `view.wait()`, `view.messages`
    (the app's `ui/message`s) and `view.model_context` (its last `ui/update-model-context`)."""
    fx = self._core
    if not fx.get(AppHost).enabled:
        raise UsageError(f"{fx.name}: MCP Apps are off for this connection; connect with apps=True")
    definition = self.tool(tool)  # type: ignore[attr-defined]
    args = dict(arguments or {})
    self.check_arguments(tool, args)  # type: ignore[attr-defined]
    warn_flat_keys(fx, Listing("tools", [definition]))
    view = open_view(self, definition, args)
    get_runtime().spawn(_call, fx, view, {"name": tool, "arguments": args}, timeout)
    return view


async def _call(fx: Core, view: AppView, params: dict[str, Any], timeout: float | None) -> None:
    try:
        result = await fx.session.request("tools/call", params, timeout=timeout)
    except anyio.get_cancelled_exc_class():
        view.cancel("the call was cancelled")
        raise
    except Exception as exc:  # noqa: BLE001 - the view says why; the caller reads view.cancelled
        view.cancel(str(exc) or type(exc).__name__)
    else:
        view.deliver(result if isinstance(result, dict) else {})


ViewFactory = Callable[[], AppView]
