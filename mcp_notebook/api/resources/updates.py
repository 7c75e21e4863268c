"""A connection's resource subscriptions and the updates the server sent, counted.

Updates are counted for the subscribed resources and the UPDATED_URIS most recently updated
others (the server names the URIs), and in all; the newest updates are kept with their time.
The `notifications/resources/updated` handler records on the session thread and runs each
subscription's callback in a worker thread, never on the frame path.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import anyio.to_thread

from ...session.session import Session
from ..calls.core import Featured

UPDATED_URIS = 1000  # resources whose updates are counted one by one, besides those subscribed
UPDATE_HISTORY = 1000  # updates kept with their time


class ResourceUpdates:
    """One connection's subscriptions (legacy: callbacks by URI; modern: each URI's listen) and updates."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.lock = threading.Lock()
        self.subscriptions: dict[str, list[Callable[[str], Any]]] = {}
        self.listens: dict[str, Any] = {}  # modern: uri -> its subscriptions/listen Subscription
        self.updates: deque[tuple[str, float]] = deque(maxlen=UPDATE_HISTORY)
        self.counts: dict[str, int] = {}  # by resource, the most recently updated UPDATED_URIS (and all subscribed)
        self.total = 0
        session.notification_handlers.set("notifications/resources/updated", self._on_updated)

    async def _on_updated(self, params: dict[str, Any]) -> None:
        uri = str(params.get("uri", ""))
        self.updates.append((uri, time.time()))
        with self.lock:
            counts = self.counts
            counts[uri] = counts.pop(uri, 0) + 1  # last in the dict: the most recently updated
            self.total += 1
            if len(counts) > UPDATED_URIS:  # the server names the URIs: the longest unheard of one not subscribed goes
                gone = next((old for old in counts if old not in self.subscriptions), None)
                if gone is not None:
                    del counts[gone]
            callbacks = list(self.subscriptions.get(uri, ()))
        for callback in callbacks:  # user code: in a worker thread, never on the frame path
            await anyio.to_thread.run_sync(callback, uri, abandon_on_cancel=True)


def of(conn: Featured) -> ResourceUpdates:
    """The subscriptions and updates `conn` keeps (the live store)."""
    return conn._core.get(ResourceUpdates)
