"""The session's side of the transport contract: frames and wire events coming in.

Everything here runs on the session thread, called by the transport: a frame is
classified and dispatched the moment it is read (a server ping is answered before the
callback returns), a hang-up fails what is pending, and an expired HTTP session is
renewed. `Session` mixes this in; it is its own module because it is its own concept.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from ..base.errors import ConnectionClosed, StreamBroken, TransportClosed
from ..protocol import jsonrpc as rpc
from ..protocol.versions import accepts_batches
from .handlers import Handler, Handlers, call_handler, reply_from_handler
from .health import READY, RECONNECTING, HealthCounters
from .subscriptions import Subscription, route
from .trace import IN, Trace

if TYPE_CHECKING:
    from ..transports.base import Transport
    from .session import Pending


class Incoming:
    """Dispatch of what the transport pushes in; mixed into `Session`."""

    transport: Transport
    trace: Trace
    counters: HealthCounters
    protocol_version: str | None
    request_handlers: Handlers
    notification_handlers: Handlers
    _pending: dict[int, Pending]
    _cancelled: OrderedDict[int, str]
    _handler_scopes: dict[rpc.RequestId, anyio.CancelScope]
    _task_group: anyio.abc.TaskGroup | None
    _stop: anyio.Event
    _hangup: ConnectionClosed | None
    _read_at: float
    _recovering: bool
    _lost: list[Pending]
    _ids: Iterator[int]
    era: str
    subscriptions: set[Subscription]


    def frame_received(self, text: str, via: str | None = None) -> None:
        """The transport read a frame: dispatch it now, on the session thread."""
        self._read_at = time.perf_counter()
        try:
            self._dispatch(text, rpc.decode(text), via=via)
        except Exception as exc:  # noqa: BLE001 - one bad frame never ends the session
            self.trace.event("dispatch-error", note=f"{type(exc).__name__}: {exc}")

    def _dispatch(self, text: str, frame: rpc.Frame, *, record: bool = True, via: str | None = None) -> None:
        kind, message, note = frame.kind, frame.message, frame.problem
        pending = None
        if kind in (rpc.RESPONSE, rpc.ERROR):
            request_id = message["id"]
            if rpc.is_valid_id(request_id) and isinstance(request_id, int):
                pending = self._pending.pop(request_id, None)
                if pending is None and request_id in self._cancelled:
                    note = f"late response, ignored ({self._cancelled[request_id]})"
            if pending is None and note is None:
                note = "response to no request of ours, ignored"
        elif kind == rpc.BATCH and not accepts_batches(self.protocol_version):
            kind, note = rpc.INVALID, f"batches are not allowed in protocol {self.protocol_version}"
        if record:
            method = pending.method if pending is not None else frame.method
            entry = self.trace.frame(IN, kind, text, message, method=method, id=frame.id, note=note, via=via)
            self.counters.last_frame_in = entry.monotonic
        if pending is not None:
            pending.received_at = time.perf_counter()
            self._settle(pending, response=message)
        elif kind == rpc.REQUEST:
            self._on_request(message)
        elif kind == rpc.NOTIFICATION:
            self._on_notification(message)
        elif kind == rpc.BATCH:
            for item in message:
                self._dispatch(text, rpc.classify(item), record=False)
        elif kind == rpc.INVALID:
            self.counters.invalid_frames += 1
            if self.transport.kind != "stdio" and isinstance(message, dict) and isinstance(message.get("method"), str):
                # Over HTTP the server's POST or stream waits on an answer: a request whose id we
                # cannot echo gets Method not found without an id (stdio: no answer at all).
                reply = {"jsonrpc": rpc.JSONRPC, "error": {"code": rpc.METHOD_NOT_FOUND, "message": "Method not found: the request id is not a string or an integer"}}
                try:
                    self._send(reply, rpc.ERROR, note="reply to an invalid request")
                except TransportClosed:
                    pass

    def _on_request(self, request: dict[str, Any]) -> None:
        method = request["method"]
        if self.era == "modern":
            # 2026-07-28 has no server-to-client requests (input comes through input_required
            # results), so nothing here is answered, a ping included.
            self.trace.event("unanswered", note="server requests do not exist in 2026-07-28", method=method, id=request["id"])
            return
        if method == "ping":
            self.counters.server_pings += 1
        handler = self.request_handlers.get(method)
        if handler is not None and self._task_group is not None:
            self._task_group.start_soon(self._serve_with_handler, handler, request, self._read_at)
        elif method == "ping":
            self._send_reply(rpc.result(request["id"], {}), request, note="pong", read_at=self._read_at)
        else:
            self._send_reply(rpc.error(request["id"], rpc.METHOD_NOT_FOUND, f"Method not found: {method}"), request)

    async def _serve_with_handler(self, handler: Handler, request: dict[str, Any], read_at: float) -> None:
        request_id = request["id"]
        with anyio.CancelScope() as scope:
            self._handler_scopes[request_id] = scope
            try:
                reply, problem = await reply_from_handler(handler, request)
            finally:
                self._handler_scopes.pop(request_id, None)
            if problem:
                self.trace.event("handler-error", note=problem, method=request["method"])
            self._send_reply(reply, request, note="from user handler", read_at=read_at)
        if scope.cancelled_caught:
            self.trace.event("handler-cancelled", id=request_id, method=request["method"])

    def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params") or {}
        if self.subscriptions:
            route(self.subscriptions, method, params)
        if method == "notifications/cancelled" and isinstance(params, dict):
            scope = self._handler_scopes.get(params.get("requestId"))  # type: ignore[arg-type]
            if scope is not None:
                scope.cancel()
        inline = self.notification_handlers.inline(method)
        if inline is not None:
            try:
                inline(params)
            except Exception as exc:  # noqa: BLE001 - bookkeeping never ends the session
                self.trace.event("handler-error", note=f"{type(exc).__name__}: {exc}", method=method)
        handler = self.notification_handlers.get(method)
        if handler is not None and self._task_group is not None:
            self._task_group.start_soon(self._notify_handler, handler, params)

    async def _notify_handler(self, handler: Handler, params: dict[str, Any]) -> None:
        try:
            await call_handler(handler, params)
        except Exception as exc:  # noqa: BLE001 - never let a user callback kill the session
            self.trace.event("handler-error", note=f"{type(exc).__name__}: {exc}")

    def hung_up(self) -> None:
        """The transport lost its peer: fail what is pending, once we know why."""
        if self._task_group is not None:  # else we are closing: run() has ended the session
            self._task_group.start_soon(self._after_hangup)

    def awaiting(self, request_id: rpc.RequestId) -> bool:
        return request_id in self._pending

    def send_failed(self, request_id: rpc.RequestId | None, error: Exception) -> None:
        """A frame never reached the server: a request fails with the transport's explanation.

        A modern response stream that broke before its response is re-issued once, with a new id.
        """
        pending = self._pending.pop(request_id, None) if isinstance(request_id, int) else None
        if pending is None:
            return
        if isinstance(error, StreamBroken) and not pending.resent:
            pending.resent, pending.id = True, next(self._ids)
            self._pending[pending.id] = pending
            self._send_request(pending, note=f"re-issued: the stream of request {request_id} broke")
            return
        self._settle(pending, failure=error)

    def session_expired(self, request_id: rpc.RequestId | None, current: bool = True) -> None:
        """The server forgot our session: shake hands anew and resend what it lost, once."""
        pending = self._pending.get(request_id) if isinstance(request_id, int) else None
        if pending is not None:
            if pending.resent:
                self._pending.pop(pending.id)
                self._settle(pending, failure=ConnectionClosed(
                    f"{pending.method}: the server forgot the session again after it was renewed"))
            else:
                self._lost.append(pending)
        if self._recovering:
            return
        if not current:  # a 404 for a session we have already replaced: just resend
            self._resend_lost()
        elif self._task_group is not None and self.counters.state == READY:
            self._recovering = True
            self._task_group.start_soon(self._recover)

    async def _recover(self) -> None:
        self.set_state(RECONNECTING, "HTTP 404: the server no longer knows our session")
        self.counters.session_recoveries += 1
        self.transport.reset_session()
        try:
            await self._handshake()
        except Exception as exc:  # noqa: BLE001 - the connection ends with the reason
            self._recovering = False
            self._hangup = ConnectionClosed(f"the session expired and a new one could not be started: {exc}")
            self.counters.closed_reason = self._hangup.reason
            self._fail_pending(self._hangup)
            self._stop.set()
            return
        self._recovering = False
        resent = self._resend_lost()
        self.set_state(READY, f"new session; {resent} request(s) resent")

    def _resend_lost(self) -> int:
        lost, self._lost = self._lost, []
        count = 0
        for pending in lost:
            if pending.settled:
                continue
            pending.resent = True
            count += 1
            try:
                self._send(rpc.request(pending.id, pending.method, pending.params), rpc.REQUEST, note="resent in a new session")
            except TransportClosed as exc:
                self._pending.pop(pending.id, None)
                self._settle(pending, failure=self._closed_error(str(exc)))
        return count

    async def _after_hangup(self) -> None:
        code = await self.transport.wait_exit(timeout=2.0)
        if code is not None:
            reason = f"the server exited with code {code}"
        else:
            reason = getattr(self.transport, "hangup_reason", None) or "the server closed its output"
        self._hangup = ConnectionClosed(reason, exit_code=code, stderr_tail=tuple(self.transport.stderr_tail))
        if self.counters.closed_reason is None:
            self.counters.closed_reason = reason
        self._fail_pending(self._hangup)
        self._stop.set()
