"""A handshake-era MCP session: requests and responses, server requests, the handshake.

The session reads every frame the moment it arrives, so a server `ping` is answered at
once whatever the caller is doing. It knows nothing of IPython or of threads: the
runtime runs it on its event loop.
"""

from __future__ import annotations

import inspect
import itertools
import sys
import time
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio
import anyio.abc

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

from . import _jsonrpc as rpc
from ._about import CLIENT_NAME, __version__
from ._errors import ConnectionClosed, HandshakeError, McpError, RequestTimeout, TransportClosed
from ._health import CLOSED, CLOSING, READY, HealthCounters
from ._trace import IN, OUT, Trace
from ._versions import LATEST_LEGACY, LEGACY_VERSIONS, accepts_batches

Handler = Callable[[dict[str, Any]], Any] | Callable[[dict[str, Any]], Awaitable[Any]]

RTT_HISTORY = 1000
REMEMBERED_CANCELLATIONS = 1000


class Transport(Protocol):
    """What a session needs from a transport: frames in, frames out, and a way to stop."""

    kind: str
    exit_code: int | None
    stderr_tail: deque[str]

    def describe(self) -> str: ...
    async def open(self, task_group: anyio.abc.TaskGroup) -> None: ...
    async def send(self, text: str) -> None: ...
    async def receive(self) -> str: ...
    async def wait_exit(self, timeout: float) -> int | None: ...
    async def aclose(self) -> None: ...


class _Pending:
    """A request of ours that awaits its response."""

    __slots__ = ("method", "done", "response", "failure", "sent_at", "received_at")

    def __init__(self, method: str) -> None:
        self.method = method
        self.done = anyio.Event()
        self.response: dict[str, Any] | None = None
        self.failure: BaseException | None = None
        self.sent_at = 0.0
        self.received_at = 0.0

    def outcome(self) -> Any:
        if self.failure is not None:
            raise self.failure
        assert self.response is not None
        if "error" in self.response:
            err = self.response["error"]
            raise McpError(err["code"], str(err.get("message", "")), err.get("data"), method=self.method)
        return self.response["result"]


class Session:
    """One legacy-era session over one transport, driven from one event loop."""

    era = "legacy"

    def __init__(
        self,
        transport: Transport,
        *,
        trace: Trace,
        timeout: float | None = 60.0,
        protocol_version: str = LATEST_LEGACY,
        client_info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        if protocol_version not in LEGACY_VERSIONS:
            raise ValueError(f"unknown legacy protocol version {protocol_version!r}; use one of {', '.join(LEGACY_VERSIONS)}")
        self.transport = transport
        self.trace = trace
        self.timeout = timeout
        self.requested_version = protocol_version
        self.client_info = client_info or {"name": CLIENT_NAME, "version": __version__}
        self.capabilities = capabilities or {}
        self.protocol_version: str | None = None
        self.server_info: dict[str, Any] | None = None
        self.server_capabilities: dict[str, Any] = {}
        self.instructions: str | None = None
        self.counters = HealthCounters()
        self.rtts: deque[float] = deque(maxlen=RTT_HISTORY)
        self._ids = itertools.count(1)
        self._pending: dict[int, _Pending] = {}
        self._cancelled: OrderedDict[int, str] = OrderedDict()
        self._request_handlers: dict[str, Handler] = {}
        self._notification_handlers: dict[str, Handler] = {}
        self._handler_scopes: dict[rpc.RequestId, anyio.CancelScope] = {}
        self._task_group: anyio.abc.TaskGroup | None = None
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._failure: BaseException | None = None
        self._hangup: ConnectionClosed | None = None

    # ----- lifecycle -------------------------------------------------------------

    async def run(self) -> None:
        """Open the transport, shake hands, serve frames until closed. Never raises."""
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                await self.transport.open(tg)
                tg.start_soon(self._read_loop)
                await self._handshake()
                self._set_state(READY, f"protocol {self.protocol_version}")
                self._ready.set()
                await self._stop.wait()
                tg.cancel_scope.cancel()
        except BaseException as exc:  # noqa: BLE001 - reported through wait_ready()
            self._failure = _startup_error(_unwrap(exc), self._hangup)
            if not isinstance(exc, Exception):
                raise
        finally:
            with anyio.CancelScope(shield=True):
                self._set_state(CLOSING, self.counters.closed_reason or "closing")
                await self.transport.aclose()
            self._fail_pending(self._hangup or ConnectionClosed("the connection was closed"))
            self._set_state(CLOSED, self.counters.closed_reason or "closed by the client")
            self._ready.set()
            self._done.set()

    async def wait_ready(self) -> None:
        """Wait for the handshake; raise what made it fail."""
        await self._ready.wait()
        if self._failure is not None:
            raise self._failure
        if self.counters.state != READY:
            raise self._hangup or ConnectionClosed("the connection was closed during the handshake")

    async def close(self) -> None:
        """Close the connection and wait until the server process is gone."""
        if self.counters.closed_reason is None:
            self.counters.closed_reason = "closed by the client"
        self._stop.set()
        await self._done.wait()

    @property
    def closed(self) -> bool:
        return self._stop.is_set() or self._done.is_set()

    async def _handshake(self) -> None:
        params = {
            "protocolVersion": self.requested_version,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        result = await self.request("initialize", params)
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if version not in LEGACY_VERSIONS:
            raise HandshakeError(
                f"the server answered with protocol version {version!r}, which this client does not speak "
                f"(it speaks {', '.join(LEGACY_VERSIONS)}); disconnected"
            )
        self.protocol_version = version
        self.server_info = result.get("serverInfo")
        self.server_capabilities = result.get("capabilities") or {}
        self.instructions = result.get("instructions")
        await self.notify("notifications/initialized")

    # ----- outgoing --------------------------------------------------------------

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send a request and return its result; a JSON-RPC error raises McpError."""
        return (await self._round_trip(method, params, timeout)).outcome()

    async def ping(self, *, timeout: float | None = None) -> float:
        """Ping the server; the round-trip time in seconds, measured on the session thread."""
        self.counters.pings_sent += 1
        try:
            pending = await self._round_trip("ping", None, timeout)
            pending.outcome()
        except BaseException:
            self.counters.ping_failures += 1
            raise
        rtt = pending.received_at - pending.sent_at
        self.counters.last_rtt = rtt
        self.rtts.append(rtt)
        return rtt

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._check_open()
        try:
            await self._send(rpc.notification(method, params), rpc.NOTIFICATION)
        except TransportClosed as exc:
            raise self._closed_error(str(exc)) from None

    async def _round_trip(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> _Pending:
        self._check_open()
        request_id = next(self._ids)
        pending = self._pending[request_id] = _Pending(method)
        limit = self.timeout if timeout is None else timeout
        try:
            with anyio.fail_after(limit):
                pending.sent_at = time.perf_counter()
                await self._send(rpc.request(request_id, method, params), rpc.REQUEST)
                await pending.done.wait()
        except TimeoutError:
            await self._cancel_remotely(request_id, method, f"timed out after {limit:g} s")
            raise RequestTimeout(f"{method}: no response within {limit:g} s; the request was cancelled") from None
        except anyio.get_cancelled_exc_class():
            if not pending.done.is_set():
                with anyio.CancelScope(shield=True):
                    await self._cancel_remotely(request_id, method, "cancelled by the user")
            raise
        except TransportClosed as exc:
            raise self._closed_error(str(exc)) from None
        finally:
            del self._pending[request_id]
        return pending

    async def _cancel_remotely(self, request_id: int, method: str, reason: str) -> None:
        """Tell the server we gave up on a request, and remember to ignore its late answer."""
        self._cancelled[request_id] = reason
        while len(self._cancelled) > REMEMBERED_CANCELLATIONS:
            self._cancelled.popitem(last=False)
        if method == "initialize" or self.closed:  # the spec forbids cancelling initialize
            return
        try:
            await self._send(rpc.notification("notifications/cancelled", {"requestId": request_id, "reason": reason}), rpc.NOTIFICATION)
        except TransportClosed:
            pass

    async def _send(self, message: dict[str, Any], kind: str, note: str | None = None) -> None:
        text = rpc.encode(message)
        entry = self.trace.frame(OUT, kind, text, message, method=message.get("method"), id=message.get("id"), note=note)
        self.counters.last_frame_out = entry.monotonic
        await self.transport.send(text)

    async def _send_reply(self, reply: dict[str, Any], request: dict[str, Any], note: str | None = None) -> None:
        """Write a reply to a server request; a reply that cannot be written is dropped, never raised."""
        is_pong = request["method"] == "ping" and "result" in reply
        try:
            await self._send(reply, rpc.RESPONSE if "result" in reply else rpc.ERROR, note)
        except TransportClosed as exc:
            if is_pong:
                self.counters.pong_failures += 1
            self.trace.event("reply-dropped", note=str(exc), id=reply["id"], method=request["method"])
            return
        if is_pong:
            self.counters.pongs_sent += 1

    # ----- incoming --------------------------------------------------------------

    async def _read_loop(self) -> None:
        try:
            while True:
                text = await self.transport.receive()
                try:
                    await self._dispatch(text, rpc.decode(text))
                except Exception as exc:  # noqa: BLE001 - one bad frame never ends the session
                    self.trace.event("dispatch-error", note=f"{type(exc).__name__}: {exc}")
        except anyio.EndOfStream:
            pass
        code = await self.transport.wait_exit(timeout=2.0)
        reason = "the server closed its output" if code is None else f"the server exited with code {code}"
        self._hangup = ConnectionClosed(reason, exit_code=code, stderr_tail=tuple(self.transport.stderr_tail))
        if self.counters.closed_reason is None:
            self.counters.closed_reason = reason
        self._fail_pending(self._hangup)
        self._stop.set()

    async def _dispatch(self, text: str, frame: rpc.Frame, *, record: bool = True) -> None:
        kind, message = frame.kind, frame.message
        note = frame.problem
        pending = None
        if kind in (rpc.RESPONSE, rpc.ERROR):
            request_id = message["id"]
            if rpc.is_valid_id(request_id) and isinstance(request_id, int):
                pending = self._pending.get(request_id)
                if pending is None and request_id in self._cancelled:
                    note = f"late response, ignored ({self._cancelled[request_id]})"
            if pending is None and note is None:
                note = "response to no request of ours, ignored"
        elif kind == rpc.BATCH and not accepts_batches(self.protocol_version):
            kind, note = rpc.INVALID, f"batches are not allowed in protocol {self.protocol_version}"
        if record:
            method = pending.method if pending is not None else frame.method
            entry = self.trace.frame(IN, kind, text, message, method=method, id=frame.id, note=note)
            self.counters.last_frame_in = entry.monotonic
        if pending is not None:
            pending.received_at = time.perf_counter()
            pending.response = message
            pending.done.set()
        elif kind == rpc.REQUEST:
            await self._on_request(message)
        elif kind == rpc.NOTIFICATION:
            self._on_notification(message)
        elif kind == rpc.BATCH:
            for item in message:
                await self._dispatch(text, rpc.classify(item), record=False)
        elif kind == rpc.INVALID:
            self.counters.invalid_frames += 1

    async def _on_request(self, request: dict[str, Any]) -> None:
        method = request["method"]
        if method == "ping":
            self.counters.server_pings += 1
        handler = self._request_handlers.get(method)
        if handler is not None:
            assert self._task_group is not None
            self._task_group.start_soon(self._run_handler, handler, request)
        elif method == "ping":
            await self._send_reply(rpc.result(request["id"], {}), request, note="pong")
        else:
            reply = rpc.error(request["id"], rpc.METHOD_NOT_FOUND, f"Method not found: {method}")
            await self._send_reply(reply, request)

    async def _run_handler(self, handler: Handler, request: dict[str, Any]) -> None:
        """Run a user handler off the reader task (sync ones in a worker thread) and reply."""
        request_id = request["id"]
        params = request.get("params") or {}
        with anyio.CancelScope() as scope:
            self._handler_scopes[request_id] = scope
            try:
                if inspect.iscoroutinefunction(handler):
                    value = await handler(params)
                else:
                    value = await anyio.to_thread.run_sync(handler, params, abandon_on_cancel=True)
                if value is None:
                    value = {}
                if not isinstance(value, dict):
                    raise TypeError(f"a handler must return a dict, not {type(value).__name__}")
                reply = rpc.result(request_id, value)
            except McpError as exc:
                reply = rpc.error(request_id, exc.code, exc.message, exc.data)
            except Exception as exc:  # noqa: BLE001 - a user handler's bug is the server's error reply
                self.trace.event("handler-error", note=f"{type(exc).__name__}: {exc}", method=request["method"])
                reply = rpc.error(request_id, rpc.INTERNAL_ERROR, f"{type(exc).__name__}: {exc}")
            finally:
                self._handler_scopes.pop(request_id, None)
            await self._send_reply(reply, request, note="from user handler")
        if scope.cancelled_caught:
            self.trace.event("handler-cancelled", id=request_id, method=request["method"])

    def _on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        params = message.get("params") or {}
        if method == "notifications/cancelled" and isinstance(params, dict):
            scope = self._handler_scopes.get(params.get("requestId"))  # type: ignore[arg-type]
            if scope is not None:
                scope.cancel()
        handler = self._notification_handlers.get(method)
        if handler is not None:
            assert self._task_group is not None
            self._task_group.start_soon(self._run_notification_handler, handler, params)

    async def _run_notification_handler(self, handler: Handler, params: dict[str, Any]) -> None:
        try:
            if inspect.iscoroutinefunction(handler):
                await handler(params)
            else:
                await anyio.to_thread.run_sync(handler, params, abandon_on_cancel=True)
        except Exception as exc:  # noqa: BLE001 - never let a user callback kill the session
            self.trace.event("handler-error", note=f"{type(exc).__name__}: {exc}")

    # ----- user handlers ---------------------------------------------------------

    def on_request(self, method: str, handler: Handler | None) -> None:
        """Answer server requests for `method` with `handler(params) -> result`; None removes it."""
        _register(self._request_handlers, method, handler)

    def on_notification(self, method: str, handler: Handler | None) -> None:
        """Call `handler(params)` for each server notification `method`; None removes it."""
        _register(self._notification_handlers, method, handler)

    # ----- helpers ---------------------------------------------------------------

    def _check_open(self) -> None:
        if self.closed:
            raise self._hangup or ConnectionClosed(f"the connection is closed ({self.counters.closed_reason})")

    def _closed_error(self, detail: str) -> ConnectionClosed:
        return self._hangup or ConnectionClosed(f"the connection is closed: {detail}")

    def _fail_pending(self, error: BaseException) -> None:
        for pending in self._pending.values():
            if not pending.done.is_set():
                pending.failure = error
                pending.done.set()

    def _set_state(self, state: str, reason: str) -> None:
        if self.counters.state != state:
            self.counters.state = state
            self.trace.event("state", note=reason, state=state)


def _register(table: dict[str, Handler], method: str, handler: Handler | None) -> None:
    if handler is None:
        table.pop(method, None)
    elif not callable(handler):
        raise TypeError(f"the handler for {method!r} is not callable")
    else:
        table[method] = handler


def _unwrap(exc: BaseException) -> BaseException:
    """The one interesting exception inside the exception groups task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _startup_error(exc: BaseException, hangup: ConnectionClosed | None) -> BaseException:
    """Say why the connection could not be set up, in words a user can act on."""
    if isinstance(exc, HandshakeError):
        return exc
    if isinstance(exc, FileNotFoundError):
        return HandshakeError(f"{exc}; check the command, or give the full path")
    if isinstance(exc, ConnectionClosed) or hangup is not None:
        closed = hangup or exc
        tail = "; its last stderr lines: " + " | ".join(closed.stderr_tail[-5:]) if closed.stderr_tail else ""
        return HandshakeError(f"{closed.reason} during the handshake{tail}")
    if isinstance(exc, RequestTimeout):
        return HandshakeError(f"the server did not answer initialize in time ({exc}); is it an MCP server on stdio?")
    if isinstance(exc, McpError):
        return HandshakeError(f"the server refused initialize: {exc}")
    if isinstance(exc, OSError):
        return HandshakeError(f"could not start the server: {exc}")
    return exc

