"""The seam between the API and whatever shows things to a person: a `FrontEnd`.

A waiting call shows its progress, the server's log lines and the server's questions
through a `Presenter` the front end makes for it; `log_panel()` and
`subscriptions_panel()` ask the front end for a live view, `draw_diagram()` for a picture; a
configured command asks it for consent before it first runs, and a configured URL before it is
first sent values from this machine (`ask_consent`), a configured entry's
inputs are asked through it (`ask_inputs`), and warnings (tools changed since they were pinned) go
to `warn`; a `doctor()` shows its steps as they complete through `checklist()`, a `conn.map` its
progress through `batch_progress()`, a tap shown as a value its live view through `tap_bundle()`. The default
here is for plain scripts: progress only when asked (`progress=True` or a callback), log lines
to the `logging` module, questions declined, no consent (`consent=True` is the script's way),
inputs prompted for on a terminal only, warnings logged, panels and diagrams as text, a
doctor's steps a line each on stdout. The notebook's front end (widgets in
a kernel, text and prompts in terminal IPython) is plugged in from above with `use()`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...auth.device import DeviceCode, DeviceWait
    from ...configs.consent import ConsentRequest
    from ...configs.entries import ServerEntry
    from ...configs.interpolate import InputRequest
    from ..calls.progress import Caller, LogRecord
    from ..client_side.answers import Question
    from .auth_progress import AuthProgress

LOG = "mcp_notebook.server"  # the loggers' names: `logging` is imported with the first line logged
WARN = "mcp_notebook"
AUTHORIZE_LIMIT = 600.0  # seconds a person has to authorize in a browser
PYTHON_LEVELS = {"notice": "INFO", "critical": "CRITICAL", "alert": "CRITICAL", "emergency": "CRITICAL"}


class Presenter:
    """The display side of one waiting call, for a plain script; front ends extend it.

    `attend` runs in the caller's thread at each wake-up: it shows what arrived since the
    last look. Subclasses change where things go: `progress_display`, `log`, `more_logs`, `ask`.
    A call shows its first log lines one by one, then one "... and N more" line (`more_logs`).
    """

    def __init__(self, label: str, progress: Any, connection: str) -> None:
        self.label = label
        self.option = progress
        self.connection = connection
        self.display: Any = None
        self.open_questions: list[Question] = []
        self.logs_not_shown = 0

    def progress_display(self) -> Any:
        """What shows progress (made on first use), or None for no display."""
        if self.display is None:
            from ..calls.progress import CallbackProgress, TextProgress

            if callable(self.option):
                self.display = CallbackProgress(self.option)
            elif self.option is True:
                self.display = TextProgress(self.label)
        return self.display

    def attend(self, call: Caller, seen: int) -> int:
        """Show what arrived since the last look; the progress updates seen so far."""
        every_update = callable(self.option)  # a callback gets each report; a bar only the latest
        for kind, payload in call.drain():
            if kind == "log":
                self.log(payload)
            elif kind == "question":
                self.ask(payload, call)
            elif kind == "progress" and every_update:
                self.progress_display().report(*payload)
        if self.open_questions:
            call.deadline.touched = time.monotonic()  # a user answering is not a server being slow
            self.open_questions = [q for q in self.open_questions if not q.answered]
        if call.logs_not_shown != self.logs_not_shown:
            self.logs_not_shown = call.logs_not_shown
            self.more_logs(self.logs_not_shown, final=False)
        state = call.progress
        if state.updates != seen and not every_update and self.progress_display() is not None:
            self.display.update(state)
        return state.updates

    def close(self, failed: bool) -> None:
        if self.logs_not_shown:
            self.more_logs(self.logs_not_shown, final=True)
        if self.display is not None:
            self.display.close(failed)

    def log(self, record: LogRecord) -> None:
        import logging

        level = logging.getLevelName(PYTHON_LEVELS.get(record.level, record.level.upper()))
        logging.getLogger(LOG).log(level if isinstance(level, int) else logging.INFO, "%s", record.line(self.connection))

    def more_logs(self, count: int, final: bool) -> None:
        """`count` log lines of this call were not shown one by one; a script says so once, at the end."""
        if final:
            import logging

            logging.getLogger(LOG).info(
                "%s", more_logs_line(count, self.connection, "log_records(unrouted_only=True) has the latest")
            )

    def ask(self, question: Question, call: Caller | None = None) -> None:
        """A script has nobody to ask: the question is declined."""
        question.connection = self.connection
        question.decline()


def more_logs_line(count: int, connection: str, see: str) -> str:
    """The one line that stands for the log lines a call did not show one by one (`see`: where they are)."""
    return f"[{connection}] … and {count:,} more log messages, not shown here ({see})"


class TextPanel:
    """A panel where no live view can be drawn: its repr is the data, as text, now."""

    def __init__(self, render: Any) -> None:
        self._render = render

    def text(self) -> str:
        return str(self._render())

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())


class FrontEnd:
    """What the API asks of whatever shows things; this one serves plain scripts."""

    def presenter(self, label: str, progress: Any, connection: str) -> Presenter:
        return Presenter(label, progress, connection)

    def log_panel(self, connection: Any, *, level: str | None, unrouted_only: bool, rows: int) -> Any:
        from .panels import logs_snapshot

        return TextPanel(lambda: logs_snapshot(connection, last=rows, level=level, unrouted_only=unrouted_only)[0])

    def subscriptions_panel(self, connection: Any, uri: str | None, *, read: bool) -> Any:
        from .panels import subscriptions_snapshot

        return TextPanel(lambda: subscriptions_snapshot(connection)[0])

    def ask_consent(self, request: ConsentRequest) -> bool | None:
        """Run this configured command, or connect to this configured URL with values from this
        machine? True: yes; False: the user cancelled; None: nobody could be asked (a script: it
        passes consent=True once its author has read the entry)."""
        return None

    def ask_inputs(self, requests: list[InputRequest], entry: ServerEntry) -> Mapping[str, str] | None:
        """Values for a configured entry's inputs, or None (cancelled, or nobody to ask)."""
        if sys.stdin is None or not sys.stdin.isatty():
            return None
        return prompt_inputs(requests, entry)

    def warn(self, text: str) -> None:
        """Something the user should see now (tools changed since they were pinned)."""
        import logging

        logging.getLogger(WARN).warning("%s", text)

    def draw_diagram(self, diagram: Any) -> dict[str, str]:
        """A display bundle of a sequence diagram (`display.diagram.Diagram`); here, its text."""
        return {"text/plain": diagram.text()}

    def batch_progress(self, asked: bool | None) -> Any:
        """The one display of a `conn.map` under way (an `api.batch.progress.BatchDisplay`), or None:
        here, none unless asked (`progress=True`), then one line on stderr."""
        if not asked:
            return None
        from .batch_line import BatchLine

        return BatchLine()

    def checklist(self) -> Any:
        """The live view of a `doctor()` under way (a `diagnosis.report.Checklist`, the layer
        above this one), or None: here, the doctor's own, a line per step on stdout."""
        return None

    def load_view(self, live: Any) -> Any:
        """The live view of a load test under way (`workloads.run.Live`, the layer above: its
        `key()`, `text()` and `html()`), or None: here none, the report says it all at the end.
        What it returns has `done()`, called once the load has ended."""
        return None

    def tap_bundle(self, tap: Any) -> dict[str, Any] | None:
        """The display bundle of a tap shown as a value (`taps.tap.Tap`, a layer above), or None
        for its own text and HTML, as they are now: here, None."""
        return None

    def apps_default(self) -> bool:
        """Whether connections declare MCP Apps unless told (only where views can be drawn)."""
        return False

    def app_bundle(self, make_view: Callable[[], Any], fallback: dict[str, Any]) -> dict[str, Any]:
        """How a tool's view (MCP Apps) displays: here, as its text result (`fallback`)."""
        return fallback

    def authorize(self, url: str, progress: AuthProgress | None = None) -> str:
        """Ask the user to authorize at `url`; the URL their browser was sent back to. Runs in a
        worker thread while the request that needed it waits (`progress`: the flow's steps, for
        a front end that shows them). Here: a browser opened where there is a display, its
        redirect caught by the Jupyter server's callback (a terminal of a Jupyter server) or on
        the loopback address, and the terminal, where there is one, to paste the URL into when
        the browser is elsewhere. A flow given up stops waiting."""
        import contextlib
        import webbrowser
        from urllib.parse import urlsplit

        from ...auth.loopback import has_display, wait_for_redirect
        from ...auth.redirects import receiver_for
        from ...base.errors import AuthorizationError
        from ...base.text import plain
        from .auth_progress import abandoned

        terminal = sys.stdin.isatty() and sys.stdout.isatty()
        display = has_display()
        if not (terminal or display):
            raise AuthorizationError(
                "the server wants OAuth authorization and there is no terminal or browser to ask in: "
                "pass auth=OAuth(authorize=callback) (the callback gets the URL and returns where the browser ended)"
            )
        receiver = receiver_for(url)
        with contextlib.closing(receiver) if receiver is not None else contextlib.nullcontext():
            opened = display and webbrowser.open(url)
            where = "in the browser that just opened" if opened else "in a browser"
            host = plain(urlsplit(url).netloc)
            ask = f"Authorize at {host} {where}; if it runs on another machine, paste the URL it ends on."
            print(f"{ask}\n  {plain(url)}", flush=True)  # noqa: T201 - the terminal asks
            answer = wait_for_redirect(receiver, paste=terminal, limit=AUTHORIZE_LIMIT, stop=abandoned)
        if not answer:
            raise AuthorizationError(f"nobody came back from the authorization page within {AUTHORIZE_LIMIT / 60:g} minutes")
        return answer

    def show_device_code(self, code: DeviceCode, progress: AuthProgress | None = None) -> DeviceWait:
        """Show a device grant's user code and where to enter it (RFC 8628) while the flow polls;
        runs in a worker thread. Here: printed (on stderr when stdout is not a terminal). Ctrl-C
        ends the wait (the request given up), so there is no Cancel to offer."""
        from ...base.text import plain

        out = sys.stdout if sys.stdout.isatty() or not sys.stderr.isatty() else sys.stderr
        where = plain(code.url)
        lines = [f"To authorize, open {where} on any device"]
        if code.verification_uri_complete is None or code.user_code not in code.verification_uri_complete:
            lines[0] += f" and enter the code {plain(code.user_code)}"
        else:
            lines.append(f"  (the code there is {plain(code.user_code)}; it is good for {code.expires_in / 60:g} minutes)")
        print("\n".join(lines), file=out, flush=True)
        return ShownCode()


class ShownCode:
    """A device code shown as text: nothing to cancel, and the outcome is the call's own."""

    def cancelled(self) -> bool:
        return False

    def finish(self, note: str, failed: bool) -> None:
        return None


def prompt_inputs(requests: list[InputRequest], entry: ServerEntry) -> dict[str, str]:
    """Each input asked on the terminal; password inputs without echo. Nothing is kept."""
    import getpass

    from ...base.text import plain

    answers = {}
    for request in requests:
        hint = f" [{request.default}]" if request.default and not request.password else ""
        choices = f" ({'/'.join(request.options)})" if request.options else ""
        prompt = plain(f"{entry.name}: {request.description}{choices}{hint}: ")
        value = getpass.getpass(prompt) if request.password else input(prompt)
        answers[request.id] = value or request.default or ""
    return answers


_current: FrontEnd | None = None
_make: Callable[[], FrontEnd] = FrontEnd


def use(front_end: FrontEnd | Callable[[], FrontEnd]) -> None:
    """Show things through `front_end` from now on (the package plugs in the notebook's); a
    callable that makes one is called when the API first asks, so its imports wait until then."""
    global _current, _make
    if isinstance(front_end, FrontEnd):
        _current = front_end
    else:
        _current, _make = None, front_end


def current() -> FrontEnd:
    global _current
    if _current is None:
        _current = _make()
    return _current
