"""The widgets a configured server asks with in its cell: Run / Cancel before a configured
command first starts (Connect / Cancel before a configured URL is first sent values from this
machine), and a form for a VS Code entry's inputs (password inputs in a password
field). The cell that connects waits for the answer; the forms' clicks are routed to the
answering subshell (`interaction.take_clicks_while_busy`), so they arrive while it
waits. Where the kernel cannot route them, the form says so and the cell is not left waiting.

Text from configuration files is escaped here like any other.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

import ipywidgets as widgets

from ...base.text import esc
from ...configs.consent import ConsentRequest
from ...configs.entries import ServerEntry
from ...configs.interpolate import InputRequest
from .interaction import take_clicks_while_busy

WAKE = 0.2  # seconds between looks at the answer, so an interrupt (Ctrl-C, Jupyter's stop) gets through


class ConsentForm:
    """What will run (or where what will be sent), and Run (or Connect) / Cancel."""

    def __init__(self, request: ConsentRequest) -> None:
        self.request = request
        self.answer: bool | None = None
        self.answered = threading.Event()
        table = "".join(
            f"<tr><th style='text-align:left;padding-right:1em'>{esc(k)}</th><td><code>{esc(v)}</code></td></tr>"
            for k, v in request.rows()
        )
        what = "wants to start this command" if request.runs else "wants to connect here, sending values from this machine"
        self.header = widgets.HTML(
            f"<b>{esc(request.entry.name)}</b> from <code>{esc(request.entry.where)}</code> {what} "
            f"(only the names of the values are shown):<table>{table}</table>"
        )
        icon = "play" if request.runs else "plug"
        self.run_button = widgets.Button(description=request.verb, button_style="warning", icon=icon)
        self.cancel_button = widgets.Button(description="Cancel")
        self.status = widgets.HTML()
        self.run_button.on_click(lambda _: self._finish(True))
        self.cancel_button.on_click(lambda _: self._finish(False))
        self.widget = widgets.VBox([self.header, widgets.HBox([self.run_button, self.cancel_button]), self.status])

    def _finish(self, answer: bool) -> None:
        if self.answered.is_set():
            return
        self.answer = answer
        self.run_button.disabled = self.cancel_button.disabled = True
        doing, nothing = ("starting it", "started") if self.request.runs else ("connecting", "sent")
        self.status.value = (
            f"<i>allowed: {doing} (this entry will not be asked about again until it changes)</i>"
            if answer
            else f"<i>cancelled: nothing was {nothing}</i>"
        )
        self.answered.set()


class InputsForm:
    """A field per input (a password field for `password: true`), and OK / Cancel."""

    def __init__(self, requests: list[InputRequest], entry: ServerEntry) -> None:
        self.requests = requests
        self.answer: dict[str, str] | None = None
        self.answered = threading.Event()
        self.fields: dict[str, widgets.ValueWidget] = {}
        rows = []
        for request in requests:
            field: widgets.ValueWidget
            if request.options:
                field = widgets.Dropdown(
                    options=list(request.options),
                    value=request.default if request.default in request.options else request.options[0],
                )
            elif request.password:
                field = widgets.Password(placeholder="not shown, not stored")
            else:
                field = widgets.Text(value=request.default or "")
            self.fields[request.id] = field
            label = widgets.HTML(f"{esc(request.description)}", layout=widgets.Layout(width="20em", flex="0 0 20em"))
            rows.append(widgets.HBox([label, field]))
        self.header = widgets.HTML(
            f"<b>{esc(entry.name)}</b> from <code>{esc(entry.where)}</code> needs these values "
            "(used for this connection only, never stored):"
        )
        self.ok_button = widgets.Button(description="OK", button_style="success")
        self.cancel_button = widgets.Button(description="Cancel")
        self.status = widgets.HTML()
        self.ok_button.on_click(lambda _: self._finish(True))
        self.cancel_button.on_click(lambda _: self._finish(False))
        self.widget = widgets.VBox([self.header, *rows, widgets.HBox([self.ok_button, self.cancel_button]), self.status])

    def _finish(self, ok: bool) -> None:
        if self.answered.is_set():
            return
        self.answer = {key: str(field.value) for key, field in self.fields.items()} if ok else None
        for field in self.fields.values():
            if isinstance(field, widgets.Password):
                field.value = ""  # the widget's state forgets it: it went to the connection only
        self.ok_button.disabled = self.cancel_button.disabled = True
        self.status.value = "<i>given</i>" if ok else "<i>cancelled</i>"
        self.answered.set()


INSTEAD_OF_CONSENT = "connect with consent=True (%mcp connect NAME --consent) once you have read the entry"
INSTEAD_OF_INPUTS = "give the values in terminal IPython, or write them into the entry as ${env:VAR} variables"


def wait_for(form: ConsentForm | InputsForm, instead: str) -> bool:
    """Show the form and wait for its answer in this (the cell's) thread; False if the kernel
    cannot take clicks while a cell runs (the form then says what to do instead)."""
    from IPython.display import display

    routed = take_clicks_while_busy(form.widget)
    display(form.widget)
    if not routed:
        form.status.value = (
            f"<i>This kernel cannot take clicks while the cell runs (ipykernel 7.4 and newer can): {esc(instead)}.</i>"
        )
        return False
    while not form.answered.wait(WAKE):
        pass
    return True


def ask_consent(request: ConsentRequest) -> bool | None:
    form = ConsentForm(request)
    return form.answer if wait_for(form, INSTEAD_OF_CONSENT) else None


def ask_inputs(requests: list[InputRequest], entry: ServerEntry) -> Mapping[str, str] | None:
    form = InputsForm(requests, entry)
    return form.answer if wait_for(form, INSTEAD_OF_INPUTS) else None
