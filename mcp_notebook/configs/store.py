"""The user data directory, and small JSON files in it written whole or not at all.

The directory is `platformdirs.user_data_dir("mcp-notebook")` (`~/.local/share/mcp-notebook` on
Linux, `~/Library/Application Support/mcp-notebook` on macOS, `%LOCALAPPDATA%\\mcp-notebook`
on Windows), or `$MCP_NOTEBOOK_DATA_DIR` where that is set. platformdirs knows each OS's rule
(XDG variables included), so we keep none of those rules ourselves.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import platformdirs

_lock = threading.Lock()


def data_dir() -> Path:
    override = os.environ.get("MCP_NOTEBOOK_DATA_DIR")
    return Path(override).expanduser() if override else Path(platformdirs.user_data_dir("mcp-notebook", appauthor=False))


def load(name: str) -> dict[str, Any]:
    """The JSON object in `name` (empty when missing or unreadable: these are caches of decisions)."""
    try:
        value = json.loads((data_dir() / name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def update(name: str, change: Any) -> dict[str, Any]:
    """Apply `change(data)` to the object in `name` and write it back atomically (owner-only)."""
    with _lock:
        data = load(name)
        change(data)
        folder = data_dir()
        folder.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(data, out, indent=1, sort_keys=True)
            os.chmod(tmp, 0o600)
            os.replace(tmp, folder / name)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return data
