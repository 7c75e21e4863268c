"""The relay's line to the notebook watching its name: encoded records written to a Unix socket,
never waited on.

The rule: the relayed session is never slowed or broken by the notebook. The socket is
non-blocking; what it does not take at once waits in a queue bounded in bytes, and records that
find the queue full are dropped and counted (the relay then sends a DROPPED event saying which).
A notebook that goes away (EPIPE, reset) is let go; when none listens, connecting is tried again
at most every `retry` seconds, so a notebook that starts mid-session attaches then. Every new
connection first gets the session's HELLO again (which names the on-disk recording): a gap in
sequence numbers after it is what the notebook reads from the recording. Used by one thread.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from pathlib import Path

QUEUE_BYTES = 8 * 1024 * 1024
RETRY = 0.5


class NotebookFeed:
    """Encoded records to the notebook's socket at `path`, if one listens."""

    def __init__(self, path: Path, *, queue_bytes: int = QUEUE_BYTES, retry: float = RETRY) -> None:
        self.path = path
        self.hello = b""  # the session's HELLO, encoded: the first line of every connection
        self._queue_bytes = queue_bytes
        self.retry = retry
        self._sock: socket.socket | None = None
        self._queue: deque[bytes] = deque()
        self._queued = 0
        self._offset = 0  # bytes of the queue's first line already sent
        self._next_try = 0.0
        self.connections = 0
        self.dropped = 0  # records dropped since the last DROPPED event, `first_dropped` the first's seq
        self.first_dropped = 0
        self.last_dropped = 0

    @property
    def connected(self) -> bool:
        return self._sock is not None

    def offer(self, seq: int, line: bytes) -> None:
        """Queue one encoded record for the notebook; drop it (counted) if the queue is full."""
        if self._sock is None and not self._connect():
            return  # no one listens: the recording has it for whoever comes later
        if self._queued + len(line) > self._queue_bytes:
            if not self.dropped:
                self.first_dropped = seq
            self.dropped += 1
            self.last_dropped = seq
            return
        self._queue.append(line)
        self._queued += len(line)

    def has_room(self, size: int) -> bool:
        return self._queued + size <= self._queue_bytes

    def send(self) -> None:
        """Write what the socket takes now, without waiting."""
        sock = self._sock
        while sock is not None and self._queue:
            head = self._queue[0]
            try:
                sent = sock.send(memoryview(head)[self._offset :])
            except BlockingIOError:
                return
            except OSError:  # the notebook went away (EPIPE, reset): let it go, try again later
                self._disconnect()
                return
            self._offset += sent
            if self._offset == len(head):
                self._queue.popleft()
                self._queued -= len(head)
                self._offset = 0

    def take_dropped(self) -> tuple[int, int, int]:
        """(count, first seq, last seq) of the records dropped since the last call."""
        taken = (self.dropped, self.first_dropped, self.last_dropped)
        self.dropped = 0
        return taken

    def pending(self) -> bool:
        return self._sock is not None and bool(self._queue)

    def fileno(self) -> int:
        return self._sock.fileno() if self._sock is not None else -1

    def poke(self) -> None:
        """Try to connect if it is time to (called now and then when no record comes)."""
        if self._sock is None:
            self._connect()

    def close(self) -> None:
        self._disconnect()

    def _connect(self) -> bool:
        now = time.monotonic()
        if now < self._next_try:
            return False
        self._next_try = now + self.retry
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect(str(self.path))
        except OSError:  # no notebook (no socket, refused, its backlog full): the next try is later
            sock.close()
            return False
        self._sock = sock
        self.connections += 1
        if self.hello:
            self._queue.append(self.hello)
            self._queued += len(self.hello)
        return True

    def _disconnect(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._queue.clear()  # the recording holds them: a returning notebook reads it
        self._queued = 0
        self._offset = 0
        self._next_try = time.monotonic() + self.retry
