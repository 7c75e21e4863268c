"""A child's stdout read on a thread of its own, so an answer wakes its caller with no loop in between.

The stdio transport's reader. The thread blocks in `poll` on the pipe and hands each frame
to the sink's `frame_here`, which takes what needs no event loop (an answer a blocked
caller waits for, a server ping; the callers a chunk of several answers are woken together as
it ends, a lone answer's caller as it settles); every other frame goes to the loop, through
`call_soon_threadsafe`, and once one has, the frames after it follow it there until the
loop has dispatched it, so the session sees frames in the order they came. The end of
the output (or the child's exit, once what it wrote is read) reaches the loop after the
last frame. The thread never blocks on the loop, but for room: it reads no further while
HANDING frames wait for the loop, or while the session is behind with checking what came
(`Sink.wait_caught_up`), so a flood waits in the pipe, not in memory; `stop` ends it.
"""

from __future__ import annotations

import asyncio
import functools
import os
import select
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from ..base import wakeups
from ..base.sizes import GIVE_BACK_AFTER, give_back_memory
from ..protocol.jsonrpc import utf8_problem
from .base import Sink, size_text
from .lines import LineSplitter

READ_SIZE = 256 * 1024
HANDING = 1000  # frames handed to the loop and not yet dispatched, at most, before the thread waits


class PipeReader:
    """Reads newline-delimited frames from `fd` (non-blocking) until the end, or `stop`."""

    def __init__(
        self,
        fd: int,
        loop: asyncio.AbstractEventLoop,
        sink: Sink,
        *,
        max_frame_bytes: int,
        on_end: Callable[[], None],
        events: Callable[..., Any],
        name: str,
    ) -> None:
        self._fd = fd
        self._loop = loop
        self._sink = sink
        self._on_end = on_end
        self._events = events
        self._max_frame_bytes = max_frame_bytes
        self._lines = LineSplitter(max_frame_bytes)
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self._handing: deque[tuple[str, str | None]] = deque()  # frames handed to the loop, not yet dispatched
        self._handed = 0  # frames handed to the loop (written by the reading thread only)
        self._dispatched = 0  # of those, the ones the loop has dispatched (written by the loop only)
        self._child_exited = False
        self._stopping = False
        self._room = threading.Event()  # set by the loop when the thread waits for room and there is
        self._waiting = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def child_exited(self) -> None:
        """The child is gone: read what it wrote, then report the end (a grandchild may hold the pipe)."""
        self._child_exited = True
        self._wake()

    async def stop(self) -> None:
        """End the thread (what it has not read is dropped) and wait for it."""
        self._stopping = True
        self._wake()
        self._room.set()
        if self._thread.is_alive():
            await anyio.to_thread.run_sync(self._thread.join)
        for fd in (self._wake_read, self._wake_write):
            try:
                os.close(fd)
            except OSError:
                pass
        self._wake_read = self._wake_write = -1

    def _wake(self) -> None:
        try:
            os.write(self._wake_write, b"\0")
        except OSError:  # full (it is awake already) or closed (it has ended)
            pass

    # ----- the reading thread -----

    def _run(self) -> None:
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake_read, select.POLLIN)
        try:
            while not self._stopping:
                ready = poller.poll()
                if len(ready) > 1 or ready[0][0] != self._fd:  # woken, not (only) output to read
                    self._drain_wake_pipe()
                if self._stopping:
                    return
                exited = self._child_exited  # read before the pipe: all it wrote is there by now
                if not self._read_available(drain=exited) or exited:
                    self._end()
                    return
        except Exception as exc:  # noqa: BLE001 - the session hears of it as the end of the output
            self._to_loop(functools.partial(self._events, "reader-failed", note=f"{type(exc).__name__}: {exc}"))
            self._to_loop(self._on_end)

    def _drain_wake_pipe(self) -> None:
        try:
            while os.read(self._wake_read, 64):
                pass
        except OSError:
            pass

    def _read_available(self, drain: bool) -> bool:
        """Read and hand on what the pipe holds; False at its end. `drain` reads until it is empty."""
        while True:
            try:
                chunk = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            overflowed = self._lines.overflowed
            lines = self._lines.feed(chunk)
            if len(lines) > 1:
                with wakeups.held():  # the callers a chunk answers are woken once it is read
                    self._frames(lines)
            else:  # one frame: nobody to wake together with its caller, who is woken as it settles
                self._frames(lines)
            if self._lines.overflowed != overflowed:
                note = f"a line over {size_text(self._max_frame_bytes)} was dropped"
                self._to_loop(functools.partial(self._events, "oversized-frame", note=note))
            if len(chunk) < READ_SIZE and not drain:
                return True  # the pipe held less than we asked for: it is empty, save the read that says so

    def _frames(self, lines: list[bytes | bytearray]) -> None:
        """Hand on each line's frame. A line's bytes go once its text is made, before it is parsed;
        what a big frame held is given back by the loop once the frame is through (after its
        dispatch, if it went there): handing back tens of MB takes tens of ms, which here would
        hold up the frames behind it (a server's ping)."""
        lines.reverse()
        while lines:
            line = lines.pop()
            size = len(line)
            try:
                text, problem = line.decode("utf-8").strip(), None
            except UnicodeDecodeError as exc:  # JSON text is UTF-8: the session hears why this line is not a frame
                text, problem = line.decode("utf-8", errors="replace").strip(), utf8_problem(exc)
            del line
            if text:
                self._frame(text, problem)
            del text
            if size >= GIVE_BACK_AFTER:
                self._to_loop(give_back_memory)

    def _frame(self, text: str, problem: str | None) -> None:
        self._sink.wait_caught_up()
        if self._handed - self._dispatched >= HANDING:
            self._wait_for_the_loop()
        if problem is None and self._handed == self._dispatched and self._sink.frame_here(text):
            return
        self._handed += 1
        self._handing.append((text, problem))
        self._to_loop(self._dispatch)

    def _end(self) -> None:
        self._frames([self._lines.rest()])
        self._to_loop(self._on_end)

    def _wait_for_the_loop(self) -> None:
        self._room.clear()
        self._waiting = True  # before the check: a dispatch after it sees the flag
        while self._handed - self._dispatched >= HANDING and not self._stopping:
            self._room.wait()
            self._room.clear()
        self._waiting = False

    def _to_loop(self, callback: Callable[[], Any]) -> None:
        try:
            self._loop.call_soon_threadsafe(callback)
        except RuntimeError:  # the loop has closed: the runtime is shutting down
            self._stopping = True

    # ----- the loop -----

    def _dispatch(self) -> None:
        """The oldest frame handed to the loop: dispatched, and then let go of (not held by a callback)."""
        text, problem = self._handing.popleft()
        try:
            self._sink.frame_received(text, problem=problem)
        finally:
            self._dispatched += 1
            if self._waiting:
                self._room.set()
