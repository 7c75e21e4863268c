"""Our requests in flight: each one awaiting its response, and the table of all of them.

A leaf of the session layer: it knows ids, waiters and the ping counters a settled ping
moves, and nothing of transports or eras. Everything here runs on the session thread,
except `InFlight.new` (ids are never reused) and `InFlight.add_unless_ended`, which any thread
may call: a request added from another thread is either failed with the rest when the session
ends, or refused, never lost in between. A transport's reading thread may also settle the
answer a blocked caller waits for: settling is atomic, so a request settles exactly once.
"""

from __future__ import annotations

import itertools
import threading
from _thread import LockType
from collections import OrderedDict
from typing import Any

import anyio

from ..base.errors import McpError, RequestTimeout
from .health import HealthCounters

REMEMBERED_CANCELLATIONS = 1000


class Pending:
    """A request of ours awaiting its response; settled once, by `InFlight.settle`.

    A waiter on the loop uses `event`; a waiter on another thread holds `waker`, a lock
    that settling releases (the cheapest way to wake a blocked thread).
    """

    __slots__ = ("id", "method", "params", "event", "waker", "response", "failure", "sent_at", "received_at", "resent", "note")

    def __init__(self, request_id: int, method: str, params: dict[str, Any] | None, waker: LockType | None = None) -> None:
        self.id = request_id
        self.method = method
        self.params = params
        self.event: anyio.Event | None = None
        self.waker = waker
        self.response: dict[str, Any] | None = None
        self.failure: BaseException | None = None
        self.sent_at = 0.0
        self.received_at = 0.0
        self.resent = False
        self.note: str | None = None

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


def request_timeout(method: str, limit: float) -> RequestTimeout:
    return RequestTimeout(f"{method}: no response within {limit:g} s; the request was cancelled")


class InFlight:
    """The requests on the wire by id, the ids we gave up on (their late answers are noted,
    not mistaken for others), and the ping statistics a settled ping adds to."""

    def __init__(self, counters: HealthCounters) -> None:
        self.counters = counters
        self._ids = itertools.count(1)
        self._pending: dict[int, Pending] = {}
        self._cancelled: OrderedDict[int, str] = OrderedDict()
        self._ending = threading.Lock()
        self._ended = False
        self._settling = threading.Lock()

    def new(self, method: str, params: dict[str, Any] | None = None, waker: LockType | None = None) -> Pending:
        """A request with a fresh id; safe to call from any thread."""
        return Pending(next(self._ids), method, params, waker)

    def add(self, pending: Pending) -> None:
        self._pending[pending.id] = pending

    def add_unless_ended(self, pending: Pending) -> bool:
        """Add `pending` from any thread; False once the session has failed what was in flight."""
        with self._ending:
            if self._ended:
                return False
            self._pending[pending.id] = pending
            return True

    def get(self, request_id: object) -> Pending | None:
        return self._pending.get(request_id) if isinstance(request_id, int) else None

    def take_waited(self, request_id: object) -> Pending | None:
        """Remove and return the request `request_id` if a blocked caller (not the loop) waits for it."""
        if type(request_id) is not int:  # our ids: never a bool, nor a string
            return None
        pending = self._pending.get(request_id)
        if pending is None or pending.waker is None:
            return None
        return self._pending.pop(request_id, None)

    def pop(self, request_id: object) -> Pending | None:
        return self._pending.pop(request_id, None) if isinstance(request_id, int) else None

    def reissue(self, pending: Pending) -> int:
        """Give `pending` a new id (its old stream broke); returns the old one."""
        old, pending.id = pending.id, next(self._ids)
        self._pending[pending.id] = pending
        return old

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._pending

    def __len__(self) -> int:
        return len(self._pending)

    def forget(self, pending: Pending, reason: str) -> None:
        """We gave up on `pending`: drop it, and remember why, for its late answer."""
        self._pending.pop(pending.id, None)
        self._cancelled[pending.id] = reason
        while len(self._cancelled) > REMEMBERED_CANCELLATIONS:
            self._cancelled.popitem(last=False)

    def cancelled_reason(self, request_id: object) -> str | None:
        return self._cancelled.get(request_id) if isinstance(request_id, int) else None

    def settle(self, pending: Pending, response: dict[str, Any] | None = None, failure: BaseException | None = None) -> None:
        with self._settling:  # the session thread and a transport's reading thread may race here
            if pending.settled:
                return
            pending.response, pending.failure = response, failure
            if pending.method == "ping":
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
        if pending.waker is not None:
            pending.waker.release()

    def fail_all(self, error: BaseException) -> None:
        with self._ending:
            self._ended = True
            pending, self._pending = list(self._pending.values()), {}
        for request in pending:
            self.settle(request, failure=error)
