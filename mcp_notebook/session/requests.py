"""Our requests in flight: each one awaiting its response, and the table of all of them.

It knows ids, waiters and the ping counters a settled ping moves, and nothing of transports
or eras. Everything here runs on the session thread, except `InFlight.new` (ids are never
reused) and `InFlight.add_unless_ended`, which any thread may call: a request added from
another thread is either failed with the rest when the session ends, or refused, never lost
in between. A transport's reading thread may also settle the answer a caller off the loop
waits for: settling is atomic, so a request settles exactly once, and wakes its waiters.
"""

from __future__ import annotations

import itertools
import threading
from collections import OrderedDict
from typing import Any

import anyio

from ..base.errors import McpError, RequestTimeout
from .health import HealthCounters
from .pending import PendingCall, SessionLoop

REMEMBERED_CANCELLATIONS = 1000


class Request(PendingCall):
    """One request of ours on the wire, awaiting its response; settled once, by `InFlight.settle`.

    A waiter on the loop itself may use `event`; every other waiter waits as a `PendingCall`
    does. `off_loop`: its caller is not on the session loop, so a transport's reading
    thread may settle it at once. `probe`: it counts as one of our pings (a ping, or the
    modern era's liveness probe).
    """

    __slots__ = ("id", "params", "event", "response", "failure", "sent_at", "received_at", "resent", "note", "off_loop", "probe")

    def __init__(
        self,
        request_id: int,
        method: str,
        params: dict[str, Any] | None,
        loop: SessionLoop | None = None,
        *,
        off_loop: bool = False,
        probe: bool = False,
    ) -> None:
        super().__init__(method, loop)
        self.id = request_id
        self.params = params
        self.event: anyio.Event | None = None
        self.response: dict[str, Any] | None = None
        self.failure: BaseException | None = None
        self.sent_at = 0.0
        self.received_at = 0.0
        self.resent = False
        self.note: str | None = None
        self.off_loop = off_loop
        self.probe = probe or method == "ping"

    @property
    def settled(self) -> bool:
        return self.response is not None or self.failure is not None

    @property
    def rtt(self) -> float:
        return self.received_at - self.sent_at

    def outcome(self) -> Any:
        """The result; raises the failure or the JSON-RPC error."""
        if self.failure is not None:
            raise self.failure
        assert self.response is not None
        if "error" in self.response:
            err = self.response["error"]
            raise McpError(err["code"], str(err.get("message", "")), err.get("data"), method=self.method)
        return self.response["result"]

    def stop(self, failure: BaseException, reason: str) -> bool:
        assert self._loop is not None
        return self._loop.abandon(self, failure, reason)


class InFlight:
    """The requests on the wire by id, the ids we gave up on (their late answers are noted,
    not mistaken for others), and the ping statistics a settled ping adds to."""

    def __init__(self, counters: HealthCounters) -> None:
        self.counters = counters
        self._ids = itertools.count(1)
        self._pending: dict[int, Request] = {}
        self._cancelled: OrderedDict[int, str] = OrderedDict()
        self._ending = threading.Lock()
        self._ended = False
        self._settling = threading.Lock()

    def new(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        loop: SessionLoop | None = None,
        *,
        off_loop: bool = False,
        probe: bool = False,
    ) -> Request:
        """A request with a fresh id; safe to call from any thread."""
        return Request(next(self._ids), method, params, loop, off_loop=off_loop, probe=probe)

    def add(self, pending: Request) -> None:
        self._pending[pending.id] = pending

    def add_unless_ended(self, pending: Request) -> bool:
        """Add `pending` from any thread; False once the session has failed what was in flight."""
        with self._ending:
            if self._ended:
                return False
            self._pending[pending.id] = pending
            return True

    def on_the_wire(self) -> list[Request]:
        """The requests awaiting their answers, oldest first (any thread)."""
        return list(self._pending.values())

    def get(self, request_id: object) -> Request | None:
        return self._pending.get(request_id) if isinstance(request_id, int) else None

    def take_waited(self, request_id: object) -> Request | None:
        """Remove and return the request `request_id` if a caller off the loop waits for it."""
        if type(request_id) is not int:  # our ids: never a bool, nor a string
            return None
        pending = self._pending.get(request_id)
        if pending is None or not pending.off_loop:
            return None
        return self._pending.pop(request_id, None)

    def pop(self, request_id: object) -> Request | None:
        return self._pending.pop(request_id, None) if isinstance(request_id, int) else None

    def reissue(self, pending: Request) -> int:
        """Give `pending` a new id (its old stream broke); returns the old one."""
        old, pending.id = pending.id, next(self._ids)
        self._pending[pending.id] = pending
        return old

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._pending

    def __len__(self) -> int:
        return len(self._pending)

    def forget(self, pending: Request, reason: str) -> None:
        """We gave up on `pending`: drop it, and remember why, for its late answer."""
        self._pending.pop(pending.id, None)
        self._cancelled[pending.id] = reason
        while len(self._cancelled) > REMEMBERED_CANCELLATIONS:
            self._cancelled.popitem(last=False)

    def cancelled_reason(self, request_id: object) -> str | None:
        return self._cancelled.get(request_id) if isinstance(request_id, int) else None

    def settle(self, pending: Request, response: dict[str, Any] | None = None, failure: BaseException | None = None) -> None:
        with self._settling:  # the session thread and a transport's reading thread may race here
            if pending.settled:
                return
            pending.response, pending.failure = response, failure
            if pending.probe:
                counters = self.counters
                if response is not None and "result" in response:
                    counters.last_rtt = rtt = pending.rtt
                    counters.pings_answered += 1
                    counters.rtts.append(rtt)
                else:
                    counters.ping_failures += 1
                    if isinstance(failure, RequestTimeout):
                        counters.ping_timeouts += 1
        if pending.event is not None:
            pending.event.set()
        pending._woken()

    def fail_all(self, error: BaseException) -> None:
        with self._ending:
            self._ended = True
            pending, self._pending = list(self._pending.values()), {}
        for request in pending:
            self.settle(request, failure=error)
