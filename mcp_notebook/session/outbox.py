"""What a session writes: every frame encoded, traced and handed to the transport, and replies
to server requests, whose failure to go out is recorded, never raised.

Runs on the session thread, on the stdio reading thread (pongs), and on a caller's thread for
a request its transport lets any thread send (stdio). The lock keeps each frame's trace entry
and its place on the wire together, in order, and is never held across a write: a transport
that takes frames in batches (`FrameBatches`) gets a queue, and the thread that finds nobody
writing writes what is queued, its own frame first, until the queue is empty, in as few writes
as the frames fit in; a thread that finds a write under way leaves its frame queued behind it
and returns (many callers: one write, no wait on the lock). A frame that was traced but not
written is reported to `lost` (request ids: the session fails those calls). The pong latency
(from reading a ping to writing its answer) is measured here, at the last moment we own the frame.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from ..base.errors import TransportClosed
from ..protocol import jsonrpc as rpc
from ..transports.base import FrameBatches, Transport
from .health import HealthCounters
from .trace import OUT, Trace

Lost = Callable[[list[Any], TransportClosed], None]  # (request ids whose frames were lost, why)


def _none_lost(ids: list[Any], error: TransportClosed) -> None:
    return None


class Outbox:
    """The session's writer."""

    def __init__(self, transport: Transport, trace: Trace, counters: HealthCounters, lost: Lost = _none_lost) -> None:
        self.transport = transport
        self.trace = trace
        self.counters = counters
        self.lost = lost
        self.lock = threading.Lock()
        batches = transport.sends_from_any_thread and isinstance(transport, FrameBatches)
        self._batches: FrameBatches | None = transport if batches else None  # type: ignore[assignment]
        self._queued: list[tuple[str, Any]] = []  # (text, request id or None), in trace order
        self._writing = False  # a thread is writing what is queued

    def send(
        self,
        message: dict[str, Any],
        kind: str,
        note: str | None = None,
        headers: dict[str, str] | None = None,
        opens: bool = False,
    ) -> None:
        """Write one frame now (or have the write under way take it); TransportClosed if the
        transport cannot take it."""
        text = rpc.encode(message)
        request_id = message["id"] if kind == rpc.REQUEST else None
        batches = self._batches
        with self.lock:
            if batches is not None:
                batches.writable()
            entry = self.trace.frame(OUT, kind, text, message, method=message.get("method"), id=message.get("id"), note=note)
            self.counters.last_frame_out = entry.monotonic
            if batches is None:
                self.transport.send(text, request_id, headers=headers, opens=opens)
                return
            self._queued.append((text, request_id))
            if self._writing:
                return  # the thread writing takes it with what else has queued
            self._writing = True
        self._write_queued(batches)

    def _write_queued(self, batches: FrameBatches) -> None:
        """Write what is queued until nothing is (this thread's own frame leads the first batch):
        TransportClosed for that batch is raised, the frames written with it reported lost."""
        try:
            self._drain(batches, own=True)
        except TransportClosed:
            raise
        except BaseException:  # interrupted (Ctrl-C on the main thread): what is queued still goes out, in order
            try:
                self._drain(batches, own=False)
            finally:
                with self.lock:
                    self._writing = False
            raise

    def _drain(self, batches: FrameBatches, own: bool) -> None:
        while True:
            with self.lock:
                batch, self._queued = self._queued, []
                if not batch:
                    self._writing = False
                    return
            try:
                batches.send_frames([text for text, _ in batch])
            except TransportClosed as exc:
                if not own:
                    self._lose(batch, exc)
                    continue
                with self.lock:
                    rest, self._queued, self._writing = self._queued, [], False
                self._lose(batch[1:] + rest, exc)
                raise
            own = False

    def _lose(self, batch: list[tuple[str, Any]], error: TransportClosed) -> None:
        ids = [request_id for _, request_id in batch if request_id is not None]
        if ids:
            self.lost(ids, error)

    def send_reply(
        self, reply: dict[str, Any], request: dict[str, Any], note: str | None = None, read_at: float | None = None
    ) -> None:
        """Write a reply to a server request; one that cannot be written is dropped, never raised.

        `read_at` (perf_counter) is when the request was read, for the pong latency.
        """
        is_pong = request["method"] == "ping" and "result" in reply
        try:
            self.send(reply, rpc.RESPONSE if "result" in reply else rpc.ERROR, note)
        except TransportClosed as exc:
            if is_pong:
                self.counters.pong_failures += 1
            self.trace.event("reply-dropped", note=str(exc), id=reply["id"], method=request["method"])
            return
        if is_pong:
            self.counters.pongs_sent += 1
            if read_at is not None:
                latency = time.perf_counter() - read_at
                self.counters.last_pong_latency = latency
                self.counters.pong_latencies.append(latency)
