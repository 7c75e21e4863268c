"""`AppHost`: what one connection keeps for MCP Apps: whether they are on, the `ui://`
resources fetched (each kept until the server says the resource or the resource list
changed), the views open on it (torn down when the connection closes), and which tools
were already reported for naming their view with the deprecated flat key.

Plain bookkeeping, safe from any thread; fetching and rendering are `apps.methods`'s.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any

from ..calls.core import Featured

Stamp = tuple[int, int]  # (resource list changes, updates of the resource) when it was read


@dataclass(frozen=True)
class AppResource:
    """A fetched view: its HTML and its `_meta.ui` (csp, permissions, prefersBorder, ...)."""

    uri: str
    html: str
    ui: dict[str, Any]


class AppHost:
    """Per-connection MCP Apps state (see the module docstring)."""

    def __init__(self, enabled: bool = False) -> None:
        self.enabled = enabled
        self.fetches = 0  # resources/read of views done so far (the cache's misses)
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[Stamp, AppResource]] = {}
        self._views: weakref.WeakSet[Any] = weakref.WeakSet()
        self.warned: set[str] = set()

    def cached(self, uri: str, stamp: Stamp) -> AppResource | None:
        with self._lock:
            kept = self._cache.get(uri)
        return kept[1] if kept is not None and kept[0] == stamp else None

    def store(self, resource: AppResource, stamp: Stamp) -> None:
        with self._lock:
            self._cache[resource.uri] = (stamp, resource)
            self.fetches += 1

    def add(self, view: Any) -> None:
        with self._lock:
            self._views.add(view)

    def views(self) -> list[Any]:
        with self._lock:
            return list(self._views)

    def close_views(self, reason: str) -> None:
        """Ask every live view to tear down (the connection is closing)."""
        for view in self.views():
            view.teardown(reason)

    def first_warning(self, tool: str) -> bool:
        """True the first time `tool` is reported (for the flat-key deprecation warning)."""
        with self._lock:
            if tool in self.warned:
                return False
            self.warned.add(tool)
            return True


def of(conn: Featured) -> AppHost:
    """The MCP Apps state `conn` keeps (on its core, added as it connected)."""
    return conn._core.get(AppHost)
