"""Where a relay finds the notebook watching its name: a per-user runtime directory, private to
the user, holding one Unix socket per tap name and the recordings of the relayed sessions.

The rule: only the same user reaches a tap. The directory is created 0700 and refused (one
clear line) if someone else owns it or its group or others have access, or if it is a symlink;
names are short and of a safe charset, so every socket path stays under the AF_UNIX limit.
`MCP_NOTEBOOK_TAP_DIR` moves the directory (tests, or a user who wants it elsewhere); it is held
to the same checks. On Windows, where AF_UNIX is not guaranteed, the design is loopback TCP with
a token file in this directory; that is not built yet (`NotImplementedError` says so).
"""

from __future__ import annotations

import os
import re
import stat
import sys
import tempfile
import warnings
from pathlib import Path

ENV_DIR = "MCP_NOTEBOOK_TAP_DIR"
APP = "mcp-notebook"
MAX_NAME = 40
SOCKET_SUFFIX = ".sock"
RECORDINGS = "recordings"
# sun_path is 108 bytes on Linux, 104 on macOS and the BSDs; one byte is the terminating NUL.
MAX_SOCKET_PATH = 103
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,39}\Z")


class TapDirError(OSError):
    """The runtime directory cannot be used safely (its one-line message says why)."""


def check_name(name: str) -> str:
    """`name` if it is a valid tap name (letters, digits, `_`, `.`, `-`; up to 40; not starting
    with `.` or `-`), else ValueError in one line."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(
            f"not a tap name: {name!r} (use up to {MAX_NAME} letters, digits, '_', '.' or '-', not starting with '.' or '-')"
        )
    return name


def name_for(command: str) -> str:
    """The tap name a command gets by default: its basename, made a valid name."""
    base = os.path.basename(command.rstrip("/\\")) or "server"
    for suffix in (".exe", ".cmd", ".bat"):
        if base.lower().endswith(suffix):
            base = base[: -len(suffix)]
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "-", base).lstrip(".-")[:MAX_NAME]
    return cleaned or "server"


def runtime_dir(create: bool = True) -> Path:
    """The user's tap directory, created 0700 if `create`; TapDirError if it is not private."""
    if sys.platform == "win32":
        raise NotImplementedError(
            "taps on Windows need loopback TCP with a token file (not built yet): AF_UNIX sockets are not guaranteed there"
        )
    folder = where()
    if create:
        _make_private(folder)
    check_private(folder)
    return folder


def where() -> Path:
    """The tap directory's path (`runtime_dir` makes and checks it)."""
    override = os.environ.get(ENV_DIR)
    if override:
        return Path(override)
    folder = _platform_dir()
    if len(str(folder / ("x" * MAX_NAME + SOCKET_SUFFIX)).encode()) > MAX_SOCKET_PATH:
        folder = _temp_dir()  # e.g. macOS's long runtime directory: a socket path in it would not fit
    return folder


def socket_path(name: str, folder: Path | None = None) -> Path:
    """The Unix socket the notebook watching `name` listens on."""
    path = (folder if folder is not None else runtime_dir()) / (check_name(name) + SOCKET_SUFFIX)
    if len(str(path).encode()) > MAX_SOCKET_PATH:
        raise TapDirError(f"the tap socket path is too long for a Unix socket ({len(str(path).encode())} bytes): {path}")
    return path


def recordings_dir(name: str, folder: Path | None = None, create: bool = False) -> Path:
    """The folder holding the recordings of `name`'s sessions, one subfolder each."""
    path = (folder if folder is not None else runtime_dir()) / RECORDINGS / check_name(name)
    if create:
        _make_private(path.parent)
        _make_private(path)
    return path


def recordings(name: str, folder: Path | None = None) -> list[Path]:
    """The recordings of `name`'s sessions, oldest first (their folder names sort by start)."""
    path = recordings_dir(name, folder)
    try:
        return sorted(p for p in path.iterdir() if p.is_dir() and not p.is_symlink())
    except FileNotFoundError:
        return []


def check_private(folder: Path) -> None:
    """TapDirError unless `folder` is a real directory of ours that only we can enter."""
    try:
        info = folder.lstat()
    except FileNotFoundError:
        raise TapDirError(f"the tap directory {folder} does not exist") from None
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise TapDirError(f"refusing the tap directory {folder}: it is not a plain directory")
    if info.st_uid != os.getuid():
        raise TapDirError(f"refusing the tap directory {folder}: it belongs to uid {info.st_uid}, not to you")
    if info.st_mode & 0o077:
        raise TapDirError(
            f"refusing the tap directory {folder}: group or others have access (mode {stat.S_IMODE(info.st_mode):o}, not 700)"
        )


def _make_private(folder: Path) -> None:
    try:
        folder.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except FileNotFoundError:
        folder.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        folder.mkdir(mode=0o700, exist_ok=True)
    check_private(folder)


def _platform_dir() -> Path:
    import platformdirs

    if sys.platform.startswith("linux") and not os.environ.get("XDG_RUNTIME_DIR"):
        return _temp_dir()  # platformdirs would pick a folder in /tmp and warn; ours is named for us
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Path(platformdirs.user_runtime_dir(APP, appauthor=False))


def _temp_dir() -> Path:
    return Path(tempfile.gettempdir()) / f"{APP}-{os.getuid()}"
