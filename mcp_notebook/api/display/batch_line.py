"""The terminal's display of a `conn.map` under way: one line on stderr, rewritten in place as the
batch goes, then its summary line. Never a line per row."""

from __future__ import annotations

import sys
from typing import Any, Protocol


class Stats(Protocol):
    def line(self) -> str: ...


class BatchLine:
    """One line on stderr, rewritten in place, ended by the batch's summary."""

    def __init__(self, stream: Any = None) -> None:
        self.stream = stream or sys.stderr

    def update(self, stats: Stats) -> None:
        self.stream.write(f"\r{stats.line()}\x1b[K")
        self.stream.flush()

    def close(self, summary: str, failed: bool) -> None:
        self.stream.write(f"\r{summary}\x1b[K\n")
        self.stream.flush()
