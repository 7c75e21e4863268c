"""The user's own files on a shared machine: the data directory, and files no one else reads.

The data directory is `platformdirs.user_data_dir("mcp-notebook")` (`~/.local/share/mcp-notebook`
on Linux, `~/Library/Application Support/mcp-notebook` on macOS, `%LOCALAPPDATA%\\mcp-notebook`
on Windows), or `$MCP_NOTEBOOK_DATA_DIR` where that is set; tokens, consent records and tool
pins all live under it.

The rule, on POSIX: a directory we keep files in is ours and 0700. One made here is made
0700; one found open to the group or others is closed (chmod 0700); one owned by someone
else, or that is not a directory, is refused (`UnsafeLocation`, an `OSError`) and nothing is
written there. A file is born 0600 (`mkstemp` opens it O_EXCL with that mode: there is no
moment it is readable by another), written whole, and renamed into place. A file read must
be ours: one owned by someone else is ignored (it could plant a consent or a pin), one left
open to others is closed first. On Windows, the per-user profile directory already keeps
others out, and these checks do not apply.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

DIRECTORY_MODE = 0o700
FILE_MODE = 0o600
CHECKED = hasattr(os, "geteuid")


class UnsafeLocation(OSError):
    """A directory or file that another user owns or could replace: not used."""


def data_dir() -> Path:
    """The user data directory (not created here)."""
    override = os.environ.get("MCP_NOTEBOOK_DATA_DIR")
    if override:
        return Path(override).expanduser()
    import platformdirs  # here: the directory is asked for only when something is remembered

    return Path(platformdirs.user_data_dir("mcp-notebook", appauthor=False))


def private_directory(path: Path) -> Path:
    """`path` as a directory of ours that only we can enter: made (its missing parents 0700
    too), repaired, or refused; below the data directory, every directory from there down."""
    missing = [folder for folder in (path, *path.parents) if not folder.exists()]
    for folder in reversed(missing):
        folder.mkdir(mode=DIRECTORY_MODE, exist_ok=True)
    if CHECKED:
        for folder in _chain(path):
            _check(folder)
    return path


def _chain(path: Path) -> list[Path]:
    """`path`, and the directories above it up to the data directory when it is under it."""
    root = data_dir()
    try:
        below = path.relative_to(root)
    except ValueError:
        return [path]
    return [root, *(root.joinpath(*below.parts[: i + 1]) for i in range(len(below.parts)))]


def _check(path: Path) -> None:
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode):
        info = os.stat(path)  # a link of ours may point to a directory of ours (a dotfiles setup)
    if not stat.S_ISDIR(info.st_mode):
        raise UnsafeLocation(f"{path} is not a directory: not keeping private files there")
    if info.st_uid != os.geteuid():
        raise UnsafeLocation(f"{path} belongs to another user (uid {info.st_uid}): not keeping private files there")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, DIRECTORY_MODE)


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` whole, readable by us alone from the moment it exists."""
    folder = private_directory(path.parent)
    descriptor, temporary = tempfile.mkstemp(dir=folder, prefix=f".{path.name}.")  # O_EXCL, mode 0600
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_private(path: Path) -> str | None:
    """The text of `path` if it is a file of ours (closed to others first); None otherwise."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0)
    try:
        descriptor = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(descriptor, "r", encoding="utf-8") as file:
        if CHECKED:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode) or info.st_uid != os.geteuid():
                return None
            if stat.S_IMODE(info.st_mode) & 0o077:
                os.fchmod(descriptor, FILE_MODE)
        try:
            return file.read()
        except (OSError, UnicodeDecodeError):
            return None


def owned_directory(path: Path) -> bool:
    """Whether `path` is an existing directory of ours that we may read from (repaired if open)."""
    if not path.is_dir():
        return False
    try:
        private_directory(path)
    except OSError:
        return False
    return True
