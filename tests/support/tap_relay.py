"""For the stdio relay's tests: a short private tap directory, a plain socket server standing in
for the notebook (it only agrees with the relay on the wire: one encoded record per line), and
the relay's command line."""

from __future__ import annotations

import socket
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from mcp_notebook.taps.wire.records import Record, decode

ENV_DIR = "MCP_NOTEBOOK_TAP_DIR"


@contextmanager
def short_tap_dir() -> Iterator[Path]:
    """A tap directory under the temp dir with a short path (pytest's tmp_path is too long for a
    Unix socket path); not yet created, as the relay creates it."""
    with tempfile.TemporaryDirectory(prefix="tap-") as parent:
        yield Path(parent) / "t"


def tap_cmd(*command: str, name: str | None = None) -> list[str]:
    """The relay's argv for `command`."""
    return [sys.executable, "-m", "mcp_notebook.tap", *(["--name", name] if name else []), "--", *command]


class StandInNotebook:
    """Listens on a tap's socket and collects the records of every connection (or, with
    `reading=False`, accepts and never reads, as a notebook that hangs would)."""

    def __init__(self, path: Path, *, reading: bool = True) -> None:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.path = path
        self.reading = reading
        self.records: list[Record] = []
        self.connections = 0
        self.changed = threading.Condition()
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(path))
        self._server.listen(4)
        self._accepted: list[socket.socket] = []
        self._threads: list[threading.Thread] = []
        self._closed = False
        self._accepter = threading.Thread(target=self._accept, daemon=True)
        self._accepter.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            with self.changed:
                self.connections += 1
                self._accepted.append(conn)
                self.changed.notify_all()
            if self.reading:
                thread = threading.Thread(target=self._read, args=(conn,), daemon=True)
                self._threads.append(thread)
                thread.start()

    def _read(self, conn: socket.socket) -> None:
        with conn.makefile("rb") as lines:
            for line in lines:
                with self.changed:
                    self.records.append(decode(line))
                    self.changed.notify_all()

    def wait_for(self, condition: object, timeout: float = 20.0) -> bool:
        with self.changed:
            return self.changed.wait_for(condition, timeout)  # type: ignore[arg-type]

    def close(self) -> None:
        try:
            self._server.shutdown(socket.SHUT_RDWR)  # wakes the accept() of its thread (close alone does not)
        except OSError:
            pass
        self._server.close()
        self.path.unlink(missing_ok=True)
        for conn in self._accepted:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            conn.close()
        self._accepter.join(5)
        for thread in self._threads:
            thread.join(5)

    def __enter__(self) -> StandInNotebook:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
