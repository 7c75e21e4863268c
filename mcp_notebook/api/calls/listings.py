"""The list caches of one connection: each paginated listing (tools, prompts, resources,
resource templates) as last fetched, dropped when the server says the list changed.

A listing fetched while a `list_changed` arrived is not kept (`store` compares the count of
changes seen before the fetch began). The `list_changed` handlers run inline on the session
thread, in frame order, and only record.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ...session.session import Session
from ..results.objects import Listing

LIST_CHANGED = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/prompts/list_changed": ("prompts",),
    "notifications/resources/list_changed": ("resources", "resourceTemplates"),
}


class Listings:
    """The cached listings of one session, and how often each list changed."""

    def __init__(self, session: Session) -> None:
        self.lock = threading.Lock()
        self.cache: dict[str, Listing] = {}
        self.changes: dict[str, int] = {}
        for method in LIST_CHANGED:
            session.notification_handlers.set_inline(method, self._changed_handler(method))

    def cached(self, key: str) -> Listing | None:
        with self.lock:
            return self.cache.get(key)

    def changed(self, key: str) -> int:
        """How many times the server said the list `key` changed."""
        return self.changes.get(key, 0)

    def store(self, key: str, listing: Listing, changes_before: int) -> None:
        """Cache a listing unless a list_changed arrived while it was being fetched."""
        with self.lock:
            if self.changes.get(key, 0) == changes_before:
                self.cache[key] = listing

    def _changed_handler(self, method: str) -> Callable[[dict[str, Any]], Any]:
        def changed(params: dict[str, Any]) -> None:
            with self.lock:
                for key in LIST_CHANGED[method]:
                    self.cache.pop(key, None)
                    self.changes[key] = self.changes.get(key, 0) + 1

        return changed
