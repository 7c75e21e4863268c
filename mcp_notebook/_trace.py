"""The trace: every frame in both directions and the transport events around them.

A bounded ring buffer; the oldest entries fall out and are counted as dropped.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any

IN = "in"
OUT = "out"
EVENT = "event"

DEFAULT_CAPACITY = 10_000


@dataclass(frozen=True, slots=True)
class TraceEntry:
    """One frame (direction `in` or `out`) or one transport event (direction `event`)."""

    seq: int
    monotonic: float
    wall: float
    direction: str
    kind: str
    method: str | None = None
    id: Any = None
    size: int = 0
    raw: str | None = None
    message: Any = None
    note: str | None = None
    detail: dict[str, Any] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        return asdict(self)


class Trace:
    """A bounded, thread-safe timeline of frames and events for one connection."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._entries: deque[TraceEntry] = deque(maxlen=capacity)
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self.dropped = 0

    @property
    def capacity(self) -> int:
        return self._entries.maxlen or 0

    def _append(self, entry: TraceEntry) -> TraceEntry:
        with self._lock:
            if len(self._entries) == self._entries.maxlen:
                self.dropped += 1
            self._entries.append(entry)
        return entry

    def frame(
        self,
        direction: str,
        kind: str,
        raw: str,
        message: Any = None,
        *,
        method: str | None = None,
        id: Any = None,
        note: str | None = None,
    ) -> TraceEntry:
        """Record a frame as it crossed the wire."""
        return self._append(
            TraceEntry(
                next(self._seq), time.monotonic(), time.time(), direction, kind,
                method, id, len(raw.encode()) if not raw.isascii() else len(raw), raw, message, note,
            )
        )

    def event(self, name: str, note: str | None = None, **detail: Any) -> TraceEntry:
        """Record a transport or session event (spawn, exit, stderr line, ...)."""
        return self._append(
            TraceEntry(next(self._seq), time.monotonic(), time.time(), EVENT, name, note=note, detail=detail)
        )

    def entries(self) -> list[TraceEntry]:
        with self._lock:
            return list(self._entries)

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self._entries)

    def filter(
        self,
        *,
        direction: str | None = None,
        kind: str | None = None,
        method: str | None = None,
    ) -> list[TraceEntry]:
        """Entries matching every criterion given."""
        return [
            e
            for e in self.entries()
            if (direction is None or e.direction == direction)
            and (kind is None or e.kind == kind)
            and (method is None or e.method == method)
        ]

    def frames(self, direction: str | None = None) -> list[TraceEntry]:
        """Only the frames (no events), optionally in one direction."""
        return [e for e in self.entries() if e.direction != EVENT and (direction is None or e.direction == direction)]

    def to_records(self) -> list[dict[str, Any]]:
        return [e.to_record() for e in self.entries()]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.dropped = 0

    def __repr__(self) -> str:
        return f"<Trace {len(self)} entries, {self.dropped} dropped, capacity {self.capacity}>"
