"""The open taps, by name: `tap(NAME)` again finds the open one, the magics and Tab completion
read the names, and every tap is closed when the runtime stops (interpreter exit, kernel
shutdown), as connections are.

It imports nothing heavy (no listener, no observer), so completion can list names cheaply.
"""

from __future__ import annotations

import threading
from typing import Any

_taps: dict[str, Any] = {}  # name -> Tap (typed loosely: the Tap imports this module)
_lock = threading.RLock()


def taps() -> dict[str, Any]:
    """Every open tap, by name."""
    with _lock:
        return dict(_taps)


def names() -> list[str]:
    with _lock:
        return sorted(_taps)


def find(name: str) -> Any | None:
    with _lock:
        return _taps.get(name)


def remember(tap: Any) -> None:
    with _lock:
        _taps[tap.name] = tap


def forget(tap: Any) -> None:
    with _lock:
        if _taps.get(tap.name) is tap:
            del _taps[tap.name]


def close_all() -> None:
    """Close every open tap (the runtime's stop hook calls this on the loop's way out)."""
    for tap in list(taps().values()):
        tap.close()
