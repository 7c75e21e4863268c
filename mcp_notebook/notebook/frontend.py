"""The notebook's front end: a waiting call's progress, log messages and server questions
shown in the caller's cell, and live panels as widgets. The package plugs it into the API,
and IPython loads the extension through `load` (the `%mcp` magic, its Tab completion, the
`%config McpNotebook` settings), which imports them with its first use.
A call's log lines past the first few become one "... and N more" line: updated in place in
a kernel, printed once at the end in a terminal.

Runs in the caller's thread only. In a Jupyter kernel: an ipywidgets progress bar and
question widgets; in terminal IPython: a text bar on stderr and prompts on stdin; in a
plain script: nothing unless asked (`progress=True`), logs go to the `logging` module,
and questions are prompted for when stdin is a terminal, declined otherwise.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..api.calls.progress import Caller, LogRecord, TextProgress
from ..api.client_side.answers import Question, with_defaults
from ..api.display import frontend
from ..api.display.auth_progress import AuthProgress
from ..api.tools.arguments import parse_value
from ..api.tools.validate import ToolArgumentError, problems
from ..base.errors import McpNotebookError
from ..base.text import clip, esc, one_line, plain
from ..diagnosis.report import Checklist

if TYPE_CHECKING:  # the configuration layer comes with the first config=NAME, not with the front end
    from ..configs.consent import ConsentRequest
    from ..configs.entries import ServerEntry
    from ..configs.interpolate import InputRequest

if TYPE_CHECKING:
    from ..auth.device import DeviceCode, DeviceWait


def environment() -> str:
    """ "kernel" (widgets can be drawn), "ipython" (a terminal shell) or "script"."""
    if "IPython" not in sys.modules:
        return "script"  # no shell runs without IPython imported: not worth importing it to ask
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return "script"
    shell = get_ipython()
    if shell is None:
        return "script"
    return "kernel" if getattr(shell, "kernel", None) is not None else "ipython"


class Presenter(frontend.Presenter):
    """The display side of one waiting call, wherever the caller's cell is."""

    def __init__(self, label: str, progress: Any, connection: str, where: str | None = None) -> None:
        super().__init__(label, progress, connection)
        self.env = where  # None: find out on first use
        self.more_line: Any = None  # the display handle of the "... and N more" line (kernel)

    def _where(self) -> str:
        if self.env is None:
            self.env = environment()
        return self.env

    def progress_display(self) -> Any:
        if self.display is None and not callable(self.option) and self.option is not False:
            if self._where() == "kernel":
                from .widgets.interaction import ProgressBar

                self.display = ProgressBar(self.label).show()
            elif self._where() == "ipython":
                self.display = TextProgress(self.label)
        return super().progress_display()

    def log(self, record: LogRecord) -> None:
        if self._where() == "script":
            super().log(record)
        else:
            print(record.line(self.connection))

    def more_logs(self, count: int, final: bool) -> None:
        if self._where() == "script":
            return super().more_logs(count, final)
        see = f"%mcp logs {self.connection} --unrouted lists the latest"
        line = {"text/plain": frontend.more_logs_line(count, self.connection, see)}
        if self.more_line is not None:
            self.more_line.update(line, raw=True)
        elif self._where() == "kernel" and environment() == "kernel":
            from IPython.display import display

            self.more_line = display(line, raw=True, display_id=True)
        elif final:
            print(line["text/plain"])

    def ask(self, question: Question, call: Caller | None = None) -> None:
        question.connection = self.connection
        if question.mode == "url" and question.url_check.refused:
            question.decline()  # still shown, as refused: nobody can accept it
        if self._where() == "kernel":
            from IPython.display import display

            from .widgets.interaction import question_form

            display(question_form(question).widget)
            self.open_questions.append(question)
        elif question.answered or (sys.stdin is not None and sys.stdin.isatty()):
            self.ask_in_terminal(question)
        else:
            question.decline()

    def ask_in_terminal(self, question: Question) -> None:
        ask_in_terminal(question)


class NotebookFrontEnd(frontend.FrontEnd):
    """Widgets in a Jupyter kernel; text and prompts in terminal IPython and in scripts.

    `where` ("kernel", "ipython" or "script") fixes the environment instead of finding it out
    at each call (tests show calls as a kernel or a terminal would).
    """

    def __init__(self, where: str | None = None) -> None:
        self.where = where

    def presenter(self, label: str, progress: Any, connection: str) -> Presenter:
        return Presenter(label, progress, connection, self.where)

    def log_panel(self, connection: Any, *, level: str | None, unrouted_only: bool, rows: int) -> Any:
        from .widgets.live import log_widget

        return log_widget(connection, level=level, unrouted_only=unrouted_only, rows=rows)

    def subscriptions_panel(self, connection: Any, uri: str | None, *, read: bool) -> Any:
        from .widgets.live import subscriptions_widget

        return subscriptions_widget(connection, uri, read=read)

    def _env(self) -> str:
        return self.where or environment()

    def ask_consent(self, request: ConsentRequest) -> bool | None:
        """A Run (or Connect) / Cancel form in a kernel; a y/N prompt in terminal IPython; nobody in a script."""
        where = self._env()
        if where == "kernel":
            from .widgets.configs import ask_consent

            return ask_consent(request)
        if where == "ipython" and sys.stdin is not None and sys.stdin.isatty():
            print("\n".join(plain(line) for line in request.lines()))
            return input(f"{request.verb}? [y/N] ").strip().lower() in ("y", "yes")
        return super().ask_consent(request)

    def ask_inputs(self, requests: list[InputRequest], entry: ServerEntry) -> Mapping[str, str] | None:
        if self._env() == "kernel":
            from .widgets.configs import ask_inputs

            return ask_inputs(requests, entry)
        return super().ask_inputs(requests, entry)

    def warn(self, text: str) -> None:
        """A warning box in a kernel's cell (its text/plain for saved notebooks); stderr in a terminal."""
        where = self._env()
        if where == "kernel":
            from IPython.display import display

            display(CellWarning(text))
        elif where == "ipython":
            print(f"warning: {plain(text)}", file=sys.stderr)
        else:
            super().warn(text)

    def draw_diagram(self, diagram: Any) -> dict[str, str]:
        from .render.svg import diagram_bundle

        return diagram_bundle(diagram)

    def batch_progress(self, asked: bool | None) -> Any:
        """A `conn.map`'s display: a widget updated in place in a kernel (one output), one line
        rewritten on stderr in terminal IPython, none in a script unless asked."""
        where = self._env()
        if where == "kernel":
            from .widgets.batch import BatchBar

            return BatchBar().show()
        if where == "ipython":
            from ..api.display.batch_line import BatchLine

            return BatchLine()
        return super().batch_progress(asked)

    def checklist(self) -> Checklist | None:
        """A doctor's checklist: a widget updated per step in a kernel; elsewhere None, the doctor's line per step."""
        if self._env() == "kernel":
            from .widgets.doctor import ChecklistWidget

            return ChecklistWidget()
        return None

    def load_view(self, live: Any) -> Any:
        """A load test's live tables: a widget the render pump redraws, in a kernel; elsewhere none."""
        if self._env() != "kernel":
            return None
        from .widgets.load import load_widget

        return load_widget(live)

    def tap_bundle(self, tap: Any) -> dict[str, Any] | None:
        """In a kernel, the tap's live view (its state line redrawn by the render pump); elsewhere None."""
        if self._env() != "kernel":
            return None
        from .widgets.tap import tap_bundle

        return tap_bundle(tap)

    def apps_default(self) -> bool:
        return (self.where or environment()) == "kernel"

    def app_bundle(self, make_view: Callable[[], Any], fallback: dict[str, Any]) -> dict[str, Any]:
        """In a kernel, the app's view with the text result under it; elsewhere the text alone.
        A view that cannot be fetched leaves the text result and one line saying why."""
        if (self.where or environment()) != "kernel":
            return fallback
        from .widgets.app import app_bundle

        try:
            view = make_view()
        except McpNotebookError as exc:
            why = f"(the tool's view could not be shown: {one_line(str(exc))})"
            return {**fallback, "text/plain": f"{fallback.get('text/plain', '')}\n{why}"}
        return app_bundle(view, fallback)

    def authorize(self, url: str, progress: AuthProgress | None = None) -> str:
        """In a kernel, the authorization widget in the waiting cell (never a browser opened
        from the kernel); in terminal IPython and scripts, the link printed and the URL read."""
        if self._env() != "kernel":
            return super().authorize(url, progress)
        from .widgets.auth import authorize_in_cell

        return authorize_in_cell(url, progress, frontend.AUTHORIZE_LIMIT)

    def show_device_code(self, code: DeviceCode, progress: AuthProgress | None = None) -> DeviceWait:
        """In a kernel, the device code's widget in the waiting cell; elsewhere the code printed."""
        if self._env() != "kernel":
            return super().show_device_code(code, progress)
        from .widgets.device import show_in_cell

        return show_in_cell(code, progress)


class CellWarning:
    """A warning shown in a cell: a marked box, and plain text where HTML is not shown."""

    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        html = f'<div style="border-left:4px solid #f08c00;padding:2px 8px;color:#d9480f">⚠ {esc(self.text)}</div>'
        return {"text/plain": f"warning: {plain(self.text)}", "text/html": html}


def ask_in_terminal(question: Question) -> None:
    """Prompts on stdin for a server question (terminal IPython, or a script run by hand); the
    server's words are shown `plain`: no escape sequence of theirs reaches the terminal."""
    who = question.connection or "the server"
    if question.kind == "sampling":
        print(f"{who} asks for a model reply (sampling/createMessage):")
        for message in question.params.get("messages") or []:
            said = message.get("content") or {}
            print(f"  [{one_line(message.get('role'))}] {clip(plain(said.get('text', json.dumps(said))), 500)}")
        reply = input("your reply (empty to decline): ")
        question.reply(reply) if reply else question.decline()
        return
    print(f"{who} asks: {plain(question.params.get('message', ''))}")
    if question.mode == "url":
        ask_for_url(question)
        return
    schema = question.schema
    content: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        default = prop.get("default")
        hint = f" [{one_line(json.dumps(default))}]" if default is not None else ""
        title = one_line(prop.get("title") or name)
        prompt = f"  {title}{'*' if name in (schema.get('required') or []) else ''}{hint}: "
        while text := input(prompt):
            try:
                content[name] = (
                    parse_value(text, prop, name) if prop.get("type") != "array" else [t.strip() for t in text.split(",")]
                )
                break
            except ToolArgumentError as exc:
                print(f"  {plain(str(exc))}; again, or empty to leave it out")
    issues = problems(with_defaults(schema, content), schema)
    choice = input(("problems: " + "; ".join(issues) + "\n" if issues else "") + "accept, decline or cancel? [a/d/c] ")
    if choice.strip().lower().startswith("a") and not issues:
        question.accept(content)
    elif choice.strip().lower().startswith("d"):
        question.decline()
    else:
        question.cancel()


def ask_for_url(question: Question) -> None:
    """A URL to open: its host on a line of its own, warnings, and a refusal where it is one."""
    check = question.url_check
    print(f"  host: {one_line(check.host) or '(none)'}")
    for warning in check.warnings:
        print(f"  warning: {one_line(warning)}")
    print(f"  URL:  {one_line(check.url)}")
    if check.refused is not None:
        print(f"  refused: {check.refused}; declined")
        question.decline()
        return
    choice = input("accept (open it yourself), decline or cancel? [a/d/c] ").strip().lower()
    {"a": question.accept, "d": question.decline}.get(choice[:1], question.cancel)()


def load(ipython: Any) -> None:
    """`%load_ext mcp_notebook`: the `%mcp` magic, its settings and its Tab completion."""
    from ..api.connecting import settings
    from .completion import ipython as completion
    from .magics.mcp import McpMagics

    ipython.register_magics(McpMagics)
    settings.register(ipython)  # %config McpNotebook.keepalive_interval = ...
    completion.register(ipython)  # Tab on %mcp lines and in conn.call_tool("...


def unload(ipython: Any) -> None:
    """Close every connection and stop the background thread."""
    from ..api.connecting import connect as api
    from ..runtime import get_runtime

    api.close_all()
    get_runtime().stop()
