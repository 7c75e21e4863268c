"""`subscriptions/listen` (2026-07-28): long-lived notification streams from the server.

The listen request's response is the stream: the server first acknowledges the filter
it will honour, then sends notifications tagged with the request's id, and ends with a
completion result when it closes the stream gracefully. An abrupt drop (no result) is
not the end: the subscription listens again, with bounded backoff, and counts it.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Protocol

import anyio

from ..base.errors import ConnectionClosed
from ..base.public import public
from .handlers import call_handler
from .requests import Request
from .trace import Trace

SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId"
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
MAX_RELISTENS = 5
KEPT = 1000


class Listening(Protocol):
    """What a subscription needs of its session: to send its listen request and give it up."""

    trace: Trace
    subscriptions: set[Subscription]

    def new_request(self, method: str, params: dict[str, Any] | None = None) -> Request: ...

    def launch(self, pending: Request) -> None: ...

    def abandon(self, pending: Request, failure: BaseException, reason: str) -> bool: ...

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None: ...


@public
class Subscription:
    """One subscription: its filter, what the server acknowledged, and what arrived."""

    def __init__(
        self, session: Listening, notifications: dict[str, Any], callback: Callable[[str, dict[str, Any]], Any] | None
    ) -> None:
        self.session = session
        self.filter = notifications
        self.callback = callback
        self.acknowledged: dict[str, Any] | None = None
        self.received: deque[tuple[str, dict[str, Any]]] = deque(maxlen=KEPT)
        self.relistens = 0
        self.ended: str | None = None  # why it ended, once it has
        self._pending: Request | None = None
        self._closing = False
        self._acked = threading.Event()  # any thread may wait for the acknowledgment
        self._changed = threading.Condition()
        self.acknowledgments = 0
        self.closer: Callable[[], None] | None = None

    @property
    def request_id(self) -> int | None:
        """The id of the listen request now serving this subscription (it changes on re-listen)."""
        return self._pending.id if self._pending is not None else None

    def wait_acknowledged(self, timeout: float | None = None) -> bool:
        return self._acked.wait(timeout)

    def wait_for(self, predicate: Callable[[Subscription], bool], timeout: float | None = None) -> bool:
        """Block until `predicate(self)` holds (checked at each acknowledgment, notification and end)."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    async def run(self) -> None:
        """Listen until the server ends it, we close it, or it keeps dropping."""
        session = self.session
        failures = 0
        while not self._closing:
            pending = session.new_request("subscriptions/listen", {"notifications": self.filter})
            pending.event = anyio.Event()
            self._pending = pending
            self._acked.clear()  # each listen is acknowledged anew
            session.launch(pending)
            await pending.event.wait()
            if self._closing:
                break
            if pending.response is not None:
                self.ended = (
                    "the server ended it"
                    if "result" in pending.response
                    else f"refused: {pending.response['error'].get('message')}"
                )
                break
            if isinstance(pending.failure, ConnectionClosed) or failures >= MAX_RELISTENS:
                self.ended = (
                    f"the connection ended: {pending.failure}"
                    if isinstance(pending.failure, ConnectionClosed)
                    else f"dropped {failures + 1} times"
                )
                break
            failures += 1
            self.relistens += 1
            session.trace.event(
                "relisten",
                note=f"the subscription stream dropped ({pending.failure}); listening again",
                subscription=self.request_id,
            )
            await anyio.sleep(min(0.25 * 2**failures, 5.0))
        self.ended = self.ended or "closed by the client"
        self._acked.set()
        session.subscriptions.discard(self)
        self._notify()

    def deliver(self, method: str, params: dict[str, Any]) -> None:
        """A notification tagged with this subscription's id (session thread)."""
        if method == ACKNOWLEDGED:
            self.acknowledged = params.get("notifications") or {}
            self.acknowledgments += 1
            self._acked.set()
            self._notify()
            return
        self.received.append((method, params))
        self._notify()
        if self.callback is not None:
            self.session.spawn(_call, self.callback, method, params, self.session)

    def close(self) -> None:
        """End the subscription, from any thread (the API layer supplies the hop to the session thread)."""
        if self.closer is not None:
            self.closer()
        else:
            self.cancel()

    def cancel(self) -> None:
        """End the subscription (session thread): cancel the listen request."""
        self._closing = True
        if self._pending is not None and not self._pending.settled:
            self.session.abandon(self._pending, ConnectionClosed("subscription closed"), "subscription closed by the client")

    def __repr__(self) -> str:
        state = self.ended or ("acknowledged" if self.acknowledged is not None else "waiting for acknowledgment")
        return f"<Subscription {self.filter} {state}, {len(self.received)} received, {self.relistens} re-listens>"


async def _call(callback: Callable[..., Any], method: str, params: dict[str, Any], session: Listening) -> None:
    try:
        await call_handler(lambda p: callback(method, p), params)
    except Exception as exc:  # noqa: BLE001 - a user callback never ends the session
        session.trace.event("handler-error", note=f"{type(exc).__name__}: {exc}")


def route(subscriptions: set[Subscription], method: str, params: Any) -> None:
    """Hand a notification to the subscription its `_meta` names, if any."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    sub_id = meta.get(SUBSCRIPTION_ID) if isinstance(meta, dict) else None
    if sub_id is None:
        return
    for sub in subscriptions:
        if sub.request_id == sub_id:
            sub.deliver(method, params)
            return
