"""Resumable SSE streams for legacy HTTP sessions (spec 2025-11-25, Resumability and Redelivery).

Every event of a session's POST response stream gets an id, `<stream>/<n>`, and is kept
in the session's `EventStore`. When a stream is dropped before its response (the
`drop_stream` tool), it ends with a priming event (the last id, and a `retry` hint) and
the rest of its events are only stored; a GET carrying `Last-Event-ID` replays the
events after that id, then follows the stream until its response has gone out. Events
of other streams are never replayed on it. A session keeps its last `MAX_STREAMS` streams.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable

import anyio

MAX_STREAMS = 32
RETRY_MS = 100  # the reconnection hint of the priming event


class StoredStream:
    """The events of one response stream, in order, and whether its response is among them."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.events: list[str] = []
        self.finished = False
        self._changed = anyio.Event()

    def event_id(self, number: int) -> str:
        return f"{self.key}/{number}"

    def add(self, text: str | None, last: bool = False) -> str:
        """Keep one event (None: nothing more, the request was cancelled); its id."""
        if text is not None:
            self.events.append(text)
        self.finished = self.finished or last
        changed, self._changed = self._changed, anyio.Event()
        changed.set()
        return self.event_id(len(self.events))

    async def replay(self, after: int, write: Callable[[str, str], Awaitable[None]]) -> None:
        """Write every event after number `after` with its id, following the stream until it finishes."""
        number = after
        while True:
            changed = self._changed
            while number < len(self.events):
                number += 1
                await write(self.event_id(number), self.events[number - 1])
            if self.finished:
                return
            await changed.wait()


class EventStore:
    """One legacy session's streams, newest last."""

    def __init__(self) -> None:
        self._streams: OrderedDict[str, StoredStream] = OrderedDict()
        self._opened = 0

    def open(self) -> StoredStream:
        self._opened += 1
        stream = StoredStream(f"s{self._opened}")
        self._streams[stream.key] = stream
        while len(self._streams) > MAX_STREAMS:
            self._streams.popitem(last=False)
        return stream

    def find(self, last_event_id: str) -> tuple[StoredStream, int] | None:
        """The stream an event id belongs to and the event's number, if we still have it."""
        key, _, number = last_event_id.partition("/")
        stream = self._streams.get(key)
        if stream is None or not number.isdigit() or int(number) > len(stream.events):
            return None
        return stream, int(number)
