"""Newline-delimited frames out of a stream of byte chunks, with a bound on a line's length.

A leaf of the transports layer: the stdio transport splits the server's stdout (frames)
and stderr (log lines) with it. It knows nothing of JSON-RPC.
"""

from __future__ import annotations


class LineSplitter:
    """Turns chunks of bytes into complete lines, bounding what an unterminated line may hold:
    a line that grows past the limit is dropped, up to and with its newline."""

    def __init__(self, limit: int) -> None:
        self._partial = bytearray()
        self._limit = limit
        self._skipping = False  # in the rest of a line that was dropped
        self.overflowed = 0

    def feed(self, chunk: bytes) -> list[bytes | bytearray]:
        """The lines `chunk` completes, oldest first. A line that spans chunks is the buffer that
        gathered it, handed over as it is: however long, it is never copied whole."""
        if not self._partial and not self._skipping and chunk.endswith(b"\n") and len(chunk) <= self._limit:
            whole: list[bytes | bytearray] = list(chunk.split(b"\n"))  # whole lines only, each within the limit
            del whole[-1]
            return whole
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return []
            self._skipping, chunk = False, chunk[end + 1 :]
        end = chunk.find(b"\n")
        if end < 0:
            self._partial += chunk
            if len(self._partial) > self._limit:
                self.overflowed += 1
                self._partial.clear()
                self._skipping = True
            return []
        self._partial += memoryview(chunk)[:end]
        lines: list[bytes | bytearray] = [self._partial]
        *more, rest = chunk[end + 1 :].split(b"\n")
        lines += more
        self._partial = bytearray(rest)
        return [line for line in lines if len(line) <= self._limit or self._overflow()]

    def _overflow(self) -> bool:
        self.overflowed += 1
        return False

    def rest(self) -> bytearray:
        """What an unterminated last line holds (the buffer itself); the splitter holds nothing afterwards."""
        rest, self._partial = self._partial, bytearray()
        return rest
