"""The relay's recorder: turns the bytes the relay moved into records, off the relayed path.

The relay's pump threads hand it `(side, time, bytes)` and go back to relaying; the recorder's
own thread splits each direction into lines (a frame is a line without its "\\n"; a partial
line waits, bounded: a longer line is recorded clipped, with its size in detail), makes the
records (seq from 1, the session's HELLO first), replaces secrets in what they carry, and hands
each encoded record to the on-disk recording and to the notebook's feed. The rules: nothing here
ever blocks a pump (their hand-off is a queue whose backlog is bounded in bytes: past it, bytes
are dropped, counted and said in a DROPPED event), and no secret reaches a record.
"""

from __future__ import annotations

import json
import os
import select
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...transports.urls import REDACTED, is_secret_name
from ..wire.recording import Recording
from ..wire.records import CLIENT, DROPPED, EVENT, HELLO, SERVER, STDERR, Record, encode
from .feed import NotebookFeed

MIN_SECRET = 4  # shorter values are not worth redacting (the session's Redactor's floor)
CLIP_BYTES = 4 * 1024 * 1024  # a line longer than this is recorded clipped (still relayed whole)
BACKLOG_BYTES = 64 * 1024 * 1024  # bytes handed over and not yet recorded, at most
INTERVAL = 0.01  # while bytes flow, the thread takes them this often
QUIET_POLLS = 10  # polls with nothing handed over before the thread sleeps until the next hand-off
LINGER = 0.5  # at the end, how long records still queued for the notebook may take to go
_NOT_SECRETS = frozenset({"true", "false", "null", "none", "yes", "no"})


def env_secrets(env: Mapping[str, str], names: Iterable[str] = ()) -> list[str]:
    """The values of `env`'s credential-looking variables (and of those `names`), worth redacting."""
    wanted = set(names)
    return [
        value
        for key, value in env.items()
        if (key in wanted or is_secret_name(key)) and len(value) >= MIN_SECRET and value.lower() not in _NOT_SECRETS
    ]


def argv_secrets(argv: Sequence[str]) -> list[str]:
    """Values given to credential-looking options: `--api-key VALUE`, `--token=VALUE`."""
    found: list[str] = []
    for index, arg in enumerate(argv):
        if not arg.startswith("-"):
            continue
        option, eq, value = arg.partition("=")
        if not is_secret_name(option.lstrip("-")):
            continue
        if not eq and index + 1 < len(argv) and not argv[index + 1].startswith("-"):
            value = argv[index + 1]
        if len(value) >= MIN_SECRET:
            found.append(value)
    return found


class Scrubber:
    """Replaces secret strings in bytes (as they are, and as they appear inside JSON strings)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        forms: set[bytes] = set()
        for secret in secrets:
            if len(secret) >= MIN_SECRET:
                forms.add(secret.encode("utf-8", "surrogateescape"))
                forms.add(json.dumps(secret)[1:-1].encode())
        self._forms = sorted(forms, key=len, reverse=True)

    def __call__(self, data: bytes) -> bytes:
        for form in self._forms:
            if form in data:
                data = data.replace(form, REDACTED.encode())
        return data

    def text(self, text: str) -> str:
        return self(text.encode("utf-8", "surrogateescape")).decode("utf-8", "replace")


class Recorder:
    """Records one relayed session; `put` is the pumps' hand-off, everything else is its thread's."""

    def __init__(
        self,
        *,
        name: str,
        session: str,
        argv: Sequence[str],
        pid: int,
        scrub: Scrubber,
        recording: Recording | None,
        feed: NotebookFeed | None,
        clip_bytes: int = CLIP_BYTES,
        backlog_bytes: int = BACKLOG_BYTES,
    ) -> None:
        self.session = session
        self._scrub = scrub
        self._recording = recording
        self._feed = feed
        self._clip = clip_bytes
        self._backlog_max = backlog_bytes
        self._backlog = 0
        self._lock = threading.Lock()
        self._items: deque[tuple[Any, ...]] = deque()  # the hand-off: appended by the pumps, taken by the thread
        self._wake = threading.Event()
        self._asleep = False  # the thread waits for `_wake`: the next hand-off sets it
        self._lost = {CLIENT: 0, SERVER: 0, STDERR: 0}  # each side's bytes not handed over (its pump's alone)
        self._lost_mid_line = {CLIENT: False, SERVER: False, STDERR: False}  # ...ending inside a line
        self._partial = {CLIENT: bytearray(), SERVER: bytearray(), STDERR: bytearray()}
        self._size = {CLIENT: 0, SERVER: 0, STDERR: 0}
        self._skip = {CLIENT: False, SERVER: False, STDERR: False}  # after lost bytes: up to the next line
        self.seq = 0
        self.failed = ""
        self._hello = {
            "session": self.session,
            "name": name,
            "transport": "stdio",
            "argv": [scrub.text(arg) for arg in argv],
            "pid": pid,
            "started": time.time(),
            "recording": str(recording.folder) if recording is not None else None,
        }
        self._thread = threading.Thread(target=self._run, name="mcp-notebook tap recorder", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, side: str, data: bytes) -> None:
        """Hand over bytes a pump moved (b"" at its end); never blocks. One thread per side."""
        wall, mono = time.time(), time.monotonic()
        with self._lock:
            if self._backlog + len(data) > self._backlog_max:
                self._lost[side] += len(data)
                self._lost_mid_line[side] = not data.endswith(b"\n")
                return
            self._backlog += len(data)
        lost, self._lost[side] = self._lost[side], 0
        self._items.append((side, wall, mono, data, lost, lost and self._lost_mid_line[side]))
        if self._asleep:
            self._wake.set()

    def event(self, name: str, **detail: Any) -> None:
        """An event record, after everything handed over before it."""
        self._items.append((EVENT, time.time(), time.monotonic(), name, detail))
        self._wake.set()

    def close(self, timeout: float) -> None:
        """Record what is left, flush the recording, give the notebook what it takes in time."""
        self._items.append(("close",))
        self._wake.set()
        self._thread.join(timeout)

    # ------------------------------------------------------------------ the thread

    def _run(self) -> None:
        """Take the hand-off in batches: every INTERVAL while bytes flow (so a relayed round trip
        never waits for this thread to wake), asleep on `_wake` once the session is quiet."""
        self._emit(EVENT, time.time(), time.monotonic(), b"", HELLO, self._hello, first=True)
        self._after_batch()
        quiet = 0
        while True:
            if self._items:
                quiet = 0
                while self._items:
                    item = self._items.popleft()
                    if item[0] == "close":
                        self._finish()
                        return
                    self._take(item)
                self._after_batch()
            else:
                quiet += 1
            if quiet > QUIET_POLLS:
                self._sleep()
                quiet = 0
            else:
                time.sleep(INTERVAL)

    def _sleep(self) -> None:
        feed = self._feed
        if feed is not None and feed.pending():
            timeout: float | None = 0.05  # the notebook is behind: offer it the rest now and then
        elif feed is not None and not feed.connected:
            timeout = feed.retry  # try again whether a notebook listens now
        else:
            timeout = None
        self._wake.clear()
        self._asleep = True
        if not self._items:
            self._wake.wait(timeout)
        self._asleep = False
        if not self._items and feed is not None:
            feed.poke()
            self._after_batch()

    def _take(self, item: tuple[Any, ...]) -> None:
        side, wall, mono = item[0], item[1], item[2]
        if side == EVENT:
            if self._feed is not None and self._feed.dropped:
                self._report_dropped(self._feed)  # before the session's end is told
            self._emit(EVENT, wall, mono, b"", item[3], item[4])
            return
        data, lost = item[3], item[4]
        with self._lock:
            self._backlog -= len(data)
        if lost:
            self._emit(EVENT, wall, mono, b"", DROPPED, {"bytes": lost, "side": side, "where": "recorder"})
            self._partial[side].clear()
            self._size[side] = 0
            self._skip[side] = item[5]  # the next bytes finish a line already cut: not a frame
        if not data:  # the pump's end: a last line without its newline is still a frame
            if self._size[side] and not self._skip[side]:
                self._line(side, wall, mono, b"", partial=True)
            return
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            if self._skip[side]:
                self._skip[side] = False
            else:
                self._line(side, wall, mono, data[start:end])
            start = end + 1
        if start < len(data) and not self._skip[side]:
            rest = data[start:]
            buffer = self._partial[side]
            room = self._clip - len(buffer)
            if room > 0:
                buffer += rest[:room]
            self._size[side] += len(rest)

    def _line(self, side: str, wall: float, mono: float, tail: bytes, partial: bool = False) -> None:
        buffer = self._partial[side]
        size = self._size[side] + len(tail)
        if buffer:
            room = self._clip - len(buffer)
            line = bytes(buffer) + tail[: max(room, 0)]
            buffer.clear()
            self._size[side] = 0
        else:
            line = tail[: self._clip]
        detail: dict[str, Any] = {}
        if size > len(line):
            detail = {"clipped": True, "size": size}
        if partial:
            detail["partial"] = True
        self._emit(side, wall, mono, self._scrub(line), "", detail)

    def _emit(
        self, side: str, wall: float, mono: float, data: bytes, name: str, detail: Mapping[str, Any], first: bool = False
    ) -> None:
        self.seq += 1
        line = encode(Record(self.seq, side, wall, mono, data, name, detail))
        if self._recording is not None and not self.failed:
            try:
                self._recording.write(line)
            except OSError as exc:  # a full disk stops the recording, never the session
                self.failed = f"the tap's recording stopped: {exc}"
                os.write(2, f"mcp-notebook tap: {self.failed}\n".encode())
        if self._feed is not None:
            if first:
                self._feed.hello = line
            self._feed.offer(self.seq, line)

    def _after_batch(self) -> None:
        if self._recording is not None and not self.failed:
            try:
                self._recording.flush()
            except OSError as exc:
                self.failed = f"the tap's recording stopped: {exc}"
        feed = self._feed
        if feed is not None:
            feed.send()
            if feed.dropped and feed.has_room(256):
                self._report_dropped(feed)

    def _report_dropped(self, feed: NotebookFeed) -> None:
        count, first, last = feed.take_dropped()
        now = time.time(), time.monotonic()
        self._emit(EVENT, now[0], now[1], b"", DROPPED, {"count": count, "first": first, "last": last, "where": "notebook"})

    def _finish(self) -> None:
        feed = self._feed
        if feed is not None and feed.dropped:
            self._report_dropped(feed)  # into the recording at least, even if the notebook has no room
        if self._recording is not None:
            try:
                self._recording.close()
            except OSError:
                pass
        if feed is None:
            return
        deadline = time.monotonic() + LINGER
        feed.send()
        while feed.pending() and time.monotonic() < deadline:
            select.select([], [feed.fileno()], [], max(0.0, deadline - time.monotonic()))
            feed.send()
        feed.close()
