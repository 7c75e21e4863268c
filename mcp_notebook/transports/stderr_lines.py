"""A stdio server's stderr, line by line: a bounded tail of its last words, and a trace event
per line.

The rule: what a server writes while it answers our era probe is about the probe, not news
of its own (an SDK 1.x server logs some ninety lines of validation errors for
`server/discover`), so those lines are traced marked `during="era probe"` and kept out of
the tail, which status and health show as the server's last words. Should the server exit
before the era is settled, they are its last words after all, and join the tail.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any

from ..base.plural import counted
from .lines import LineSplitter

STDERR_LINES = 200
MAX_LINE_BYTES = 64 * 1024


class StderrLines:
    """Splits the chunks read from a child's stderr into lines; keeps the last `STDERR_LINES`."""

    def __init__(self, events: Callable[..., Any]) -> None:
        self.tail: deque[str] = deque(maxlen=STDERR_LINES)
        self._events = events
        self._splitter = LineSplitter(MAX_LINE_BYTES)
        self._probed: deque[str] | None = None  # lines written while the era probe is answered

    def feed(self, chunk: bytes) -> None:
        for line in self._splitter.feed(chunk):
            self._line(line)

    def end(self) -> None:
        """The pipe is closed: an unterminated last line is a line too."""
        self._line(self._splitter.rest())

    def drop_partial(self) -> None:
        self._splitter.rest()

    def _line(self, line: bytes | bytearray) -> None:
        text = line.decode("utf-8", errors="replace").rstrip("\r")
        if not text:
            return
        if self._probed is not None:
            self._probed.append(text)
            self._events("stderr", line=text, during="era probe")
        else:
            self.tail.append(text)
            self._events("stderr", line=text)

    def probe_began(self) -> None:
        self._probed = deque(maxlen=STDERR_LINES)

    def probe_over(self, drain: Callable[[], None]) -> None:
        """The era is settled, the server alive: what it wrote meanwhile stays out of the tail.
        `drain` reads the pipe first: what the server wrote before the answer we just read is there."""
        if self._probed is not None:
            drain()
        probed, self._probed = self._probed, None
        if probed:
            self._events("probe-stderr", note=f"{counted(len(probed), 'stderr line')} written while probed, not its last words")

    def exited(self) -> None:
        """The server exited: what it wrote while probed, if the probe was not over, is its last words."""
        probed, self._probed = self._probed, None
        if probed:
            self.tail.extend(probed)
