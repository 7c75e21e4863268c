"""A call of several rounds, run to its end on the session loop for a caller anywhere.

A modern request (version retries, `input_required` rounds, as the era's rules run it), a
task followed to its end, or a modern liveness probe: each round is one `Request` on the
wire, put there by the flow's `send`. `stop()` (on the loop) abandons the round on the wire,
which tells the server, and cancels the flow; a flow that `lingers` (a task) then cancels
its task, within the grace, before it settles. `CallOptions` says how `Session.call` runs a
call: its deadline, its trace note, and for a flow what runs it and who sees its rounds.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio

from ..base.errors import ConnectionClosed
from .pending import PendingCall, SessionLoop
from .requests import Request

if TYPE_CHECKING:
    from .port import SessionPort

FlowRunner = Callable[["Rounds", Callable[[], bool]], Awaitable[Any]]


class Rounds:
    """`send(method, params)`: one round of a flow on the wire, awaited to its response."""

    __slots__ = ("flow",)

    def __init__(self, flow: Flow) -> None:
        self.flow = flow

    async def __call__(
        self, method: str, params: dict[str, Any] | None = None, *, note: str | None = None, probe: bool = False
    ) -> Request:
        return await self.flow.round(method, params, note=note, probe=probe)


@dataclass(slots=True)  # not frozen: one is made per call, and a frozen field costs object.__setattr__
class CallOptions:
    """How `Session.call` runs one call (never changed once made).

    `timeout`: the call's own deadline in seconds (None: the session's; `own_deadline=True`:
    the caller keeps one and cancels, the session sets none). `flow`: runs the call's rounds
    on the loop (`flow(send, stopped)`), for calls of several rounds the era does not know
    (a task); `lingers`: such a flow takes a moment to stop. `on_round(request, on)`: a round
    of a flow went on the wire or ended (a one-round call is its own request, which
    `Session.in_flight` finds); `on_start()`: the flow begins, on the loop.
    """

    timeout: float | None = None
    own_deadline: bool = False
    note: str | None = None
    flow: FlowRunner | None = None
    lingers: bool = False
    on_round: Callable[[Request, bool], None] | None = None
    on_start: Callable[[], None] | None = None


ONE_CALL = CallOptions()


class Flow(PendingCall):
    """A call of one or more rounds, run on the session loop; its outcome is what its runner returns."""

    __slots__ = ("session", "params", "options", "current", "last", "scope", "value", "failure", "finished")

    def __init__(
        self,
        session: SessionPort,
        loop: SessionLoop,
        method: str,
        params: dict[str, Any] | None,
        options: CallOptions,
        limit: float | None,
    ) -> None:
        super().__init__(method, loop, limit)
        self.session = session
        self.params = params
        self.options = options
        self.lingers = options.lingers
        self.current: Request | None = None  # the round on the wire
        self.last: Request | None = None
        self.scope: anyio.CancelScope | None = None
        self.value: Any = None
        self.failure: BaseException | None = None
        self.finished = False

    @property
    def settled(self) -> bool:
        return self.finished

    @property
    def rtt(self) -> float:
        return self.last.rtt if self.last is not None else 0.0

    def outcome(self) -> Any:
        if self.failure is not None:
            raise self.failure
        return self.value

    def start(self) -> None:
        """On the loop: run the flow as a task of the session."""
        try:
            self.session.spawn(self._run)
        except ConnectionClosed as exc:
            self.failure = exc
            self._finish()

    async def _run(self) -> None:
        options, send = self.options, Rounds(self)
        completed = False
        try:
            with anyio.CancelScope() as scope:
                self.scope = scope
                if self.failure is None:  # else stopped before it started
                    if options.on_start is not None:
                        options.on_start()
                    if options.flow is not None:
                        self.value = await options.flow(send, lambda: scope.cancel_called)
                    else:
                        self.value = await self.session.rules.run(self.session, self.method, self.params, send)
                    completed = True
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            self.failure = self.failure or exc
        finally:
            if not completed and self.failure is None:
                self.failure = ConnectionClosed("the connection was closed")
            self._finish()

    def fail(self, failure: BaseException) -> None:
        """It never started (the loop has gone): settle it with `failure`."""
        self.failure = failure
        self._finish()

    def _finish(self) -> None:
        self.finished = True
        self._woken()

    async def round(self, method: str, params: dict[str, Any] | None, *, note: str | None = None, probe: bool = False) -> Request:
        """One request on the wire; the caller's deadline governs it, a stop() abandons it."""
        session, on_round = self.session, self.options.on_round
        request = session.requests.new(method, params, self._loop, probe=probe)
        request.note = note or self.options.note
        request.event = answered = anyio.Event()
        self.current = self.last = request
        if on_round is not None:
            on_round(request, True)
        session.launch(request)
        try:
            await answered.wait()
        except anyio.get_cancelled_exc_class():
            session.abandon(request, ConnectionClosed("cancelled"), "cancelled by the user")  # settled already after a stop()
            raise
        finally:
            if on_round is not None:
                on_round(request, False)
            self.current = None
        return request

    def stop(self, failure: BaseException, reason: str) -> bool:
        """On the loop: cancel the call, telling the server; False if it had ended."""
        if self.finished:
            return False
        self.failure = self.failure or failure
        if self.current is not None:
            self.session.abandon(self.current, failure, reason)
            if self.options.on_round is not None:
                self.options.on_round(self.current, False)  # gone from cancel()'s view before the caller leaves
        if self.scope is not None:
            self.scope.cancel()
        return True
