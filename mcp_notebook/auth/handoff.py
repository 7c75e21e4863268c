"""The hand-off of an authorization response from the Jupyter server, which the browser is
sent back to, to the kernel whose flow waits for it: files in the user's Jupyter runtime
directory, which the kernel and the server it was started by share.

The kernel's flow writes a pending file named by a hash of its `state` (never the state
itself); the server's callback writes the response beside it only while that pending file
exists, and takes the pending file as it does, so a state is answered once; the kernel
takes the response (deleting it) and checks its `state` as for any redirect. The directory
is the user's own (0700, owned by this user, not a link) and every file 0600, created
exclusively and never through a link: nobody else can read a response or wait in the
user's name. A server loaded with the extension announces itself there too
(`servers/<pid>.json`), so a kernel knows the callback exists before sending a browser to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
import threading
import time
from pathlib import Path
from typing import Any

from ..transports.reaper import pid_alive

SUBDIRECTORY = "mcp-notebook-oauth"
CALLBACK_PATH = "mcp-notebook/oauth/callback"  # below the server's base_url
POLL = 0.1  # seconds between the kernel's looks for a response
LIFETIME = 30 * 60.0  # seconds a pending flow may be answered


def runtime_directory() -> Path | None:
    """The user's Jupyter runtime directory; None where jupyter_core is not installed."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return None
    return Path(jupyter_runtime_dir())


def handoff_directory(runtime: Path | None = None, *, create: bool = True) -> Path | None:
    """The hand-off directory, private to this user (made so, or refused: None)."""
    runtime = runtime or runtime_directory()
    if runtime is None:
        return None
    directory = runtime / SUBDIRECTORY
    try:
        if create:
            directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        return directory if _private(directory) else None
    except OSError:
        return None


def _private(directory: Path) -> bool:
    """A directory of this user's own, not a link; group and others' access removed."""
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        return False
    if info.st_mode & 0o077:
        os.chmod(directory, 0o700)
    return True


def key(state: str) -> str:
    return hashlib.sha256(state.encode()).hexdigest()


def _write_new(path: Path, text: str) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags, 0o600), "w") as file:
        file.write(text)


def _read(path: Path) -> str:
    with os.fdopen(os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))) as file:
        return file.read()


def _alive(pid: object) -> bool:
    return isinstance(pid, int) and pid > 0 and pid_alive(pid)


# ----- the server's side -----


def deliver(state: str, query: str, runtime: Path | None = None) -> bool:
    """Hand the callback's `query` to the flow waiting with `state`; False when none is (or
    it has ended, or another response came first)."""
    directory = handoff_directory(runtime, create=False)
    if directory is None or not state:
        return False
    name = key(state)
    pending = directory / f"{name}.pending"
    try:
        record = json.loads(_read(pending))
        pending.unlink()  # the claim: of two responses with one state, one unlinks it
    except (OSError, ValueError):
        return False
    if not isinstance(record, dict) or record.get("expires", 0) < time.time() or not _alive(record.get("pid")):
        return False
    partial = directory / f"{name}.{secrets.token_hex(8)}.partial"
    try:
        _write_new(partial, query)
        os.replace(partial, directory / f"{name}.response")
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
        return False
    return True


def announce(url: str, base_url: str, runtime: Path | None = None) -> Path | None:
    """Say that this process (a Jupyter server) takes callbacks at `base_url`, reached at `url`."""
    directory = handoff_directory(runtime)
    if directory is None:
        return None
    servers = directory / "servers"
    try:
        servers.mkdir(mode=0o700, exist_ok=True)
        path = servers / f"{os.getpid()}.json"
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        _write_new(path, json.dumps({"pid": os.getpid(), "url": url, "base_url": base_url}))
    except OSError:
        return None
    return path


def announced(pids: list[int], runtime: Path | None = None) -> dict[str, Any] | None:
    """The announcement of the first live server among `pids` (the kernel's ancestors)."""
    directory = handoff_directory(runtime, create=False)
    if directory is None:
        return None
    for pid in pids:
        try:
            record = json.loads(_read(directory / "servers" / f"{pid}.json"))
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and record.get("pid") == pid and _alive(pid) and isinstance(record.get("base_url"), str):
            return record
    return None


# ----- the kernel's side -----


class Pending:
    """One flow waiting for its response (the same shape as `LoopbackReceiver`: `received`,
    `arrived`, `wait`, `close`); a thread looks for the response every `POLL` seconds."""

    how = "jupyter"

    def __init__(self, state: str, redirect_uri: str, runtime: Path | None = None, limit: float = LIFETIME) -> None:
        directory = handoff_directory(runtime)
        if directory is None or not state:
            raise ValueError("no private hand-off directory here")
        self.redirect_uri = redirect_uri.split("?")[0]
        name = key(state)
        self._pending = directory / f"{name}.pending"
        self._response = directory / f"{name}.response"
        _write_new(self._pending, json.dumps({"pid": os.getpid(), "created": time.time(), "expires": time.time() + limit}))
        self.received: str | None = None
        self.arrived = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="mcp-oauth-handoff", daemon=True)
        self._thread.start()

    def take(self) -> str | None:
        """The URL the browser was sent back to, once its response is here (taken: deleted)."""
        try:
            query = _read(self._response)
            self._response.unlink()
        except OSError:
            return None
        return f"{self.redirect_uri}?{query}"

    def _watch(self) -> None:
        while not self._stop.is_set():
            received = self.take()
            if received is not None:
                self.received = received
                self.arrived.set()
                return
            self._stop.wait(POLL)

    def wait(self, timeout: float | None = None) -> str | None:
        self.arrived.wait(timeout)
        return self.received

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for path in (self._pending, self._response):
            with contextlib.suppress(OSError):
                path.unlink()

    def __enter__(self) -> Pending:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
