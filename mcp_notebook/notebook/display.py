"""Showing a waiting call's progress, log messages and server questions in the caller's cell.

Runs in the caller's thread only. In a Jupyter kernel: an ipywidgets progress bar and
question widgets; in terminal IPython: a text bar on stderr and prompts on stdin; in a
plain script: nothing unless asked (`progress=True`), logs go to the `logging` module,
and questions are prompted for when stdin is a terminal, declined otherwise.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from ..api.progress import Call, CallbackProgress, LogRecord, TextProgress
from ..api.server_requests import Question, with_defaults
from ..api.validate import parse_value, problems
from .render import clip

LOG = logging.getLogger("mcp_notebook.server")


def environment() -> str:
    """"kernel" (widgets can be drawn), "ipython" (a terminal shell) or "script"."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return "script"
    shell = get_ipython()
    if shell is None:
        return "script"
    return "kernel" if getattr(shell, "kernel", None) is not None else "ipython"


class Presenter:
    """The display side of one waiting call."""

    def __init__(self, label: str, progress: Any, connection: str) -> None:
        self.label = label
        self.option = progress
        self.connection = connection
        self.env: str | None = None
        self.display: Any = None
        self.open_questions: list[Question] = []

    def _where(self) -> str:
        if self.env is None:
            self.env = environment()
        return self.env

    def _progress_display(self) -> Any:
        if self.display is None:
            if callable(self.option):
                self.display = CallbackProgress(self.option)
            elif self.option is True or self._where() != "script":
                if self._where() == "kernel":
                    from .interaction_widgets import ProgressBar

                    self.display = ProgressBar(self.label).show()
                else:
                    self.display = TextProgress(self.label)
        return self.display

    def attend(self, call: Call, seen: int) -> int:
        """Show what arrived since the last look; the progress updates seen so far."""
        every_update = callable(self.option)  # a callback gets each report; a bar only the latest
        for kind, payload in call.drain():
            if kind == "log":
                self.log(payload)
            elif kind == "question":
                self.ask(payload, call)
            elif kind == "progress" and every_update:
                self._progress_display().report(*payload)
        if self.open_questions:
            call.deadline.touched = time.monotonic()  # a user answering is not a server being slow
            self.open_questions = [q for q in self.open_questions if not q.answered]
        state = call.progress
        if state.updates != seen and not every_update and self._progress_display() is not None:
            self.display.update(state)
        return state.updates

    def close(self, failed: bool) -> None:
        if self.display is not None:
            self.display.close(failed)

    def log(self, record: LogRecord) -> None:
        if self._where() == "script":
            level = {"notice": "INFO", "critical": "CRITICAL", "alert": "CRITICAL", "emergency": "CRITICAL"}.get(
                record.level, record.level.upper())
            LOG.log(logging.getLevelName(level) if isinstance(logging.getLevelName(level), int) else logging.INFO,
                    "%s", record.line(self.connection))
        else:
            print(record.line(self.connection))

    def ask(self, question: Question, call: Call | None = None) -> None:
        question.connection = self.connection
        if self._where() == "kernel":
            from IPython.display import display

            from .interaction_widgets import question_form

            display(question_form(question).widget)
            self.open_questions.append(question)
        elif sys.stdin is not None and sys.stdin.isatty():
            ask_in_terminal(question)
        else:
            question.decline()


def ask_in_terminal(question: Question) -> None:
    """Prompts on stdin for a server question (terminal IPython, or a script run by hand)."""
    who = question.connection or "the server"
    if question.kind == "sampling":
        print(f"{who} asks for a model reply (sampling/createMessage):")
        for message in question.params.get("messages") or []:
            content = message.get("content") or {}
            print(f"  [{message.get('role')}] {clip(content.get('text', json.dumps(content)), 500)}")
        reply = input("your reply (empty to decline): ")
        question.reply(reply) if reply else question.decline()
        return
    print(f"{who} asks: {question.params.get('message', '')}")
    if question.mode == "url":
        print(f"  open this URL: {question.params.get('url')}")
        choice = input("accept (open it yourself), decline or cancel? [a/d/c] ").strip().lower()
        {"a": question.accept, "d": question.decline}.get(choice[:1], question.cancel)()
        return
    schema = question.schema
    content: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        default = prop.get("default")
        hint = f" [{json.dumps(default)}]" if default is not None else ""
        text = input(f"  {prop.get('title') or name}{'*' if name in (schema.get('required') or []) else ''}{hint}: ")
        if text:
            content[name] = parse_value(text, prop) if prop.get("type") != "array" else [t.strip() for t in text.split(",")]
    issues = problems(with_defaults(schema, content), schema)
    choice = input(("problems: " + "; ".join(issues) + "\n" if issues else "") + "accept, decline or cancel? [a/d/c] ")
    if choice.strip().lower().startswith("a") and not issues:
        question.accept(content)
    elif choice.strip().lower().startswith("d"):
        question.decline()
    else:
        question.cancel()
