"""An MCP App view in a cell: an anywidget (`app.js`, an ES module: no front-end build
step, and the same widget in JupyterLab 4, Notebook 7 and VS Code) carrying the app's
JSON-RPC between its sandboxed iframe and the kernel's `api.apps.view.AppView`, with the
app's messages and the tool's text result shown under it.

anywidget rather than a JupyterLab extension of our own: it is a `DOMWidget` whose front
end is a plain ES module loaded by the widget manager, so there is nothing to compile,
install or keep in step with JupyterLab's versions, and it is well kept (used by altair,
marimo, ...). The comm is the bridge; the app's messages reach a busy kernel through the
answering subshell, as the question forms' do (`interaction.take_clicks_while_busy`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anywidget
import ipywidgets as widgets
import traitlets

from ...api.apps.view import AppView, message_text
from ...api.results.app_meta import with_csp
from ...base.text import esc
from .interaction import take_clicks_while_busy

DEFAULT_HEIGHT = 160
CALL_LINES = 8  # the latest progress and log lines of the app's tool calls, under the view


class AppFrame(anywidget.AnyWidget):
    """The iframe and the postMessage <-> comm relay (see `app.js`)."""

    _esm = Path(__file__).with_name("app.js")
    srcdoc = traitlets.Unicode("").tag(sync=True)
    title = traitlets.Unicode("").tag(sync=True)
    permissions = traitlets.List(traitlets.Unicode()).tag(sync=True)
    prefers_border = traitlets.Bool(True).tag(sync=True)
    height = traitlets.Int(DEFAULT_HEIGHT).tag(sync=True)
    closed_reason = traitlets.Unicode("").tag(sync=True)


class AppPanel:
    """One view in a cell: the app's frame, its records (messages, model context) and the result."""

    def __init__(self, view: AppView, result_html: str = "") -> None:
        self.view = view
        border = view.ui.get("prefersBorder")
        self.frame = AppFrame(
            srcdoc=with_csp(view.html, view.csp),
            title=f"MCP App: {view.name} ({view.connection})",
            permissions=view.permissions,
            prefers_border=True if border is None else bool(border),
            closed_reason=view.removed_because or "",
        )
        self.records = widgets.HTML()
        self.result = widgets.HTML(value=result_html)
        self.widget = widgets.VBox([self.frame, self.records, self.result])
        self.frame.on_msg(self._from_front_end)
        self.leaving = False  # the view left the page: the app winds down, then the frame's comm closes
        view.send = self._to_front_end
        view.on_change = self._redraw
        self.routed = take_clicks_while_busy(self.widget)
        self._redraw()

    def _from_front_end(self, _widget: Any, content: Any, _buffers: Any) -> None:
        if not isinstance(content, dict):
            return
        kind = content.get("kind")
        if kind == "rpc":
            self.view.receive(content.get("message"))
        elif kind == "hello" and isinstance(content.get("page"), dict):
            self.view.page = content["page"]
            self.view.restart()  # drawn again (the notebook reopened): the new frame starts afresh
        elif kind == "context" and isinstance(content.get("context"), dict):
            self.view.context_changed(content["context"])
        elif kind == "link-clicked" and isinstance(content.get("id"), int):
            self.view.link_clicked(content["id"])
        elif kind == "permissions" and isinstance(content.get("granted"), list):
            self.view.granted = [p for p in content["granted"] if p in self.view.permissions]
            self.view.session.trace.event("app-permissions", f"{self.view.name}: granted {self.view.granted}", via="app")
        elif kind == "restart":
            self.view.session.trace.event("app-restart", f"{self.view.name}: another document in the frame; reloaded", via="app")
            self.view.restart()
        elif kind == "teardown" and isinstance(content.get("message"), dict):
            self.leaving = True  # the view left the page; the front end asked the app to wind down
            self.view.teardown_sent(content["message"])
        elif kind == "closed":
            self.view.state = "closed"
            why = "the view left the page (its output was cleared, its cell ran again or the page closed)"
            if content.get("leaving"):
                why = "the app did not answer ui/resource-teardown in time; its frame was removed"
            self.view.session.trace.event("app-closed", f"{self.view.name}: {why}", via="app")
            if self.leaving:
                self._end()

    def _to_front_end(self, message: dict[str, Any]) -> None:
        if message.get("kind") == "remove":  # kept in the model too: a frame drawn later shows the note at once
            self.frame.closed_reason = str(message.get("reason") or "torn down")
        self.frame.send(message)
        if message.get("kind") == "remove" and self.leaving:
            self._end()  # the app answered its teardown

    def _end(self) -> None:
        """The view is gone for good: the kernel stops serving it (its comm closes)."""
        self.view.send = None
        if self.view.state != "torn down":
            self.view.state = "closed"
        self.frame.close()

    def _redraw(self) -> None:
        view = self.view
        rows = [f'<div style="color:#868e96">{esc(line["text"])}</div>' for line in view.call_lines[-CALL_LINES:]]
        rows += [f"<div><b>app message</b>: {esc(message_text(m))}</div>" for m in view.messages[-20:]]
        if view.model_context is not None:
            rows.append(f"<div><b>model context</b>: {esc(message_text(view.model_context))}</div>")
        if view.cancelled is not None:
            rows.append(f'<div style="color:#e03131">call cancelled: {esc(view.cancelled)}</div>')
        self.records.value = "".join(rows)
        if view.result is not None and not self.result.value:
            self.result.value = view.result._html()


def app_bundle(view: AppView, fallback: dict[str, Any]) -> dict[str, Any]:
    """The display bundle of a view: the widget, with `fallback` (the text result) for saved
    notebooks and front ends without widgets."""
    panel = AppPanel(view, fallback.get("text/html", ""))
    bundle = dict(fallback)
    bundle.update(panel.widget._repr_mimebundle_() or {})
    bundle["text/plain"] = fallback.get("text/plain", view.text())
    return bundle
