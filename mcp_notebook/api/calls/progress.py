"""Requests a caller waits on: their progress state (each under a `Deadline` that progress can
extend, `base.timeouts`), and the inbox through which the session routes logs and questions
to the waiting cell.

The session thread only records (progress, log records, questions) and never prints;
the caller (the cell's thread, or its awaiting coroutine) displays what it finds at its
next wake-up. A progress notification's numbers are the server's: any JSON number (an
integer of 400 digits, NaN) is recorded as a float a bar can be drawn from, or not at all.
The inbox is fed by the server, so it is bounded: at most INBOX_PROGRESS progress reports
wait in it (a caller may be held for long: a slow progress callback, a question typed at a
terminal); beyond that a report is only counted (`progress_skipped`), and the caller's next
look adds the latest one if it missed it, so a callback always ends on the newest state.
Log lines are bounded by CELL_LOG_LINES, questions by the handlers' bound.
"""

from __future__ import annotations

import itertools
import math
import queue
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...base.public import public
from ...base.text import clip, one_line, plain
from ...base.timeouts import Deadline

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
CELL_LOG_LINES = 20  # log lines a waiting call shows one by one; the rest are only counted there
INBOX_PROGRESS = 1000  # progress reports waiting for the caller, at most; the rest are only counted

_tokens = itertools.count(1)


def new_token() -> str:
    """A fresh progress token (unique in this process)."""
    return f"mcp-notebook-{next(_tokens)}"


@dataclass
class ProgressState:
    """The latest `notifications/progress` for one request (written on the session thread)."""

    progress: float = 0.0
    total: float | None = None
    message: str | None = None
    updates: int = 0

    def fraction(self) -> float | None:
        return min(1.0, max(0.0, self.progress / self.total)) if self.total else None

    def line(self, width: int = 30) -> str:
        """`[#######.......] 3/5 message` as one text line."""
        frac = self.fraction()
        if frac is None and not self.progress and self.message:
            return clip(one_line(self.message), 90)  # status words only (a task's status), no count to show
        if frac is None:
            bar = f"{self.progress:g} done"
        else:
            filled = int(frac * width)
            bar = "[" + "#" * filled + "." * (width - filled) + f"] {self.progress:g}/{self.total:g}"
        return bar + (f" {clip(one_line(self.message), 60)}" if self.message else "")


@public
@dataclass
class LogRecord:
    """One `notifications/message` from the server."""

    level: str
    data: Any
    logger: str | None = None
    wall: float = field(default_factory=time.time)

    def line(self, connection: str = "") -> str:
        where = f"{connection} " if connection else ""
        source = f" {one_line(self.logger)}" if self.logger else ""
        text = self.data if isinstance(self.data, str) else repr(self.data)
        return f"[{where}{one_line(self.level)}{source}] {clip(plain(text), 500)}"


class Caller:
    """A request whose caller (a thread, or a coroutine) is waiting: it gets progress, logs and questions.

    `log_level` is the level the request itself asked for (modern: request-scoped logs). It
    takes the first CELL_LOG_LINES log records for its cell and counts the rest in
    `logs_not_shown` (they stay in the connection's log store, never in the inbox).
    """

    takes_questions = True  # a server's question (elicitation, sampling) may be shown where it waits

    def __init__(self, method: str, deadline: Deadline, token: str | None, log_level: str | None = None) -> None:
        self.method = method
        self.deadline = deadline
        self.token = token
        self.log_level = log_level
        self.progress = ProgressState()
        self.inbox: queue.SimpleQueue[tuple[str, Any]] = queue.SimpleQueue()
        self.logs_shown = 0
        self.logs_not_shown = 0
        self.progress_skipped = 0  # reports not put in the inbox: it held INBOX_PROGRESS already
        self._progress_put = 0  # written on the session thread only
        self._progress_taken = 0  # written on the caller's thread only
        self._skipped_seen = 0  # caller's thread: progress_skipped at its last look

    def on_progress(self, params: dict[str, Any]) -> None:
        """Session thread: record a progress notification and reset the idle timeout."""
        state = self.progress
        value = _number(params.get("progress"))
        if value is not None:
            state.progress = value
        state.total = _number(params.get("total"))
        message = params.get("message")
        state.message = message if isinstance(message, str) else None
        state.updates += 1
        self.deadline.touch()
        if self._progress_put - self._progress_taken >= INBOX_PROGRESS:
            self.progress_skipped += 1
            return
        self._progress_put += 1
        self.inbox.put(("progress", (state.progress, state.total, state.message)))  # for callbacks: every one

    def take_log(self, record: LogRecord) -> bool:
        """Session thread: post a log record for the cell while it has room for one more line;
        else count it, and False (the record was not shown in the cell)."""
        if self.logs_shown >= CELL_LOG_LINES:
            self.logs_not_shown += 1
            return False
        self.logs_shown += 1
        self.post("log", record)
        return True

    def post(self, kind: str, payload: Any) -> None:
        """Session thread: hand a log record ("log"), a question ("question") or a progress report
        ("progress") to the caller."""
        self.inbox.put((kind, payload))

    def drain(self) -> list[tuple[str, Any]]:
        """Caller's thread (the only one that takes from the inbox); ends with the latest progress
        report when some were skipped since the last look and the inbox does not end with it."""
        inbox, items = self.inbox, []
        skipped = self.progress_skipped
        while not inbox.empty():
            items.append(inbox.get_nowait())
        reports = [payload for kind, payload in items if kind == "progress"]
        self._progress_taken += len(reports)
        if skipped != self._skipped_seen:
            self._skipped_seen = skipped
            state = self.progress
            latest = (state.progress, state.total, state.message)
            if not reports or reports[-1] != latest:
                items.append(("progress", latest))
        return items


class TextProgress:
    """The terminal fallback: one line on stderr, rewritten in place."""

    def __init__(self, label: str, stream: Any = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.shown = False

    def update(self, state: ProgressState) -> None:
        self.stream.write(f"\r{self.label}: {state.line()}\x1b[K")
        self.stream.flush()
        self.shown = True

    def close(self, failed: bool = False) -> None:
        if self.shown:
            self.stream.write(" (failed)\n" if failed else "\n")
            self.stream.flush()


class CallbackProgress:
    """A user callback `fn(progress, total, message)`, called from the caller's thread."""

    def __init__(self, fn: Callable[[float, float | None, str | None], Any]) -> None:
        self.fn = fn

    def report(self, progress: float, total: float | None, message: str | None) -> None:
        """One progress notification, in the order they arrived."""
        self.fn(progress, total, message)

    def update(self, state: ProgressState) -> None:
        self.report(state.progress, state.total, state.message)

    def close(self, failed: bool = False) -> None:
        pass


def _number(value: Any) -> float | None:
    """A JSON number as a float (one too large for a float is infinite); None for NaN and non-numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int) and abs(value) > sys.float_info.max:
        return math.inf if value > 0 else -math.inf
    return None if math.isnan(value) else float(value)
