"""Newline-delimited frames out of a stream of byte chunks, with a bound on a line's length.

A leaf of the transports layer: the stdio transport splits the server's stdout (frames)
and stderr (log lines) with it. It knows nothing of JSON-RPC.
"""

from __future__ import annotations

from collections.abc import Sequence


class LineSplitter:
    """Turns chunks of bytes into complete lines, bounding what an unterminated line may hold:
    a line that grows past the limit is dropped, up to and with its newline."""

    def __init__(self, limit: int) -> None:
        self._partial = bytearray()
        self._limit = limit
        self._skipping = False  # in the rest of a line that was dropped
        self.overflowed = 0

    def feed(self, chunk: bytes) -> Sequence[bytes | bytearray]:
        if not self._partial and not self._skipping and chunk.endswith(b"\n") and len(chunk) <= self._limit:
            whole = chunk.split(b"\n")  # whole lines only, each within the limit: no copy into the buffer
            del whole[-1]
            return whole
        if self._skipping:
            end = chunk.find(b"\n")
            if end < 0:
                return []
            self._skipping, chunk = False, chunk[end + 1 :]
        if b"\n" not in chunk:
            self._partial += chunk
            if len(self._partial) > self._limit:
                self.overflowed += 1
                self._partial.clear()
                self._skipping = True
            return []
        self._partial += chunk
        *lines, rest = self._partial.split(b"\n")
        self._partial = bytearray(rest)
        return [line for line in lines if len(line) <= self._limit or self._overflow()]

    def _overflow(self) -> bool:
        self.overflowed += 1
        return False

    def rest(self) -> bytes:
        """What an unterminated last line holds; the splitter holds nothing afterwards."""
        rest, self._partial = bytes(self._partial), bytearray()
        return rest
