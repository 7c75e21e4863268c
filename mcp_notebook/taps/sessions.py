"""The tapped sessions of one tap: records routed to one `SessionObserver` per session, each
record fed once, in order, whether it came live or from the on-disk recording.

The rules kept here: a session is known by what its records say (a relay's HELLO names its
session; an HTTP record's detail its local session number), and a record whose seq is not past
the last one fed for its session is a duplicate (the recording and the live stream overlap when
a notebook attaches late) and is skipped. A live stream that begins past the last seq fed has
its gap filled from the session's recording first. Everything here may be called from the
runtime's loop thread and read from any other; `changed` wakes those waiting on the tap.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..transports.reaper import pid_alive
from .observing.observer import SessionObserver
from .wire import rendezvous
from .wire.recording import read_recording
from .wire.records import CLIENT, CLOSED, EVENT, EXIT, HELLO, SERVER, Record

ENDING = (EXIT, CLOSED)


class TappedSession:
    """One session a tap saw: its own `trace`, `health`, `violations(side=)`, read like a connection's."""

    def __init__(self, key: Any, transport: str, observer: SessionObserver, *, folder: Path | None = None) -> None:
        self.key = key
        self.transport = transport
        self.observer = observer
        self.folder = folder  # its on-disk recording, if it has one (stdio)
        self.last_seq = 0
        self.frames = {CLIENT: 0, SERVER: 0}
        self.started = time.time()
        self.ended = False
        self.hello: dict[str, Any] = {}

    @property
    def trace(self) -> Any:
        """The session's frames in both directions, in the client's view (out = the client's)."""
        return self.observer.trace

    @property
    def health(self) -> Any:
        """`TapHealth` now: both sides' pings, frames, violations per side."""
        return self.observer.health()

    def violations(self, side: str | None = None) -> list[Any]:
        """The rules broken, by `side` ("client" or "server"; both if None)."""
        return list(self.observer.violations(side))

    @property
    def label(self) -> str:
        name = self.hello.get("name") or ""
        return f"{self.transport} session {self.key}" + (f" ({name})" if name else "")

    def feed(self, record: Record) -> bool:
        """Feed `record` unless it was fed already; whether it was."""
        if record.seq <= self.last_seq:
            return False
        self.last_seq = record.seq
        if record.side in self.frames:
            self.frames[record.side] += 1
        elif record.side == EVENT and record.name == HELLO:
            self.hello = dict(record.detail)
        elif record.side == EVENT and record.name in ENDING:
            self.ended = True
        self.observer.feed(record)
        return True

    def __repr__(self) -> str:
        state = "ended" if self.ended else "live"
        return f"<TappedSession {self.label}: {self.frames[CLIENT]} client, {self.frames[SERVER]} server frames, {state}>"


class Sessions:
    """The sessions of one tap, newest last, and the condition its waiters wait on. No observer
    is called while the condition is held (an observer's worker wakes the waiters from its own
    thread, under its own lock)."""

    def __init__(self, name: str, make: Callable[[str], SessionObserver]) -> None:
        self.name = name
        self._make = make
        self._by_key: dict[Any, TappedSession] = {}
        self._changed = threading.Condition()
        self._generation = 0  # bumped on every change, so a waiter misses none

    def all(self) -> list[TappedSession]:
        with self._changed:
            return list(self._by_key.values())

    def newest(self) -> TappedSession | None:
        with self._changed:
            return next(reversed(self._by_key.values()), None)

    def session(self, key: Any, transport: str, folder: Path | None = None) -> TappedSession:
        with self._changed:
            found = self._by_key.get(key)
            if found is not None:
                if folder is not None and found.folder is None:
                    found.folder = folder
                return found
        made = TappedSession(key, transport, self._make(transport), folder=folder)
        with self._changed:
            found = self._by_key.setdefault(key, made)
        if found is not made:
            made.observer.close()
            return found
        made.observer.listeners.append(lambda *_: self.wake())
        self.wake()
        return made

    def feed(self, session: TappedSession, records: Iterable[Record]) -> int:
        """Feed `records` to `session` (duplicates skipped) and wake the waiters; how many were new.
        Called from one thread at a time per session (the loop's, or the opener's before it listens)."""
        fed = sum(session.feed(record) for record in records)
        if fed:
            self.wake()
        return fed

    def wake(self) -> None:
        with self._changed:
            self._generation += 1
            self._changed.notify_all()

    def wait(self, done: Callable[[], bool], timeout: float | None) -> bool:
        """Wait until `done()` (called without the lock held) is true; False on timeout."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            with self._changed:
                seen = self._generation
            if done():
                return True
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                return False
            with self._changed:
                if self._generation == seen:
                    self._changed.wait(remaining)

    def close(self) -> None:
        for session in self.all():
            session.observer.close()
        self.wake()

    # ----- stdio: sessions by their relay's HELLO, and their recordings

    def from_relay(self, first: Record, stream: int) -> TappedSession:
        """The session a relay's stream carries: the one its HELLO names (the same session the
        recording already showed, when the notebook attached late), or a new one."""
        detail = first.detail or {}
        key = str(detail.get("session", f"stream-{stream}"))
        folder = _inside(self.name, detail.get("recording")) if first.name == HELLO else None
        return self.session(key, "stdio", folder or _folder_of(self.name, key))

    def fill_gap(self, session: TappedSession, upto: int | None = None) -> None:
        """Feed what the recording holds past the last record fed (before seq `upto`, if given):
        what the relay recorded while this notebook did not listen, or could not take."""
        if session.folder is None or (upto is not None and upto <= session.last_seq + 1):
            return
        self.feed(session, (r for r in _read(session.folder) if r.seq > session.last_seq and (upto is None or r.seq < upto)))

    def catch_up(self) -> int:
        """Feed the recordings of this name's sessions that are still running; how many sessions."""
        caught = 0
        for folder in _recordings(self.name):
            records = list(_read(folder))
            if not records or records[0].name != HELLO or not _running(records):
                continue
            key = str(records[0].detail.get("session", folder.name))
            self.feed(self.session(key, "stdio", folder), records)
            caught += 1
        return caught


def _recordings(name: str) -> list[Path]:
    try:
        return rendezvous.recordings(name)
    except OSError:
        return []


def _read(folder: Path) -> Iterator[Record]:
    try:
        yield from read_recording(folder)
    except OSError:
        return


def _inside(name: str, folder: object) -> Path | None:
    """`folder` if it is one of tap `name`'s recordings (a relay names its own), else None."""
    if not isinstance(folder, str):
        return None
    path = Path(folder)
    return path if any(path == known for known in _recordings(name)) else None


def _folder_of(name: str, key: str) -> Path | None:
    """The recording of session `key` of tap `name`, if there is one."""
    for folder in reversed(_recordings(name)):
        first = next(iter(_read(folder)), None)
        if first is not None and first.name == HELLO and str(first.detail.get("session")) == key:
            return folder
    return None


def _running(records: list[Record]) -> bool:
    """A recorded session is running until it recorded its end, or its server is gone."""
    if any(r.side == EVENT and r.name in ENDING for r in reversed(records)):
        return False
    pid = records[0].detail.get("pid")
    return not isinstance(pid, int) or pid <= 0 or pid_alive(pid)
