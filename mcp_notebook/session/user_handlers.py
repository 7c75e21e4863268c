"""The user handlers a connection runs for the server, bounded: a flood never grows them.

Every server notification or request with a user handler runs it as a task of its own, so a
slow handler never holds up the frames behind it, and the reader never waits for one (a
handler may wait for an answer the same reader must read: over stdio, waiting would deadlock).
What bounds them instead (`Bound`): at most LIMIT tasks and LIMIT_BYTES of their frames' text
for the server's notifications, and as many for its requests, per connection, counting each
from its frame until its handler returns. Beyond that a notification is dropped and counted,
and a request is answered at once with a JSON-RPC error saying the client is busy, so the
server never waits for an answer that will not come; a ping beyond it gets the built-in pong
(pings are never refused), and a ping with no handler of the user's never comes here. The first
one turned away in a row is a notice in the trace, and the end of the run another; the counts
are in the health (`notifications_dropped`, `requests_refused`).
"""

from __future__ import annotations

from typing import Any

import anyio

from ..base.plural import counted
from ..protocol import jsonrpc as rpc
from .handlers import Handler, call_handler, reply_from_handler
from .port import SessionPort

LIMIT = 1000  # handler tasks of one kind (notifications, requests) running or waiting to run, per connection
LIMIT_BYTES = 64 * 1024 * 1024  # nor more frame text than this held for them (one frame of any size is always taken)


class Bound:
    """The handler tasks of one kind: how many, how much text, and those turned away."""

    def __init__(self, noun: str, limit: int, limit_bytes: int) -> None:
        self.noun = noun  # "notification" or "request"
        self.limit = limit
        self.limit_bytes = limit_bytes
        self.tasks = 0
        self.bytes = 0
        self.in_row = 0  # turned away since the last one taken

    def take(self, size: int) -> bool:
        """Room for one more task holding `size` characters of text: counted until `release`."""
        if self.tasks and (self.tasks >= self.limit or self.bytes + size > self.limit_bytes):
            self.in_row += 1
            return False
        self.tasks += 1
        self.bytes += size
        return True

    def release(self, size: int) -> None:
        self.tasks -= 1
        self.bytes -= size


class UserHandlers:
    """The user's handlers of one session's server notifications and requests, as bounded tasks."""

    def __init__(self, session: SessionPort) -> None:
        self.session = session
        self.notifications = Bound("notification", LIMIT, LIMIT_BYTES)
        self.requests = Bound("request", LIMIT, LIMIT_BYTES)
        self._scopes: dict[rpc.RequestId, anyio.CancelScope] = {}  # bounded by `requests`

    def notify(self, handler: Handler, method: str, params: dict[str, Any], size: int) -> None:
        """Run `handler(params)` for a notification, or drop it (counted) while the handlers are full."""
        if not self._admit(self.notifications, method, size):
            self.session.counters.notifications_dropped += 1
            return
        self.session.spawn(self._notify, handler, params, size)

    def serve(self, handler: Handler, request: dict[str, Any], read_at: float, size: int) -> bool:
        """Answer a request with `handler`, or with a busy error while the handlers are full;
        False for a ping that did not fit (the caller answers it with the built-in pong)."""
        method = request["method"]
        if self._admit(self.requests, method, size):
            self.session.spawn(self._serve, handler, request, read_at, size)
            return True
        if method == "ping":
            return False
        self.session.counters.requests_refused += 1
        message = (
            f"the client is busy: {counted(self.requests.tasks, 'earlier request')} of this server still "
            "wait for their handlers; try again later"
        )
        self.session.outbox.send_reply(rpc.error(request["id"], rpc.INTERNAL_ERROR, message), request, note="refused: busy")
        return True

    def cancel(self, request_id: Any) -> None:
        """The server cancelled its request: its handler is cancelled, if it still runs."""
        scope = self._scopes.get(request_id)
        if scope is not None:
            scope.cancel()

    def _admit(self, bound: Bound, method: str, size: int) -> bool:
        """Whether `bound` has room; the first turned away in a row, and the first taken after
        a run of them, are notices in the trace."""
        trace = self.session.trace
        in_row = bound.in_row
        if not bound.take(size):
            if bound.in_row == 1:
                turned = "dropped" if bound is self.notifications else "answered 'busy'"
                trace.event(
                    "handlers-full",
                    note=f"{counted(bound.tasks, bound.noun)} of the server's wait for their handlers: "
                    f"{method} and the next ones are {turned} until they catch up",
                    method=method,
                )
            return False
        if in_row:
            bound.in_row = 0
            turned = "dropped" if bound is self.notifications else "answered 'busy'"
            trace.event("handlers-caught-up", note=f"the handlers caught up; {counted(in_row, bound.noun)} {turned} meanwhile")
        return True

    async def _notify(self, handler: Handler, params: dict[str, Any], size: int) -> None:
        try:
            await call_handler(handler, params)
        except Exception as exc:  # noqa: BLE001 - never let a user callback kill the session
            self.session.trace.event("handler-error", note=f"{type(exc).__name__}: {exc}")
        finally:
            self.notifications.release(size)

    async def _serve(self, handler: Handler, request: dict[str, Any], read_at: float, size: int) -> None:
        request_id = request["id"]
        try:
            with anyio.CancelScope() as scope:
                self._scopes[request_id] = scope
                try:
                    reply, problem = await reply_from_handler(handler, request)
                finally:
                    self._scopes.pop(request_id, None)
                if problem:
                    self.session.trace.event("handler-error", note=problem, method=request["method"])
                self.session.outbox.send_reply(reply, request, note="from user handler", read_at=read_at)
            if scope.cancelled_caught:
                self.session.trace.event("handler-cancelled", id=request_id, method=request["method"])
        finally:
            self.requests.release(size)
