"""The authorization widget: what a cell shows while a server's OAuth flow waits for the user.

A link styled as a button opens the authorization page in a new tab (the host shown apart,
so the user sees where they go), the state of each step (discovery, registration,
authorization, token) follows the flow, and a box takes the URL the browser ended on, for a
kernel the browser cannot reach. Under a Jupyter server with the mcp-notebook extension
(JupyterHub's too) the server's callback catches the redirect; where browser and kernel
share a machine, a one-shot loopback listener does: whichever comes first, it or the box,
wins, and the widget says which path it is using. A browser is never opened from here.

Runs in the flow's worker thread; the widget's comms go to the answering subshell, so its
clicks arrive while the cell waits. Server text is escaped; the pasted URL carries the code:
it is never shown back, and the box is emptied once read. A timeout or Cancel is a one-line
`AuthorizationError`. A saved notebook keeps its last state as a snapshot (`snapshot_display`):
the outcome and the steps, no link.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

import ipywidgets as widgets

from ...api.display.auth_progress import PHASES, AuthProgress, abandoned
from ...auth.loopback import Receiver
from ...auth.redirects import caught_by, how_it_returns, receiver_for
from ...base.errors import AuthorizationError
from ...base.text import esc, plain
from . import snapshot_display
from . import snapshots as snapshot_registry
from .interaction import take_clicks_while_busy

WAKE = 0.25  # seconds between looks at the listener, the box and the flow
MARKS = {"done": ("✓", "#2f9e44"), "waiting": ("…", "#1971c2"), "failed": ("✗", "#e03131"), "pending": ("·", "#868e96")}
NO_ROUTING = (
    "This kernel cannot take clicks while the cell runs (ipykernel 7.4 and newer can): "
    "use the loopback callback, or pass auth=OAuth(authorize=callback)."
)


class AuthorizationWidget:
    """The link, the steps and the paste box of one authorization."""

    def __init__(self, url: str, progress: AuthProgress | None, how: str) -> None:
        self.url = url
        self.redirect_uri = parse_qs(urlsplit(url).query).get("redirect_uri", [""])[0]
        self.state: dict[str, tuple[str, str]] = {phase: ("pending", "") for phase in PHASES}
        for phase, (note, failed) in (progress.steps() if progress else {}).items():
            self.state[phase] = ("failed" if failed else "done", note)
        self.state["authorization"] = ("waiting", "waiting for you in the browser")
        self.state["token"] = ("pending", "")
        self.pasted: str | None = None
        self.snapshot_id = snapshot_registry.new_id()
        self._view = self  # what `snapshot_display` reads: html(), text(), closed
        self.closed = False
        self.outcome = "Waiting for authorization at"
        self.stop_listening: Callable[[], None] = lambda: None
        self.cancelled = False
        self.wake = threading.Event()
        parts = urlsplit(url)
        opens = parts.scheme in ("http", "https")
        self.header = widgets.HTML(
            snapshot_registry.hide_style(self.snapshot_id)
            + f"<b>The server wants you to authorize this connection</b> at <code>{esc(parts.netloc)}</code>"
            + ("" if opens else f" (<i>not a web address: {esc(parts.scheme)}</i>)")
        )
        link = (
            f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer" class="mcp-authorize '
            'jupyter-button widget-button mod-primary" style="text-decoration:none;padding:0 12px;'
            'display:inline-flex;align-items:center">Authorize at '
            f"{esc(parts.netloc)} ↗</a>"
        )
        self.link = widgets.HTML(link if opens else "")
        self.steps = widgets.HTML(self._table())
        self.help = widgets.HTML(
            f"<div style='color:#868e96'>Open the page and authorize; <span class='mcp-auth-path'>{esc(how)}</span> "
            f"(<code>{esc(self.redirect_uri)}</code>). If the browser shows an error page there instead, paste "
            "that page's URL:</div>"
        )
        self.box = widgets.Text(placeholder=self.redirect_uri + "?code=…", layout=widgets.Layout(width="60%"))
        self.continue_button = widgets.Button(description="Continue", button_style="success")
        self.cancel_button = widgets.Button(description="Cancel", button_style="warning")
        self.status = widgets.HTML()
        self.paste_row = widgets.HBox([self.box, self.continue_button, self.cancel_button])
        self.continue_button.on_click(lambda _: self._paste())
        self.cancel_button.on_click(lambda _: self._cancel())
        self.widget = widgets.VBox(
            [
                self.header,
                self.link,
                self.steps,
                self.help,
                self.paste_row,
                self.status,
            ]
        )

    def html(self) -> str:
        """The last state where no widget is drawn (a saved notebook): outcome and steps, no link."""
        return f"<b>{esc(self.outcome)}</b> <code>{esc(urlsplit(self.url).netloc)}</code>{self._table()}"

    def text(self) -> str:
        return steps_text(f"{self.outcome} {urlsplit(self.url).netloc}", self.state)

    def _draw(self) -> None:
        self.steps.value = self._table()

    def _table(self) -> str:
        return steps_table(self.state)

    def step(self, phase: str, note: str, state: str) -> None:
        """A later step of the flow (the session's thread): the code exchanged, or refused."""
        if phase == "token" and note:
            self.state["token"] = ("waiting" if state == "working" else state, note)
            if state != "working":
                self.stop_listening()
                self.closed = True
            self._draw()

    def _paste(self) -> None:
        text = self.box.value.strip()
        self.box.value = ""  # the widget's state forgets the code: it goes to the token endpoint only
        target = urlsplit(self.redirect_uri)
        got = urlsplit(text)
        query = parse_qs(got.query)
        if (got.scheme, got.netloc, got.path) != (target.scheme, target.netloc, target.path) or not (
            "code" in query or "error" in query
        ):
            self.status.value = (
                f"<i style='color:#e03131'>That is not the URL the browser ended on: it starts with "
                f"<code>{esc(self.redirect_uri)}</code> and has a <code>code</code>. Paste it again.</i>"
            )
            return
        self.pasted = text
        self.wake.set()

    def _cancel(self) -> None:
        self.cancelled = True
        self.wake.set()

    def finish(self, how: str, failed: bool) -> None:
        """The authorization's outcome: controls disabled, the step marked, one line why."""
        self.box.disabled = self.continue_button.disabled = self.cancel_button.disabled = True
        self.link.value = ""
        self.paste_row.layout.display = self.help.layout.display = "none"
        host = esc(urlsplit(self.url).netloc)
        self.outcome = f"{'Not authorized' if failed else 'Authorized'} at"
        self.header.value = snapshot_registry.hide_style(self.snapshot_id) + f"<b>{esc(self.outcome)}</b> <code>{host}</code>"
        self.state["authorization"] = ("failed" if failed else "done", how)
        if not failed:
            self.state["token"] = ("waiting", "exchanging the code for a token")
        self._draw()
        self.status.value = ""


def steps_table(steps: dict[str, tuple[str, str]]) -> str:
    """The flow's phases as a table: a mark, the phase, its last note (escaped)."""
    rows = []
    for phase in PHASES:
        state, note = steps[phase]
        mark, colour = MARKS[state]
        rows.append(
            f"<tr><td style='color:{colour};padding-right:6px'>{mark}</td><td style='padding-right:10px'>{phase}</td>"
            f"<td style='color:#495057'>{esc(note)}</td></tr>"
        )
    return f"<table style='font-size:0.9em'>{''.join(rows)}</table>"


def steps_text(headline: str, steps: dict[str, tuple[str, str]]) -> str:
    """The same as text lines, under `headline`."""
    lines = [headline]
    for phase in PHASES:
        state, note = steps[phase]
        lines.append(f"  {MARKS[state][0]} {phase:<13} {note}")
    return plain("\n".join(lines))


def authorize_in_cell(url: str, progress: AuthProgress | None, limit: float) -> str:
    """Show the widget in the waiting cell and wait for the URL the browser ended on."""
    receiver = receiver_for(url)
    with contextlib.closing(receiver) if receiver is not None else contextlib.nullcontext():
        form = AuthorizationWidget(url, progress, how_it_returns(receiver))
        if progress is not None:
            form.stop_listening = progress.listen(form.step)
        routed = take_clicks_while_busy(form.widget)
        snapshot_display.show(form, form.widget._repr_mimebundle_(), "(the authorization widget; its last state follows)")
        if not routed:
            form.status.value = f"<i>{esc(NO_ROUTING)}</i>"
        try:
            answer = _wait(form, receiver, limit)
        except AuthorizationError as exc:
            form.stop_listening()
            form.closed = True
            form.finish(str(exc), failed=True)
            raise
    caught = receiver is not None and answer == receiver.received
    form.finish(f"caught by {caught_by(receiver)}" if caught else "the browser came back", False)
    return answer


def _wait(form: AuthorizationWidget, receiver: Receiver | None, limit: float) -> str:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if form.pasted is not None:
            return form.pasted
        if receiver is not None and receiver.received is not None:
            return receiver.received
        if form.cancelled:
            raise AuthorizationError("authorization cancelled in the widget")
        if abandoned():
            raise AuthorizationError("authorization given up: the request that asked for it ended")
        form.wake.wait(WAKE)
    raise AuthorizationError(f"nobody came back from the authorization page within {limit / 60:g} minutes")
