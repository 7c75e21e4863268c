"""An MCP session in either era: requests and responses, the handshake, and closing.

The session is composed of parts it owns: the table of requests in flight (`requests`), the
writer (`outbox`), the dispatcher of what comes in (`inbound`, the transport's sink), the era
negotiator (`eras`, a `negotiation.EraNegotiator`) and the call boundary (`boundary`), which
see the session only as a `SessionPort`; what each side said of itself is in `client` and
`server` (`sides`). Frames are dispatched the moment the transport reads them, synchronously,
so a server `ping` is answered inside the same read callback whatever the caller is doing; a
transport that reads on a thread of its own (stdio) has the answer a blocked caller waits
for, and a server ping, taken on that thread (`Inbound.frame_here`). The session knows
nothing of IPython: the runtime runs it on its event loop.

No known secret reaches a caller: what the server or the transport said passes the trace's
Redactor where it becomes an error (error responses, failed sends, the end, a failed start)
or is shown (`describe`, `stderr_lines`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import anyio
import anyio.abc

from ..base.about import CLIENT_NAME, __version__
from ..base.errors import ConnectionClosed, HandshakeError
from ..base.sizes import give_back_memory
from ..base.timeouts import DEFAULT_TIMEOUT
from ..protocol import jsonrpc as rpc
from ..protocol.versions import LATEST_LEGACY, LEGACY_VERSIONS
from ..transports.base import Transport
from . import live_state
from .boundary import CallBoundary
from .era import Era
from .flow import ONE_CALL, CallOptions
from .handlers import Handlers
from .health import CLOSED, CLOSING, LIVE_STATES, HealthCounters
from .inbound import Inbound
from .negotiation import PROBE_TIMEOUT, EraNegotiator
from .outbox import Outbox
from .pending import CANCEL_GRACE, PendingCall, request_timeout
from .requests import InFlight, Request
from .sides import ClientSide, ServerSide
from .startup import gone, startup_error, unwrap
from .subscriptions import Subscription
from .trace import Trace
from .violations import FrameChecker

__all__ = ["CANCEL_GRACE", "PROBE_TIMEOUT", "CallOptions", "PendingCall", "Session", "request_timeout"]

T = TypeVar("T")


class Session:
    """One session over one transport, in either era, driven from one event loop.

    `era` is "legacy" (the `initialize` handshake), "modern" (2026-07-28, stateless) or
    "auto" (probe with `server/discover`, then settle on one); `era_source` says how.
    """

    def __init__(
        self,
        transport: Transport,
        *,
        trace: Trace,
        timeout: float | None = DEFAULT_TIMEOUT,
        era: str = "legacy",
        era_source: str | None = None,
        protocol_version: str | None = None,
        probe_timeout: float = PROBE_TIMEOUT,
        client_info: dict[str, Any] | None = None,
        capabilities: dict[str, Any] | None = None,
        check_frames: bool = True,
        strict: bool = False,
    ) -> None:
        self.eras = EraNegotiator(self, era, era_source, protocol_version, probe_timeout)
        self.subscriptions: set[Subscription] = set()
        self.transport = transport
        self.trace = trace
        self.timeout = timeout
        self.client = ClientSide(
            info=client_info or {"name": CLIENT_NAME, "version": __version__},
            capabilities=capabilities or {},
            requested_version=protocol_version if protocol_version in LEGACY_VERSIONS else LATEST_LEGACY,
        )
        self.server = ServerSide()
        self.protocol_version: str | None = None
        self.counters = HealthCounters()
        self.request_handlers = Handlers()
        self.notification_handlers = Handlers()
        self.requests = InFlight(self.counters)
        self.outbox = Outbox(transport, trace, self.counters, self._frames_lost)
        self.checker = FrameChecker(trace, enabled=check_frames, strict=strict)
        self.inbound = Inbound(self)
        self._task_group: anyio.abc.TaskGroup | None = None
        self._ready = anyio.Event()
        self._stop = anyio.Event()
        self._done = anyio.Event()
        self._ended = False  # _stop or _done is set: read on every request, from any thread
        self._failure: BaseException | None = None
        self._hangup: ConnectionClosed | None = None
        self._close_grace: float | None = None
        self.state_listeners: list[Callable[[str, str], None]] = []  # (state, reason) after each transition
        self.boundary = CallBoundary(self)  # where callers elsewhere start calls

    # ----- the era, as the negotiator settled it ----------------------------------

    @property
    def era(self) -> str:
        """ "legacy", "modern", or "auto" until the probe has settled it."""
        return self.eras.era

    @property
    def era_source(self) -> str | None:
        """How the era was chosen: pinned, cached, or what the probe saw."""
        return self.eras.source

    @property
    def rules(self) -> Era:
        """The era's rules, as the negotiator chose them (legacy until a probe says modern)."""
        return self.eras.rules

    # ----- lifecycle -------------------------------------------------------------

    async def run(self) -> None:
        """Open the transport, shake hands, serve frames until closed. Never raises. Closed
        before it started, it opens nothing; closed while opening, it stops where it is."""
        self.boundary.bind()
        try:
            async with anyio.create_task_group() as tg:
                self._task_group = tg
                if not self._stop.is_set():
                    await self.transport.open(tg, self.inbound)
                    await self.eras.open()
                    live_state.ready(self, f"protocol {self.protocol_version}")
                    self._ready.set()
                await self._stop.wait()
                tg.cancel_scope.cancel()
        except BaseException as exc:  # reported through wait_ready()
            failure = await gone(unwrap(exc), self.transport) if self._hangup is None else unwrap(exc)
            self._failure = self.trace.redactor.exception(startup_error(failure, self._hangup, self.transport))
            if not isinstance(exc, Exception):
                raise
        finally:
            self._task_group = None
            with anyio.CancelScope(shield=True):
                self.set_state(CLOSING, self.counters.closed_reason or "closing")
                try:
                    await self.transport.aclose(self._close_grace)
                except Exception as exc:  # noqa: BLE001 - the session ends whatever closing the transport says
                    self.trace.event("close-failed", note=f"{type(exc).__name__}: {exc}")
                self.checker.stop()  # no frame comes in any more: check what is queued
            self.requests.fail_all(self._hangup or ConnectionClosed("the connection was closed"))
            self.set_state(CLOSED, self.counters.closed_reason or "closed by the client")
            give_back_memory()  # what the transport and the requests held is freed by now
            self._ready.set()
            self._ended = True
            self._done.set()

    async def wait_ready(self) -> None:
        """Wait for the handshake; raise what made it fail."""
        await self._ready.wait()
        if self._failure is not None:
            raise self._failure
        if self.counters.state not in LIVE_STATES:  # degraded, where the listening stream is down
            raise self._hangup or ConnectionClosed("the connection was closed during the handshake")

    async def close(self, grace: float | None = None) -> None:
        """Close the connection and wait until the server is gone (`grace`: seconds before SIGTERM)."""
        self._close_grace = grace
        if self.counters.closed_reason is None:
            self.counters.closed_reason = "closed by the client"
        self._ended = True
        self._stop.set()
        if not self._ready.is_set() and self._task_group is not None:
            self._task_group.cancel_scope.cancel()  # a handshake under way (a held answer, an OAuth flow) is not waited for
        await self._done.wait()

    async def wait_closed(self) -> None:
        """Wait until the session has ended and its transport is closed."""
        await self._done.wait()

    def describe(self) -> str:
        """Where the server is (its command line or URL), every known secret redacted."""
        return self.trace.redact(self.transport.describe())

    def stderr_lines(self) -> tuple[str, ...]:
        """The server's recent stderr lines (bounded), every known secret redacted."""
        return tuple(self.trace.redact(line) for line in self.transport.stderr_tail)

    @property
    def closed(self) -> bool:
        return self._ended

    @property
    def running(self) -> bool:
        return self._task_group is not None

    async def handshake(self) -> None:
        """The legacy `initialize` handshake (again, when an HTTP session is renewed)."""
        params = {
            "protocolVersion": self.client.requested_version,
            "capabilities": self.client.capabilities,
            "clientInfo": self.client.info,
        }
        result = await self.request("initialize", params)
        version = result.get("protocolVersion") if isinstance(result, dict) else None
        if version not in LEGACY_VERSIONS:
            raise HandshakeError(
                f"the server answered with protocol version {version!r}, which this client does not speak "
                f"(it speaks {', '.join(LEGACY_VERSIONS)}); disconnected"
            )
        self.protocol_version = version
        self.server = ServerSide(result.get("serverInfo"), result.get("capabilities") or {}, result.get("instructions"))
        self.notify("notifications/initialized")
        self.transport.initialized(version)
        await self.transport.listening()

    # ----- calls, through the call boundary (`boundary.CallBoundary`) ------------

    def call(self, method: str, params: dict[str, Any] | None = None, options: CallOptions = ONE_CALL) -> PendingCall:
        """Start a request from any thread or coroutine; the `PendingCall` to wait for or await (`CallBoundary.call`)."""
        return self.boundary.call(method, params, options)

    def liveness(self, timeout: float | None = None) -> PendingCall:
        """A ping, or on a modern connection (where ping was removed) a liveness probe: a fresh
        `server/discover`; either way its `rtt` is the round trip, counted as our ping."""
        return self.boundary.liveness(timeout)

    def in_flight(self, request_id: object) -> PendingCall | None:
        """Our request on the wire with this id, if there is one (any thread)."""
        return self.requests.get(request_id)

    def on_the_wire(self) -> list[Request]:
        """Our requests awaiting their answers, oldest first (any thread)."""
        return self.requests.on_the_wire()

    def limit(self, timeout: float | None) -> float | None:
        """A call's deadline in seconds: `timeout`, or the connection's default."""
        return self.timeout if timeout is None else timeout

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send a request and return its result, from a coroutine; a JSON-RPC error raises McpError."""
        return await self.call(method, params, CallOptions(timeout=timeout))

    async def ping(self, *, timeout: float | None = None) -> float:
        """Ping the server (a liveness probe on modern connections); the round trip in seconds."""
        pending = self.liveness(timeout)
        await pending
        return pending.rtt

    def new_request(self, method: str, params: dict[str, Any] | None = None) -> Request:
        """A request with a fresh id, for the session's own parts on the loop (ids are never reused)."""
        return self.requests.new(method, params, self.boundary)

    def on_loop(self) -> bool:
        """Whether this is the session loop's thread."""
        return self.boundary.on_loop()

    # ----- requests on the wire (the loop, but for `CallBoundary` writing from a caller's thread) ----

    def launch(self, pending: Request) -> None:
        """Send a request now; a closed connection settles it with ConnectionClosed."""
        if self.closed:
            self.requests.settle(pending, failure=self.closed_error())
            return
        self.requests.add(pending)
        self.count_sent(pending)
        pending.sent_at = time.perf_counter()
        if self.inbound.renewal.recovering and pending.method != "initialize":
            self.inbound.renewal.lost.append(pending)  # sent once the new session is up
            return
        self.send_request(pending)

    def _frames_lost(self, request_ids: list[Any], error: ConnectionClosed) -> None:
        """Requests whose frames another thread's write failed to put on the wire: failed, on the loop."""

        def fail() -> None:
            for request_id in request_ids:
                pending = self.requests.pop(request_id)
                if pending is not None:
                    self.requests.settle(pending, failure=self.closed_error(str(error)))

        self.boundary.soon_or_now(fail)

    def count_sent(self, pending: Request, count: int = 1) -> None:
        if pending.probe:
            with self.outbox.lock:  # callers' threads count too
                self.counters.pings_sent += count

    def send_request(self, pending: Request, note: str | None = None) -> None:
        params, headers = self.rules.frame(self, pending)
        try:
            self.outbox.send(
                rpc.request(pending.id, pending.method, params),
                rpc.REQUEST,
                note or pending.note,
                headers=headers,
                opens=pending.method == "initialize",
            )
        except ConnectionClosed as exc:
            self.requests.pop(pending.id)
            self.requests.settle(pending, failure=self.closed_error(str(exc)))

    def abandon(self, pending: Request, failure: BaseException, reason: str) -> bool:
        """Give up on a request (on the loop): tell the server, ignore its late answer. False if it had settled."""
        if pending.settled:
            return False
        self.requests.forget(pending, reason)
        self.requests.settle(pending, failure=failure)
        self.rules.cancel(self, pending, reason)
        return True

    async def round_trip(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        note: str | None = None,
    ) -> Request:
        """On the loop: send a request and wait for it to settle; timeouts and cancellation tell the server."""
        pending = self.requests.new(method, params, self.boundary)
        pending.note = note
        pending.event = settled = anyio.Event()
        limit = self.limit(timeout)
        self.launch(pending)
        try:
            await self._settled(settled, limit)
        except TimeoutError:
            failure = request_timeout(method, limit or 0.0)
            if self.abandon(pending, failure, f"timed out after {limit or 0.0:g} s"):
                raise failure from None
        except anyio.get_cancelled_exc_class():
            self.abandon(pending, ConnectionClosed("cancelled"), "cancelled by the user")
            raise
        return pending

    async def _settled(self, settled: anyio.Event, limit: float | None) -> None:
        """Wait for a request to settle for `limit` seconds, plus the time an OAuth flow takes
        (a person in a browser)."""
        while True:
            try:
                with anyio.fail_after(limit):
                    await settled.wait()
                return
            except TimeoutError:
                if not await self.outwait_user():
                    raise

    async def outwait_user(self) -> bool:
        """Wait out an authorization a person is doing (on the loop only); False if none is."""
        auth = getattr(self.transport, "auth", None)
        return auth is not None and self.on_loop() and bool(await auth.outwait_user())

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a notification now."""
        if self.closed:
            raise self.closed_error()
        try:
            self.outbox.send(rpc.notification(method, params), rpc.NOTIFICATION)
        except ConnectionClosed as exc:
            raise self.closed_error(str(exc)) from None

    # ----- helpers ---------------------------------------------------------------

    def closed_error(self, detail: str | None = None) -> ConnectionClosed:
        return self._hangup or ConnectionClosed(f"the connection is closed ({detail or self.counters.closed_reason})")

    def end(self, error: ConnectionClosed) -> None:
        """The connection cannot go on: fail what is pending with `error`, and stop."""
        self._hangup = error = self.trace.redactor.exception(error)
        if self.counters.closed_reason is None:
            self.counters.closed_reason = error.reason
        self.requests.fail_all(error)
        self._ended = True
        self._stop.set()

    def set_state(self, state: str, reason: str) -> None:
        """Move to `state` and record the transition with its reason (session thread only)."""
        if self.counters.state != state:
            self.counters.state = state
            self.counters.state_reason = reason
            if state == CLOSED:
                self.counters.closed_at = time.time()
            self.trace.event("state", note=reason, state=state)
            for listener in list(self.state_listeners):
                listener(state, reason)

    def soon(self, fn: Callable[[], None]) -> None:
        """Run `fn()` on the session's loop, from any thread (now, if this is its thread)."""
        self.boundary.soon_or_now(fn)

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run a background task (a keepalive, a stream reader) for as long as the session lives."""
        if self._task_group is None:
            raise self.closed_error()
        self._task_group.start_soon(fn, *args)
