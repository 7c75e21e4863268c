"""Where stdio relays reach the notebook: a Unix socket, served on the runtime's event loop, that
takes encoded records line by line from each relay that connects (one connection, one relayed
session) and hands them to the tap.

The rules kept here: only this user reaches it (the socket lives in the rendezvous directory,
0700 and ours, and a peer whose uid differs is hung up on, where the system says who it is);
a relay is untrusted input, so a line longer than the bound is skipped and a line that is not a
record is counted, never fatal; nothing here blocks the loop or waits on the tap.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from collections.abc import Callable
from pathlib import Path

from ..base.errors import UsageError
from ..runtime import get_runtime
from .wire.records import MAX_RECORD_BYTES, Record, decode

READ_CHUNK = 256 * 1024
MAX_LINE = MAX_RECORD_BYTES  # the records' own bound: a longer line is skipped, and counted


class Stream:
    """One relay's connection: the records it sent, in order, and what could not be read."""

    def __init__(self, number: int) -> None:
        self.number = number
        self.records = 0
        self.garbage = 0  # lines that were not records, or were over the bound
        self.session: object | None = None  # the tap's, once the stream says which session it carries


Deliver = Callable[[Stream, Record], None]
Ended = Callable[[Stream], None]


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end, where the system tells it (Linux: SO_PEERCRED)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return None
    try:
        raw = sock.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    except OSError:
        return None
    _pid, uid, _gid = struct.unpack("3i", raw)
    return int(uid)


class Listener:
    """A Unix socket at `path` taking record streams; `deliver(stream, record)` and
    `ended(stream)` are called on the loop thread."""

    def __init__(self, path: Path, deliver: Deliver, ended: Ended, *, max_line: int = MAX_LINE) -> None:
        self.path = path
        self._deliver = deliver
        self._ended = ended
        self._max_line = max_line
        self._server: asyncio.AbstractServer | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._inode: int | None = None
        self.streams = 0
        self.refused = 0  # connections from another user, hung up on

    def start(self) -> None:
        get_runtime().call(self._start)

    def close(self) -> None:
        runtime = get_runtime()
        if runtime.running and not runtime.in_loop_thread():
            runtime.call(self.aclose)
        else:
            self._unlink()

    async def _start(self) -> None:
        self._clear_stale()
        self._server = await asyncio.start_unix_server(self._serve, path=str(self.path), limit=READ_CHUNK)
        os.chmod(self.path, 0o600)
        self._inode = os.stat(self.path).st_ino

    async def aclose(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        for writer in list(self._writers):
            writer.close()
        with contextlib.suppress(Exception):
            await server.wait_closed()
        self._unlink()

    def _clear_stale(self) -> None:
        """A socket file no one answers on is a dead notebook's: removed. One that answers is
        another notebook tapping this name: that one keeps it."""
        if not self.path.exists() and not self.path.is_symlink():
            return
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.settimeout(1.0)
            probe.connect(str(self.path))
        except OSError:
            self.path.unlink(missing_ok=True)
            return
        finally:
            probe.close()
        raise UsageError(f"another notebook is tapping this name already (it listens on {self.path}); close that tap first")

    def _unlink(self) -> None:
        try:
            if self._inode is not None and os.stat(self.path).st_ino == self._inode:
                self.path.unlink()
        except OSError:
            pass
        self._inode = None

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        sock = writer.get_extra_info("socket")
        uid = peer_uid(sock) if sock is not None else None
        if uid is not None and uid != os.getuid():
            self.refused += 1
            writer.close()
            return
        self.streams += 1
        stream = Stream(self.streams)
        self._writers.add(writer)
        try:
            await self._read(reader, stream)
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(writer)
            writer.close()
            self._ended(stream)

    async def _read(self, reader: asyncio.StreamReader, stream: Stream) -> None:
        pending = bytearray()
        skipping = False  # inside a line over the bound: drop bytes until its end
        while True:
            chunk = await reader.read(READ_CHUNK)
            if not chunk:
                break
            start = 0
            while True:
                end = chunk.find(b"\n", start)
                if end < 0:
                    if not skipping:
                        pending += chunk[start:]
                        if len(pending) > self._max_line:
                            pending.clear()
                            skipping = True
                    break
                if skipping:
                    skipping = False
                    stream.garbage += 1
                else:
                    pending += chunk[start:end]
                    self._line(stream, bytes(pending))
                    pending.clear()
                start = end + 1
        if pending or skipping:
            stream.garbage += 1  # a torn last line

    def _line(self, stream: Stream, line: bytes) -> None:
        if not line.strip():
            return
        try:
            record = decode(line)
        except ValueError:
            stream.garbage += 1
            return
        stream.records += 1
        self._deliver(stream, record)
