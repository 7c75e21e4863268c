"""Small JSON files in the user data directory, written whole or not at all, ours alone.

Where the directory is, and how its files are kept from other users (0700, 0600 from birth,
files of another owner ignored), is `base.private`'s rule; this module reads and writes JSON
objects there.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from ..base import private

_lock = threading.Lock()


def data_dir() -> Path:
    return private.data_dir()


def load(name: str) -> dict[str, Any]:
    """The JSON object in `name` (empty when missing, unreadable, or not ours: these are caches
    of decisions, and one another user wrote is no decision of ours)."""
    folder = data_dir()
    if not private.owned_directory(folder):
        return {}
    text = private.read_private(folder / name)
    try:
        value = json.loads(text) if text is not None else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def update(name: str, change: Any) -> dict[str, Any]:
    """Apply `change(data)` to the object in `name` and write it back atomically (owner-only)."""
    with _lock:
        data = load(name)
        change(data)
        private.write_private(data_dir() / name, json.dumps(data, indent=1, sort_keys=True))
        return data
