"""Reload: restart a stdio server when its own files change, for a server author editing beside the notebook.

What is watched: the files and directories the server's command names that exist (`python
server.py` -> server.py; a directory given, all of it but caches and VCS folders), relative to its
cwd. The watching is `watchfiles` (notify's OS events, debounced: a burst of saves is one
restart) on a thread of its own per connection. The rule kept: that thread is stopped and joined
when the connection closes (`close_all` stops it without waiting); a change while a restart is
under way waits for it (`restart.Restarter` serialises them), and a failed restart (the file
half-edited) is said in one line and the next change tries again.
"""

from __future__ import annotations

import os
import shlex
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import watchfiles

from ...base.errors import McpNotebookError, UsageError
from ..display import frontend
from . import registry
from .options import ConnectOptions
from .targets import SCRIPT_SUFFIXES, is_url

if TYPE_CHECKING:
    from ..connection import Connection

DEBOUNCE_MS = 400  # changes within this are one restart
STEP_MS = 50  # how often the watcher looks for its stop
JOIN_TIMEOUT = 30.0  # a restart under way when the connection closes may take this long to end

_watches: set[Watch] = set()
_watches_lock = threading.Lock()


def watched_paths(target: str | Sequence[str], options: ConnectOptions) -> list[str]:
    """The server's own files and directories, as its command names them; UsageError if none exists."""
    if is_url(target):
        raise UsageError("reload watches a stdio server's files; an HTTP server restarts itself (use conn.reconnect())")
    argv = shlex.split(target) if isinstance(target, str) else [str(part) for part in target]
    base = Path(options.cwd) if options.cwd is not None else Path.cwd()
    found: list[str] = []
    for index, arg in enumerate(argv):
        if arg.startswith("-") or (index == 0 and Path(arg).suffix not in SCRIPT_SUFFIXES):
            continue  # an option, or the program (an interpreter is not the server's code)
        path = (base / os.path.expanduser(arg)).resolve()
        if path.exists() and str(path) not in found:
            found.append(str(path))
    if not found:
        raise UsageError(f"reload: the command names no file or directory that exists to watch: {shlex.join(argv)}")
    return found


class Watch:
    """One connection's watch: a thread restarting it on each debounced change."""

    def __init__(self, conn: Connection, paths: Sequence[str]) -> None:
        self.conn = conn
        self.paths = tuple(paths)
        self._files = {p for p in self.paths if Path(p).is_file()}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"mcp-reload-{conn.name}", daemon=True)

    def start(self) -> None:
        with _watches_lock:
            _watches.add(self)
        self._thread.start()

    def stop(self, wait: bool = True) -> None:
        self._stop.set()
        with _watches_lock:
            _watches.discard(self)
        if wait and threading.current_thread() is not self._thread and self._thread.is_alive():
            self._thread.join(JOIN_TIMEOUT)

    def _wanted(self, change: watchfiles.Change, path: str) -> bool:
        if str(Path(path).resolve()) in self._files:
            return True
        inside = any(Path(path).is_relative_to(p) for p in self.paths if p not in self._files)
        return inside and watchfiles.DefaultFilter()(change, path)

    def _run(self) -> None:
        # A file is watched through its folder: editors save by writing a new file and renaming it over the old.
        roots = sorted({str(Path(p).parent) if p in self._files else p for p in self.paths})
        for changes in watchfiles.watch(
            *roots,
            watch_filter=self._wanted,
            debounce=DEBOUNCE_MS,
            step=STEP_MS,
            stop_event=self._stop,
            yield_on_timeout=False,
            raise_interrupt=False,
        ):
            if self._stop.is_set() or registry.existing(self.conn.name) is not self.conn:
                break
            names = sorted({Path(path).name for _, path in changes})
            try:
                self.conn.reconnect(why=f"reload: {', '.join(names)} changed")
            except McpNotebookError as exc:
                frontend.current().warn(f"{self.conn.name}: reload: the server did not come back: {exc}")


def _stop_all() -> None:
    with _watches_lock:
        watches = list(_watches)
    for watch in watches:
        watch.stop(wait=False)


registry.on_close_all.append(_stop_all)
