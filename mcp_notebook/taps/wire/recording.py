"""The bounded on-disk recording of one relayed session: encoded records (JSON lines), so a
notebook that attaches late sees the session from its start.

The rule: the recording never grows past its bound, and keeps what matters most. The session's
start (the handshake, the first frames) goes to `head.jsonl` up to `head_bytes`; everything
after goes to a ring of segment files (`tail-000001.jsonl`, ...) of `segment_bytes` each,
oldest deleted first once head and ring together would pass `total_bytes`. So the middle of a
long session is what is dropped; `read_recording` says how many records with a DROPPED event
where the sequence numbers jump. Each recording is a folder of its own; starting one prunes the
name's oldest so only the newest `keep` remain. Written by one thread (the relay's recorder).
"""

from __future__ import annotations

import os
import re
import shutil
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from .records import DROPPED, EVENT, MAX_RECORD_BYTES, Record, decode

HEAD = "head.jsonl"
TAIL = "tail-{:06d}.jsonl"
_TAIL = re.compile(r"tail-(\d{6,})\.jsonl\Z")
HEAD_BYTES = 8 * 1024 * 1024
SEGMENT_BYTES = 4 * 1024 * 1024
TOTAL_BYTES = 64 * 1024 * 1024
KEEP = 5


class Recording:
    """Appends encoded records to one session's folder, within its bounds."""

    def __init__(
        self,
        folder: Path,
        *,
        head_bytes: int = HEAD_BYTES,
        segment_bytes: int = SEGMENT_BYTES,
        total_bytes: int = TOTAL_BYTES,
    ) -> None:
        if segment_bytes <= 0 or head_bytes < 0 or head_bytes + 2 * segment_bytes > total_bytes:
            raise ValueError("a recording's total must hold its head and at least two segments")
        self.folder = folder
        self._head_left = head_bytes
        self._segment_bytes = segment_bytes
        self._ring_bytes = total_bytes - head_bytes
        folder.mkdir(mode=0o700)
        self._file: BinaryIO = open(folder / HEAD, "ab", buffering=256 * 1024, opener=_private)
        self._in_head = True
        self._segments: deque[tuple[int, int]] = deque()  # (number, bytes) of the tail's files, oldest first
        self._segment_left = 0
        self._ring_used = 0
        self.closed = False

    def write(self, line: bytes) -> None:
        """Append one encoded record (ending in a newline)."""
        if self._in_head:
            if len(line) <= self._head_left:
                self._file.write(line)
                self._head_left -= len(line)
                return
            self._in_head = False  # the head is full: the rest goes to the ring
            self._new_segment()
        elif len(line) > self._segment_left and self._segment_left < self._segment_bytes:
            self._new_segment()
        self._file.write(line)
        self._segment_left -= len(line)
        self._ring_used += len(line)
        number, size = self._segments[-1]
        self._segments[-1] = (number, size + len(line))
        while len(self._segments) > 1 and self._ring_used > self._ring_bytes:
            oldest, size = self._segments.popleft()
            self._ring_used -= size
            (self.folder / TAIL.format(oldest)).unlink(missing_ok=True)

    def flush(self) -> None:
        """What was written, readable by others."""
        self._file.flush()

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._file.close()

    def _new_segment(self) -> None:
        self._file.close()
        number = self._segments[-1][0] + 1 if self._segments else 1
        self._segments.append((number, 0))
        self._segment_left = self._segment_bytes
        self._file = open(self.folder / TAIL.format(number), "ab", buffering=256 * 1024, opener=_private)


def _private(path: str, flags: int) -> int:
    return os.open(path, flags, 0o600)


def start(parent: Path, session: str, started_ns: int, keep: int = KEEP, **bounds: int) -> Recording:
    """A new recording in `parent` (the name's folder), after pruning all but the newest `keep - 1`."""
    old = sorted(p for p in parent.iterdir() if p.is_dir() and not p.is_symlink()) if parent.exists() else []
    for folder in old[: max(0, len(old) - (keep - 1))]:
        shutil.rmtree(folder, ignore_errors=True)
    return Recording(parent / f"{started_ns:020d}-{os.getpid()}-{session}", **bounds)


def read_recording(folder: Path | str) -> Iterator[Record]:
    """The records of a recording, in order. Where sequence numbers jump (the dropped middle, or
    a segment deleted while reading) a DROPPED event says how many are missing; a torn last line
    (the relay is still writing, or died mid-write) and undecodable lines are skipped."""
    folder = Path(folder)
    numbered: list[tuple[int, Path]] = []
    try:
        for path in folder.iterdir():
            match = _TAIL.match(path.name)
            if match:
                numbered.append((int(match.group(1)), path))
    except FileNotFoundError:
        return
    last: Record | None = None
    for path in [folder / HEAD] + [path for _, path in sorted(numbered)]:
        for record in _read_file(path):
            if last is not None and record.seq > last.seq + 1:
                first, end = last.seq + 1, record.seq - 1
                detail = {"count": end - first + 1, "first": first, "last": end, "where": "recording"}
                yield Record(first, EVENT, record.wall, record.monotonic, name=DROPPED, detail=detail)
            if last is None or record.seq > last.seq:
                yield record
                last = record


def _read_file(path: Path) -> Iterator[Record]:
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        return
    with handle:
        while True:
            line = handle.readline(MAX_RECORD_BYTES + 1)
            if not line.endswith(b"\n"):
                return  # end of file, a torn last line, or a line past the bound
            try:
                yield decode(line)
            except ValueError:
                continue
