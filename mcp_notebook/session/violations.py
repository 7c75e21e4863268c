"""Every server frame checked, live, off the ping path: the session's `FrameChecker`.

The inbound dispatcher hands each frame the server sent to `submit` (on the session thread or
the stdio reading thread, before the frame is delivered) with what it knew then (`Seen`); a
worker thread of the checker's own runs the rules (`protocol.frame_rules`) in arrival order,
so validating even a 10 MB result, once, never delays a pong or a caller. What it finds is
kept (the newest `KEPT`; `count` is every one), and each trace entry that broke a rule is
marked (`Trace.mark`). What the transport finds that no frame shows (an SSE event id it will not
send back) is `report`ed, and kept in the same order. `settled()` waits until every frame submitted so far has been checked:
readers call it, so what they see covers every frame that came before.

The frames waiting to be checked are bounded (BACKLOG frames, BACKLOG_BYTES of text): a server
sends faster than rules run, so once the backlog is full `behind()` says so and the readers
wait (`when_room`, `wait_room`) before they read more: backpressure, not memory, absorbs a flood.

In strict mode the rules run in `submit`, on the session thread, before the frame is
delivered: the first violation is returned there so the dispatcher fails the call it answers
and ends the connection (the stdio fast paths are off: everything goes through the loop).
"""

from __future__ import annotations

import dataclasses
import queue
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from ..protocol.frame_rules import FrameRules, Seen, Violation
from ..protocol.spec_schema import VERSIONS
from ..protocol.versions import MODERN_VERSIONS
from .trace import Trace

KEPT = 1000  # violations kept; older ones are only counted
BACKLOG = 1000  # frames submitted and not yet checked, at most, before the readers wait
BACKLOG_BYTES = 64 * 1024 * 1024  # nor more text than this (one frame of any size is always taken)
PAUSE = 0.002  # seconds the worker rests after a batch, gathering the next frames
YIELD_AFTER = 0.0002  # seconds of checking after which the worker lets other threads run


class FrameChecker:
    """The rules of one connection and what they found."""

    def __init__(self, trace: Trace, *, enabled: bool = True, strict: bool = False) -> None:
        self.trace = trace
        self.enabled = enabled
        self.strict = strict
        self.rules = FrameRules()
        self.found: deque[Violation] = deque(maxlen=KEPT)
        self.count = 0
        self.listeners: list[Callable[[Violation], None]] = []  # called on the worker thread
        self._queue: queue.SimpleQueue[tuple[Seen | Violation, int] | None] = queue.SimpleQueue()
        self._done = threading.Condition()
        self._submitted = 0
        self._checked = 0
        self._backlog_bytes = 0  # text of the frames submitted and not yet checked
        self._on_room: list[Callable[[], None]] = []  # called (on the worker) once the backlog has room
        self._thread: threading.Thread | None = None
        self._stopped = False

    def submit(self, seen: Seen, size: int = 0) -> list[Violation]:
        """Check `seen` (strict: now, returning what it broke; else later, on the worker);
        `size` is its text's length, for the backlog's bound. Never blocks: readers wait for
        room before they read the next frame (`behind`)."""
        if not self.enabled:
            return []
        if self.strict:
            return self._check(seen)
        self._enqueue(seen, size)
        return []

    def report(self, violation: Violation) -> bool:
        """Keep a violation found outside the rules (the transport's), after the frames before it
        (strict: now); False when checking is off."""
        if not self.enabled:
            return False
        if self.strict:
            self._keep([violation])
        else:
            self._enqueue(violation)
        return True

    def _enqueue(self, item: Seen | Violation, size: int = 0) -> None:
        with self._done:
            if self._stopped:
                return
            self._submitted += 1
            self._backlog_bytes += size
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="mcp-frame-checker", daemon=True)
                self._thread.start()
        self._queue.put((item, size))

    def behind(self) -> bool:
        """Whether the backlog is full: a reader should wait for room before it reads on."""
        return not self._stopped and (self._submitted - self._checked >= BACKLOG or self._backlog_bytes >= BACKLOG_BYTES)

    def when_room(self, callback: Callable[[], None]) -> None:
        """Call `callback()` once the backlog has room (now, on this thread, if it has; else on the worker)."""
        with self._done:
            if self.behind():
                self._on_room.append(callback)
                return
        callback()

    def wait_room(self) -> None:
        """Block this thread (a reader's own) until the backlog has room."""
        with self._done:
            self._done.wait_for(lambda: not self.behind())

    def _work(self) -> None:
        """Check what has queued up, in batches: after each batch the worker rests `PAUSE`, so a
        busy connection wakes it a few hundred times a second, not once a frame; within one it
        lets go of the GIL every `YIELD_AFTER`, so a pong waits for one frame's check at most."""
        while True:
            batch = [self._queue.get()]
            while True:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            checked, size, stopping, held = 0, 0, False, time.perf_counter()
            seen: Seen | None = None
            found: Seen | Violation | None = None
            for item in batch:
                if item is None:
                    stopping = True
                    break
                found, size = item[0], size + item[1]
                if isinstance(found, Violation):  # found by the transport: only kept
                    self._keep([found])
                    checked += 1
                    continue
                seen = found
                try:
                    self._check(seen)
                except Exception as exc:  # noqa: BLE001 - a rule that fails on a frame never stops the checking
                    self.trace.event("check-error", note=f"{type(exc).__name__}: {exc}", seq=seen.seq)
                checked += 1
                if time.perf_counter() - held > YIELD_AFTER:  # let a waiting thread (a pong) have the GIL
                    time.sleep(0)
                    held = time.perf_counter()
            del batch  # while it waits for the next frames, the worker holds none it checked
            seen = item = found = None
            with self._done:
                self._checked += checked
                self._backlog_bytes -= size
                self._done.notify_all()
                waiting, self._on_room = self._on_room, []
            for callback in waiting:
                callback()
            if stopping:
                return
            time.sleep(PAUSE)

    def _check(self, seen: Seen) -> list[Violation]:
        """Run the rules; what they found, with every known secret redacted (messages quote frames)."""
        return self._keep(self.rules.check(seen))

    def _keep(self, found: list[Violation]) -> list[Violation]:
        """Record what was found, with every known secret redacted (messages quote frames)."""
        if found and self.trace.redactor:
            redact = self.trace.redact
            found = [dataclasses.replace(v, message=redact(v.message), where=redact(v.where)) for v in found]
        for violation in found:
            self.found.append(violation)
            self.count += 1
            if violation.index:  # 0: the trace records no frames (enabled = False)
                self.trace.mark(violation.index, violation.rule)
            for listener in list(self.listeners):
                listener(violation)
        return found

    def settled(self, timeout: float | None = 30.0) -> bool:
        """Wait until every frame submitted so far has been checked; False on timeout."""
        with self._done:
            target = self._submitted
            return self._done.wait_for(lambda: self._checked >= target, timeout)

    def violations(self) -> list[Violation]:
        """What the rules found so far, oldest first, once every frame received is checked."""
        self.settled()
        return list(self.found)

    def stop(self) -> None:
        """Check what is queued, then end the worker (the connection has ended)."""
        with self._done:
            self._stopped = True
            thread = self._thread
            waiting, self._on_room = self._on_room, []
            self._done.notify_all()
        for callback in waiting:
            callback()  # nothing is checked any more: no reader waits for it
        if thread is not None:
            self._queue.put(None)
            thread.join()


def frame_version(negotiated: str | None, answers: str | None, message: Any, requested: str) -> str | None:
    """The version a server frame is judged by: the negotiated one; for the answer to
    `initialize`, the version it names (or the one we asked for); for `server/discover`'s, the
    modern version."""
    if answers == "initialize":
        result = message.get("result") if isinstance(message, dict) else None
        named = result.get("protocolVersion") if isinstance(result, dict) else None
        return named if named in VERSIONS else requested
    if answers == "server/discover" and negotiated is None:
        return MODERN_VERSIONS[0]
    return negotiated
