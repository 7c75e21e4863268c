"""What a session writes: every frame encoded, traced and handed to the transport, and replies
to server requests, whose failure to go out is recorded, never raised.

Runs on the session thread, on the stdio reading thread (pongs), and on a caller's thread for
a request its transport lets any thread send (stdio). The lock keeps each frame's trace entry
and its place on the wire together, in order, and is never held across a write: a transport
that takes frames in batches (`FrameBatches`) gets a queue, and the thread that finds nobody
writing writes what is queued, its own frame first, until the queue is empty, in as few writes
as the frames fit in; a thread that finds a write under way leaves its frame queued behind it
and returns (many callers: one write, no wait on the lock). A frame that was traced but not
written is reported to `lost` (request ids: the session fails those calls); a reply is
accounted for (sent, or dropped and recorded) by whichever thread wrote it or failed to. The
pong latency (from reading a ping to writing its answer) is measured when the pong is written.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any, NamedTuple

from ..base.errors import ConnectionClosed
from ..protocol import jsonrpc as rpc
from ..transports.base import FrameBatches, Transport
from .health import HealthCounters
from .trace import OUT, Trace

Lost = Callable[[list[Any], ConnectionClosed], None]  # (request ids whose frames were lost, why)


class Reply(NamedTuple):
    """A reply to a server request, as the outbox accounts for it once it is written or dropped."""

    id: Any
    method: str
    pong: bool
    read_at: float | None  # perf_counter when its request was read (a pong's latency)


Queued = tuple[str, Any, Reply | None]  # text, request id (a request of ours) or None, a reply


def _none_lost(ids: list[Any], error: ConnectionClosed) -> None:
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
        self._queued: list[Queued] = []  # in trace order
        self._writing = False  # a thread is writing what is queued

    def send(
        self,
        message: dict[str, Any],
        kind: str,
        note: str | None = None,
        headers: dict[str, str] | None = None,
        opens: bool = False,
        reply: Reply | None = None,
    ) -> None:
        """Write one frame now (or have the write under way take it); ConnectionClosed if the
        transport cannot take it (a `reply` is accounted for either way)."""
        text = rpc.encode(message)
        request_id = message["id"] if kind == rpc.REQUEST else None
        batches = self._batches
        with self.lock:
            try:
                if batches is not None:
                    batches.writable()
                entry = self.trace.frame(OUT, kind, text, message, method=message.get("method"), id=message.get("id"), note=note)
                self.counters.last_frame_out = entry.monotonic
                if batches is None:
                    self.transport.send(text, request_id, headers=headers, opens=opens)
            except ConnectionClosed as exc:
                if reply is not None:
                    self._dropped(reply, exc)
                raise
            if batches is None:
                if reply is not None:
                    self._replied(reply)
                return
            self._queued.append((text, request_id, reply))
            if self._writing:
                return  # the thread writing takes it with what else has queued
            self._writing = True
        self._write_queued(batches)

    def _write_queued(self, batches: FrameBatches) -> None:
        """Write what is queued until nothing is (this thread's own frame leads the first batch):
        ConnectionClosed for that batch is raised, the frames written with it reported lost."""
        try:
            self._drain(batches, own=True)
        except ConnectionClosed:
            raise
        except BaseException:  # interrupted (Ctrl-C on the main thread): what is queued still goes out, in order
            try:
                self._drain(batches, own=False)
            finally:
                with self.lock:  # interrupted again: what is left is lost, never stranded
                    rest, self._queued, self._writing = self._queued, [], False
                if rest:
                    self._lose(rest, ConnectionClosed("interrupted while writing to the server"))
            raise

    def _drain(self, batches: FrameBatches, own: bool) -> None:
        while True:
            with self.lock:
                batch, self._queued = self._queued, []
                if not batch:
                    self._writing = False
                    return
            try:
                batches.send_frames([text for text, _, _ in batch])
            except ConnectionClosed as exc:
                if not own:
                    self._lose(batch, exc)
                    continue
                with self.lock:
                    rest, self._queued, self._writing = self._queued, [], False
                self._lose(batch + rest, exc, skip_request=True)
                raise
            own = False
            for _, _, reply in batch:
                if reply is not None:
                    self._replied(reply)

    def _lose(self, batch: list[Queued], error: ConnectionClosed, skip_request: bool = False) -> None:
        """Frames that did not go out: replies dropped, requests reported (but the first's, when
        `skip_request`: its sender hears of it from the ConnectionClosed raised to it)."""
        ids = [request_id for _, request_id, _ in batch[1 if skip_request else 0 :] if request_id is not None]
        for _, _, reply in batch:
            if reply is not None:
                self._dropped(reply, error)
        if ids:
            self.lost(ids, error)

    def _replied(self, reply: Reply) -> None:
        if reply.pong:
            self.counters.pongs_sent += 1
            if reply.read_at is not None:
                latency = time.perf_counter() - reply.read_at
                self.counters.last_pong_latency = latency
                self.counters.pong_latencies.append(latency)

    def _dropped(self, reply: Reply, error: ConnectionClosed) -> None:
        if reply.pong:
            self.counters.pong_failures += 1
        self.trace.event("reply-dropped", note=str(error), id=reply.id, method=reply.method)

    def send_reply(
        self, reply: dict[str, Any], request: dict[str, Any], note: str | None = None, read_at: float | None = None
    ) -> None:
        """Write a reply to a server request; one that cannot be written is dropped and recorded,
        never raised. `read_at` (perf_counter) is when the request was read, for the pong latency."""
        method = request["method"]
        accounted = Reply(reply["id"], method, method == "ping" and "result" in reply, read_at)
        try:
            self.send(reply, rpc.RESPONSE if "result" in reply else rpc.ERROR, note, reply=accounted)
        except ConnectionClosed:
            pass  # recorded as dropped already
