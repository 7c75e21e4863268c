"""The session's call boundary, its only one: how a caller on any thread or asyncio loop starts
a call, and how its `PendingCall` reaches the session loop again.

`CallBoundary.call` (behind `Session.call`) starts a call and returns its `PendingCall`. A
one-round call from a thread off the loop is written from that thread where the transport
lets any thread write (stdio), and its response settles it on the reading thread: no hop
through the loop either way. Otherwise it is launched on the loop (at once from the loop's
own thread, else in one hop). Calls of several rounds (modern requests, tasks) run as a
`Flow` on the loop. Each call holds this object as its `SessionLoop`: cancelling hops to
the loop through it, and Ctrl-C's words come from it. The loop is the one `bind()` ran on;
nothing else here keeps state.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any, TypeVar

from ..base.errors import ConnectionClosed, Interrupted
from ..base.handoff import handed
from ..protocol import jsonrpc as rpc
from .flow import ONE_CALL, CallOptions, Flow
from .pending import CANCEL_GRACE, PendingCall
from .requests import Request

if TYPE_CHECKING:
    from .port import SessionPort

T = TypeVar("T")


class CallBoundary:
    """The call boundary of one session, and its loop as other threads reach it."""

    def __init__(self, session: SessionPort) -> None:
        self.session = session
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = -1

    def bind(self) -> None:
        """On the session loop, as the session starts: this is the loop calls go to."""
        self._loop, self._thread = asyncio.get_running_loop(), threading.get_ident()

    # ----- starting calls ---------------------------------------------------------

    def call(self, method: str, params: dict[str, Any] | None = None, options: CallOptions = ONE_CALL) -> PendingCall:
        """Start a request from any thread or coroutine; the `PendingCall` to wait for or await."""
        session = self.session
        limit = None if options.own_deadline else session.limit(options.timeout)
        here = threading.get_ident() == self._thread
        if options.flow is None and session.rules.one_round(method):
            request = session.requests.new(method, params, self, off_loop=not here)
            request.limit, request.note = limit, options.note
            try:
                if here:
                    session.launch(request)
                elif not self._send_here(request):
                    self._soon(request, session.launch, request)
            except KeyboardInterrupt as exc:  # Ctrl-C while writing it from this thread: cancel it, say so
                if here or isinstance(exc, Interrupted):
                    raise
                raise request.interrupt() from exc
            return request
        flow = Flow(session, self, method, params, options, limit)
        if here:
            flow.start()
        else:
            self._soon(flow, flow.start)
        return flow

    def liveness(self, timeout: float | None = None) -> PendingCall:
        """A ping, or where ping was removed (modern) the era's liveness probe, as a flow."""
        session, rules = self.session, self.session.rules
        if rules.pings:
            return self.call("ping", None, CallOptions(timeout=timeout))
        return self.call(
            rules.probe_method, None, CallOptions(timeout=timeout, flow=lambda send, _: rules.liveness(session, send))
        )

    def _send_here(self, pending: Request) -> bool:
        """Send a one-round request from the caller's thread, sparing it the hop into the loop,
        where the transport lets any thread write (stdio); the session thread stays the only reader.

        False when nothing was sent: the caller then hands the request to `launch` on the loop,
        which also settles it if the connection has closed meanwhile (only the loop settles).
        """
        session = self.session
        if not session.transport.sends_from_any_thread or session.rules.stateless or session.closed:
            return False
        if not session.requests.add_unless_ended(pending):
            return False
        session.count_sent(pending)  # before the write: its answer may be counted at once
        pending.sent_at = time.perf_counter()
        try:
            session.outbox.send(rpc.request(pending.id, pending.method, pending.params), rpc.REQUEST, pending.note)
        except ConnectionClosed:
            session.requests.pop(pending.id)
            session.count_sent(pending, -1)
            return False
        return True

    def _soon(self, pending: PendingCall, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the loop soon; a loop that has gone fails `pending` instead."""
        try:
            assert self._loop is not None
            self._loop.call_soon_threadsafe(fn, *args)
        except (AssertionError, RuntimeError):  # no loop, or it has closed
            failure = self.session.closed_error()
            if isinstance(pending, Request):
                self.session.requests.settle(pending, failure=failure)
            elif isinstance(pending, Flow):
                pending.fail(failure)

    def soon_or_now(self, fn: Callable[[], None]) -> None:
        """Run `fn()` on the loop: now on its thread (or with no loop left), else soon."""
        if self._loop is None or self.on_loop():
            fn()
            return
        try:
            self._loop.call_soon_threadsafe(fn)
        except RuntimeError:  # the loop has closed: nobody waits on it
            fn()

    # ----- what a PendingCall asks of its session (`SessionLoop`) ----------------------

    def on_loop(self) -> bool:
        """Whether this is the session loop's thread."""
        return threading.get_ident() == self._thread

    def run_on_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """Run a plain function on the loop and return what it returns (at once on the loop's thread)."""
        if self.on_loop():
            return fn(*args)
        return self._submit(fn, *args).result(CANCEL_GRACE)

    async def arun_on_loop(self, fn: Callable[..., T], *args: Any) -> T:
        """`run_on_loop` for a coroutine on any loop, without blocking it."""
        if self.on_loop():
            return fn(*args)
        return await asyncio.wait_for(asyncio.wrap_future(self._submit(fn, *args)), CANCEL_GRACE)

    def _submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        run, done = handed(fn, *args)
        if self._loop is None or self._loop.is_closed():
            raise self.session.closed_error()
        self._loop.call_soon_threadsafe(run)
        return done

    def abandon(self, request: Any, failure: BaseException, reason: str) -> bool:
        return self.session.abandon(request, failure, reason)

    async def outwait_user(self) -> bool:
        return await self.session.outwait_user()

    def interrupted(self, pending: PendingCall, stopped: bool) -> Interrupted:
        """What Ctrl-C did to the call it stopped (`stopped` False: it had already ended)."""
        session = self.session
        if not stopped:
            return Interrupted("interrupted; the request had already ended, so the server was told nothing")
        if pending.lingers:
            return Interrupted("cancelled; the server was sent tasks/cancel")
        if session.closed:
            return Interrupted("cancelled; the connection is closed, so the server was told nothing")
        return Interrupted(session.rules.cancel_words(session.transport.kind))
