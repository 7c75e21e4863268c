"""What a connection sent, and the callbacks and users the feature tests drive calls with: Ctrl-C on
the first progress report, a user at a terminal, a watcher of one notification."""

from __future__ import annotations

import _thread
import threading
from collections.abc import Callable
from typing import Any

import mcp_notebook
from mcp_notebook.notebook import frontend as _display


def ctrl_c_on_first_report():
    """A progress callback that presses Ctrl-C once the call is under way. It runs in the
    caller's (main) thread, so the KeyboardInterrupt lands in the waiting call."""
    pressed = []

    def press(*_):
        if not pressed:
            pressed.append(True)
            _thread.interrupt_main()

    return press


def sent(conn, method=None, kind=None):
    return [
        e.message for e in conn.trace.frames("out") if (method is None or e.method == method) and (kind is None or e.kind == kind)
    ]


def notice(
    conn: mcp_notebook.Connection, method: str, match: Callable[[dict[str, Any]], bool] = lambda params: True
) -> threading.Event:
    """An event set when the server sends notification `method` with params that `match`.

    A user notification handler runs after the client's own bookkeeping for the frame, so
    when the event is set, `conn.logs`, the update counts and the list caches have seen it.
    """
    arrived = threading.Event()

    def seen(params: dict[str, Any]) -> None:
        if match(params):
            arrived.set()

    conn.on_notification(method, seen)
    return arrived


def meta_of(frame):
    return frame["params"]["_meta"]


class Terminal:
    """A terminal user: stdin is a tty, and each question is answered by `answer(question)`."""

    def __init__(self, monkeypatch, shown_as, answer):
        self.asked = []
        self.answer = answer
        user = self

        class AtTheTerminal(_display.Presenter):
            def ask_in_terminal(self, question):
                user.ask(question)

        class TerminalFrontEnd(_display.NotebookFrontEnd):
            def presenter(self, label, progress, connection):
                return AtTheTerminal(label, progress, connection, where="script")

        shown_as("script", TerminalFrontEnd())
        monkeypatch.setattr("sys.stdin", self)

    def isatty(self):
        return True

    def ask(self, question):
        self.asked.append((threading.current_thread(), question))
        self.answer(question)
