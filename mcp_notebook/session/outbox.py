"""What a session writes: every frame encoded, traced and handed to the transport, and replies
to server requests, whose failure to go out is recorded, never raised.

Runs on the session thread, and on a caller's thread for a request its transport lets any
thread send (stdio): the lock keeps each frame's trace entry and its write together, in
order. The pong latency (from reading a ping to writing its answer) is
measured here, at the last moment we own the frame.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ..base.errors import ConnectionClosed
from ..protocol import jsonrpc as rpc
from ..transports.base import Transport
from .health import HealthCounters
from .trace import OUT, Trace


class Outbox:
    """The session's writer."""

    def __init__(self, transport: Transport, trace: Trace, counters: HealthCounters) -> None:
        self.transport = transport
        self.trace = trace
        self.counters = counters
        self.lock = threading.Lock()

    def send(
        self,
        message: dict[str, Any],
        kind: str,
        note: str | None = None,
        headers: dict[str, str] | None = None,
        opens: bool = False,
    ) -> None:
        """Write one frame now; ConnectionClosed if the transport cannot take it."""
        text = rpc.encode(message)
        with self.lock:
            entry = self.trace.frame(OUT, kind, text, message, method=message.get("method"), id=message.get("id"), note=note)
            self.counters.last_frame_out = entry.monotonic
            self.transport.send(text, message["id"] if kind == rpc.REQUEST else None, headers=headers, opens=opens)

    def send_reply(
        self, reply: dict[str, Any], request: dict[str, Any], note: str | None = None, read_at: float | None = None
    ) -> None:
        """Write a reply to a server request; one that cannot be written is dropped, never raised.

        `read_at` (perf_counter) is when the request was read, for the pong latency.
        """
        is_pong = request["method"] == "ping" and "result" in reply
        try:
            self.send(reply, rpc.RESPONSE if "result" in reply else rpc.ERROR, note)
        except ConnectionClosed as exc:
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
