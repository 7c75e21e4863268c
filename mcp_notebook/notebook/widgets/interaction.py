"""ipywidgets for a call in progress and for server questions: a progress bar, an
elicitation form generated from the requested schema, a sampling reply box.

Built and updated by the caller's (the cell's) thread. Server text is escaped; a URL is
a link only when it may be opened (https, or http to this machine: `check_url`), its host
shown apart; a refused one cannot be accepted. Button clicks answer the `Question`; the
session thread sends the reply.

Clicks while the asking cell still runs: a kernel handles widget messages on the thread
that runs cells, so a cell waiting for a tool result could not also receive the click
that answers the server. ipykernel 7.4 routes each comm message to the subshell (JEP 91:
a thread with its own event loop) its comm names; we ask our own kernel for one subshell,
over its control channel as any frontend would, and route the question forms' comms to
it. Where a kernel cannot, the form says to answer with a callback.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import ipywidgets as widgets

from ...api.calls.progress import ProgressState
from ...api.client_side.answers import Question, UrlCheck, with_defaults
from ...api.tools.form_fields import FieldInput, field_input
from ...api.tools.validate import problems
from ...base.text import esc, plain


class ProgressBar:
    """A live progress bar with the server's message; where widgets are not drawn (a saved
    notebook, an export) its output reads as one line of text, the bar's last state."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.line = "waiting for progress"
        self.bar = widgets.FloatProgress(value=0.0, min=0.0, max=1.0, description="", bar_style="info")
        self.message = widgets.HTML()
        heading = widgets.HTML(value=f"<code>{esc(label)}</code>")
        self.widget = ProgressBox(self, [widgets.HBox([heading, self.bar]), self.message])
        self._shown: Any = None  # the output's display handle

    def show(self) -> ProgressBar:
        from IPython.display import display

        self._shown = display(self.widget, display_id=True)
        return self

    def update(self, state: ProgressState) -> None:
        fraction = state.fraction()
        self.bar.value = fraction if fraction is not None else 0.0
        self.bar.bar_style = "info"
        count = f"{state.progress:g}/{state.total:g}" if state.total else (f"{state.progress:g}" if state.progress else "")
        self.message.value = " ".join(esc(part) for part in (count, state.message) if part)
        self.line = state.line()

    def close(self, failed: bool = False) -> None:
        self.bar.bar_style = "danger" if failed else "success"
        if not failed:
            self.bar.value = self.bar.max
        self.line += " (failed)" if failed else " (done)"
        if self._shown is not None:
            self._shown.update(self.widget)  # the output's text becomes the last state


class ProgressBox(widgets.VBox):
    """The bar's box, whose text form is the bar's line (`ProgressState.line`, plain text), not a repr."""

    def __init__(self, bar: ProgressBar, children: list[widgets.Widget]) -> None:
        super().__init__(children=children)
        self._bar = bar

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/plain"] = f"{plain(self._bar.label)}: {self._bar.line}"
        return bundle


def input_widget(field: FieldInput) -> widgets.ValueWidget:
    """The widget for an input the API describes (`api.tools.form_fields`), holding what it starts with."""
    options = list(field.options)
    if field.input == "choices":
        return widgets.SelectMultiple(options=options, value=field.start, rows=min(6, max(2, len(options))))
    if field.input == "choice":
        return widgets.Dropdown(options=options, value=field.start)
    if field.input == "checkbox":
        return widgets.Checkbox(value=field.start, indent=False)
    if field.input in ("integer", "number"):
        whole = field.input == "integer"
        if field.minimum is None and field.maximum is None:
            return (widgets.IntText if whole else widgets.FloatText)(value=field.start)
        bounded = widgets.BoundedIntText if whole else widgets.BoundedFloatText
        return bounded(value=field.start, min=field.minimum, max=field.maximum)
    if field.input == "json":
        return widgets.Textarea(value=field.start, placeholder=field.placeholder, rows=2)
    return widgets.Text(value=field.start, placeholder=field.placeholder)


class ElicitationForm:
    """A form for `elicitation/create`: fields from the schema, accept / decline / cancel."""

    def __init__(self, question: Question) -> None:
        self.question = question
        schema = question.schema
        self.required = set(schema.get("required") or [])
        self.props: dict[str, dict[str, Any]] = {k: v for k, v in (schema.get("properties") or {}).items() if isinstance(v, dict)}
        self.fields: dict[str, widgets.ValueWidget] = {name: input_widget(field_input(prop)) for name, prop in self.props.items()}
        rows = []
        for name, prop in self.props.items():
            title = esc(prop.get("title") or name) + (" <b style='color:#e03131'>*</b>" if name in self.required else "")
            help_ = (
                f"<div style='color:#868e96;font-size:0.85em'>{esc(prop.get('description'))}</div>"
                if prop.get("description")
                else ""
            )
            label = widgets.HTML(
                f"<div style='white-space:normal;line-height:1.3'>{title}{help_}</div>",
                layout=widgets.Layout(width="16em", flex="0 0 16em"),
            )  # inputs line up
            rows.append(widgets.HBox([label, self.fields[name]]))
        who = esc(question.connection or "the server")
        self.header = widgets.HTML(f"<b>{who} asks:</b> {esc(question.params.get('message', ''))}")
        self.accept_button = widgets.Button(description="Accept", button_style="success")
        self.decline_button = widgets.Button(description="Decline", button_style="warning")
        self.cancel_button = widgets.Button(description="Cancel")
        self.status = widgets.HTML()
        self.accept_button.on_click(lambda _: self.accept())
        self.decline_button.on_click(lambda _: self._finish(self.question.decline, "declined"))
        self.cancel_button.on_click(lambda _: self._finish(self.question.cancel, "cancelled"))
        buttons = widgets.HBox([self.accept_button, self.decline_button, self.cancel_button])
        self.widget = widgets.VBox([self.header, *rows, buttons, self.status])

    def content(self) -> dict[str, Any]:
        """What the form holds now; empty text fields are left out (a required one is then missing)."""
        content: dict[str, Any] = {}
        for name, field in self.fields.items():
            value = field.value
            if isinstance(value, tuple):
                value = list(value)
            if value is None or value == "":
                continue
            content[name] = value
        return content

    def accept(self) -> bool:
        content = with_defaults({"properties": self.props}, self.content())
        issues = problems(content, self.question.schema)
        if issues:
            self.status.value = f"<span style='color:#e03131'>{esc('; '.join(issues))}</span>"
            return False
        self._finish(lambda: self.question.accept(content), "accepted")
        return True

    def _finish(self, answer: Any, word: str) -> None:
        if self.question.answered:
            self.status.value = "<i>already answered</i>"
            return
        answer()
        for button in (self.accept_button, self.decline_button, self.cancel_button):
            button.disabled = True
        self.status.value = f"<i>{esc(word)}</i>"


class UrlPrompt:
    """URL-mode elicitation: the link, and accept (I'll open it) / decline / cancel."""

    def __init__(self, question: Question) -> None:
        self.question = question
        check = question.url_check
        who = esc(question.connection or "the server")
        self.header = widgets.HTML(
            f"<b>{who} asks you to open a URL:</b> {esc(question.params.get('message', ''))}{url_html(check)}"
        )
        self.accept_button = widgets.Button(description="Open / accept", button_style="success")
        self.decline_button = widgets.Button(description="Decline", button_style="warning")
        self.cancel_button = widgets.Button(description="Cancel")
        self.status = widgets.HTML()
        for button, answer, word in (
            (self.accept_button, question.accept, "accepted: waiting for the server to report completion"),
            (self.decline_button, question.decline, "declined"),
            (self.cancel_button, question.cancel, "cancelled"),
        ):
            button.on_click(lambda _, a=answer, w=word: self._finish(a, w))
        self.widget = widgets.VBox(
            [self.header, widgets.HBox([self.accept_button, self.decline_button, self.cancel_button]), self.status]
        )
        if check.refused is not None:  # declined already (`display.Presenter.ask`): say why, offer nothing
            for button in (self.accept_button, self.decline_button, self.cancel_button):
                button.disabled = True
            self.status.value = f"<i>refused: {esc(check.refused)}; declined</i>"
            return
        question.when_completed(self._completed)

    def _finish(self, answer: Any, word: str) -> None:
        if self.question.answered:
            return  # refused, or answered by another click: the status says which
        answer()
        for button in (self.accept_button, self.decline_button, self.cancel_button):
            button.disabled = True
        if not self.question.completed.is_set():
            self.status.value = f"<i>{esc(word)}</i>"

    def _completed(self) -> None:
        for button in (self.accept_button, self.decline_button, self.cancel_button):
            button.disabled = True
        self.status.value = "<i>completed: the server reports the interaction done</i>"


def url_html(check: UrlCheck) -> str:
    """The host apart and large (a look-alike subdomain shows for what it is), warnings, then the
    whole URL: a link only when it may be opened (never `javascript:`, never plain http elsewhere)."""
    host = f'<div>host: <b style="font-size:1.25em">{esc(check.host) or "(none)"}</b></div>'
    warnings = "".join(f'<div style="color:#d9480f">⚠ {esc(w)}</div>' for w in check.warnings)
    url = esc(check.url)
    if check.refused is None:
        link = f'<a href="{url}" target="_blank" rel="noopener noreferrer">{url}</a>'
    else:
        link = f"<code>{url}</code>"
    return f"{host}{warnings}<div>{link}</div>"


class SamplingReply:
    """`sampling/createMessage` without a callback: the request, and a box for the reply."""

    def __init__(self, question: Question) -> None:
        self.question = question
        params = question.params
        lines = []
        if params.get("systemPrompt"):
            lines.append(f"<div><b>system</b>: {esc(params['systemPrompt'])}</div>")
        for message in params.get("messages") or []:
            content = message.get("content") or {}
            text = content.get("text") if isinstance(content, dict) and "text" in content else json.dumps(content)
            style = "white-space:pre-wrap;display:inline"
            lines.append(f"<div><b>{esc(message.get('role'))}</b>: <pre style='{style}'>{esc(text)}</pre></div>")
        who = esc(question.connection or "the server")
        self.header = widgets.HTML(
            f"<b>{who} asks for a model reply (max {esc(params.get('maxTokens'))} tokens):</b>" + "".join(lines)
        )
        self.reply = widgets.Textarea(placeholder="type the assistant's reply", layout=widgets.Layout(width="100%"))
        self.model = widgets.Text(value="notebook-user", description="model")
        self.send_button = widgets.Button(description="Send", button_style="success")
        self.decline_button = widgets.Button(description="Decline", button_style="warning")
        self.status = widgets.HTML()
        self.send_button.on_click(
            lambda _: self._finish(lambda: question.reply(self.reply.value, self.model.value or "notebook-user"), "sent")
        )
        self.decline_button.on_click(lambda _: self._finish(question.decline, "declined"))
        self.widget = widgets.VBox(
            [self.header, self.reply, self.model, widgets.HBox([self.send_button, self.decline_button]), self.status]
        )

    def _finish(self, answer: Any, word: str) -> None:
        if not self.question.answered:
            answer()
            self.send_button.disabled = self.decline_button.disabled = True
        self.status.value = f"<i>{esc(word)}</i>"


def question_form(question: Question) -> ElicitationForm | UrlPrompt | SamplingReply:
    """The form object for a question (its `.widget` is what gets displayed), its clicks
    routed so they arrive while the asking cell still runs."""
    form: ElicitationForm | UrlPrompt | SamplingReply
    if question.kind == "sampling":
        form = SamplingReply(question)
    else:
        form = UrlPrompt(question) if question.mode == "url" else ElicitationForm(question)
    if not take_clicks_while_busy(form.widget) and not question.answered:  # answered: a refused URL
        form.status.value = (
            "<i>This kernel cannot take clicks while the cell runs (ipykernel 7.4 and newer can): "
            "answer with a callback instead (connect(..., elicitation=fn, sampling=fn)).</i>"
        )
    return form


# ----- clicks while the asking cell runs -----

CREATE_TIMEOUT = 5.0  # seconds to wait for the kernel's create_subshell_reply

_lock = threading.Lock()
_subshell: dict[str, str | None] = {}  # connection file -> subshell id (None: not available)


def _kernel() -> Any:
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    shell = get_ipython()
    return getattr(shell, "kernel", None) if shell is not None else None


def _supports_routing(kernel: Any) -> bool:
    """Subshells exist and comm messages are routed by their comm's `_reply_subshell_for`."""
    if getattr(kernel, "shell_channel_thread", None) is None:
        return False
    try:
        from ipykernel.comm.comm import BaseComm
    except ImportError:
        return False
    return hasattr(BaseComm, "_reply_subshell_for")


def _create_subshell(connection_file: str) -> str | None:
    """Ask the kernel (ourselves) for a subshell over its control channel; its id, or None."""
    import zmq
    from jupyter_client.blocking.client import BlockingKernelClient

    context = zmq.Context()
    try:
        client = BlockingKernelClient(connection_file=connection_file, context=context)
        client.load_connection_file()
        socket = client.connect_control()
        try:
            client.session.send(socket, "create_subshell_request", {})
            if not socket.poll(int(CREATE_TIMEOUT * 1000)):
                return None
            _, reply = client.session.recv(socket, mode=0)
        finally:
            socket.close(linger=0)
    except Exception:  # noqa: BLE001 - no subshell means only that clicks wait for the cell
        return None
    finally:
        context.destroy(linger=0)
    content = (reply or {}).get("content") or {}
    subshell_id = content.get("subshell_id")
    return subshell_id if content.get("status") == "ok" and isinstance(subshell_id, str) else None


def answering_subshell() -> str | None:
    """The id of the subshell that takes question clicks in this kernel, made on first use."""
    kernel = _kernel()
    if kernel is None or not _supports_routing(kernel):
        return None
    try:
        from ipykernel.connect import get_connection_file

        connection_file = get_connection_file()
    except Exception:  # noqa: BLE001 - an embedded kernel without a connection file
        return None
    with _lock:
        if connection_file not in _subshell:
            _subshell[connection_file] = _create_subshell(connection_file)
        return _subshell[connection_file]


def _widget_tree(widget: Any) -> list[Any]:
    """The widget and every widget it holds (children, layout, style), each once."""
    found: dict[int, Any] = {}
    todo = [widget]
    while todo:
        current = todo.pop()
        if not isinstance(current, widgets.Widget) or id(current) in found:
            continue
        found[id(current)] = current
        for name in current.keys:
            value = getattr(current, name, None)
            todo.extend(value if isinstance(value, (list, tuple)) else [value])
    return list(found.values())


def take_clicks_while_busy(widget: Any) -> bool:
    """Route the widget's messages to the answering subshell; False where the kernel cannot."""
    subshell_id = answering_subshell()
    if subshell_id is None:
        return False
    for part in _widget_tree(widget):
        comm = getattr(part, "comm", None)
        if comm is not None:
            comm._reply_subshell_for = lambda data, default, _id=subshell_id: _id
    return True
