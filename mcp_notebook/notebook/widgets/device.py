"""The device grant's widget: the user code to enter and where (RFC 8628), while the flow polls.

The code in large type, a link styled as a button to the verification page (the one with the
code in it when the server gives it; the host shown apart), the steps of the flow as the
authorization widget shows them, and Cancel. No redirect and no paste box: the page may be
opened on any device, a phone included. Made in the flow's worker thread; its outcome comes
from the session's thread (`finish`). Server text is escaped; a link that is not http(s) is
not drawn. The device code and the tokens never reach it. A saved notebook keeps the last
state as a snapshot (`snapshot_display`): outcome and steps, no code, no link.
"""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import ipywidgets as widgets

from ...api.display.auth_progress import PHASES, AuthProgress
from ...auth.device import DeviceCode
from ...base.text import esc, plain
from . import snapshot_display
from . import snapshots as snapshot_registry
from .auth import NO_ROUTING, steps_table, steps_text
from .interaction import take_clicks_while_busy


class DeviceCodeWidget:
    """The code, the link, the steps and Cancel of one device authorization."""

    def __init__(self, code: DeviceCode, progress: AuthProgress | None) -> None:
        self.code = code
        self.state: dict[str, tuple[str, str]] = {phase: ("pending", "") for phase in PHASES}
        for phase, (note, failed) in (progress.steps() if progress else {}).items():
            self.state[phase] = ("failed" if failed else "done", note)
        self.state["authorization"] = ("waiting", "waiting for you to enter the code")
        self.state["token"] = ("pending", "")
        self.snapshot_id = snapshot_registry.new_id()
        self._view = self  # what `snapshot_display` reads: html(), text(), closed
        self.closed = False
        self.outcome = "Waiting for authorization at"
        self._cancelled = threading.Event()
        self.stop_listening = progress.listen(self.step) if progress is not None else (lambda: None)
        host = urlsplit(code.url).netloc
        self.header = widgets.HTML(
            snapshot_registry.hide_style(self.snapshot_id)
            + f"<b>The server wants you to authorize this connection</b>: on any device, open "
            f"<code>{esc(plain(code.verification_uri))}</code> and enter"
        )
        self.code_box = widgets.HTML(
            f"<div style='font:600 1.8em monospace;letter-spacing:0.12em;margin:4px 0'>{esc(code.user_code)}</div>"
        )
        opens = urlsplit(code.url).scheme in ("http", "https")
        link = (
            f'<a href="{esc(code.url)}" target="_blank" rel="noopener noreferrer" class="mcp-authorize '
            'jupyter-button widget-button mod-primary" style="text-decoration:none;padding:0 12px;'
            f'display:inline-flex;align-items:center">Open {esc(host)} ↗</a>'
        )
        self.link = widgets.HTML(link if opens else "")
        self.steps = widgets.HTML(self._table())
        minutes = f"{code.expires_in / 60:.0f}"
        self.help = widgets.HTML(
            f"<div style='color:#868e96'>No redirect comes back here: the connection goes on by itself once you "
            f"approve. The code is good for {esc(minutes)} minutes.</div>"
        )
        self.cancel_button = widgets.Button(description="Cancel", button_style="warning")
        self.cancel_button.on_click(lambda _: self._cancelled.set())
        self.status = widgets.HTML()
        self.widget = widgets.VBox(
            [self.header, self.code_box, widgets.HBox([self.link, self.cancel_button]), self.steps, self.help, self.status]
        )

    # ----- DeviceWait -----

    def cancelled(self) -> bool:
        return self._cancelled.is_set()

    def finish(self, note: str, failed: bool) -> None:
        """The outcome (the session's thread): controls gone, the step marked, one line why."""
        self.stop_listening()
        self.cancel_button.disabled = True
        self.link.value = self.code_box.value = ""
        self.help.layout.display = "none"
        self.outcome = f"{'Not authorized' if failed else 'Authorized'} at"
        host = esc(urlsplit(self.code.url).netloc)
        self.header.value = snapshot_registry.hide_style(self.snapshot_id) + f"<b>{esc(self.outcome)}</b> <code>{host}</code>"
        self.state["authorization"] = ("failed" if failed else "done", note)
        if not failed:
            self.state["token"] = ("done", "token issued")
        self.steps.value = self._table()
        self.closed = True

    # ----- the steps, and what a saved notebook keeps -----

    def step(self, phase: str, note: str, state: str) -> None:
        if phase in ("token", "registration") and note and state != "working":
            self.state[phase] = (state, note)
            self.steps.value = self._table()

    def _table(self) -> str:
        return steps_table(self.state)

    def html(self) -> str:
        return f"<b>{esc(self.outcome)}</b> <code>{esc(urlsplit(self.code.url).netloc)}</code>{self._table()}"

    def text(self) -> str:
        return steps_text(f"{self.outcome} {urlsplit(self.code.url).netloc}", self.state)


def show_in_cell(code: DeviceCode, progress: AuthProgress | None) -> DeviceCodeWidget:
    """Show the device code's widget in the waiting cell; the flow polls meanwhile."""
    form = DeviceCodeWidget(code, progress)
    routed = take_clicks_while_busy(form.widget)
    text = f"Open {plain(code.url)} on any device and enter the code {plain(code.user_code)}"
    snapshot_display.show(form, form.widget._repr_mimebundle_(), text)
    if not routed:
        form.status.value = f"<i>{esc(NO_ROUTING.split(':')[0])}: Cancel cannot be clicked; interrupt the cell instead.</i>"
    return form
