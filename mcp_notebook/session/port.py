"""What the session's parts may use of it: the inbound dispatcher and the era negotiator
hold the session as a `SessionPort`, never as the `Session` class.

The session owns those parts; they reach back only through this narrow contract, so the
modules import each other in one direction (session -> inbound, negotiation -> port) and each
part can be read without the others.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..base.errors import ConnectionClosed
from ..transports.base import Transport
from .handlers import Handlers
from .health import HealthCounters
from .outbox import Outbox
from .requests import InFlight, Request
from .sides import ClientSide, ServerSide
from .subscriptions import Subscription
from .trace import Trace
from .violations import FrameChecker

if TYPE_CHECKING:
    from .era import Era, NegotiatorPort


class SessionPort(Protocol):
    """The session as its inbound dispatcher and era negotiator see it."""

    transport: Transport
    trace: Trace
    counters: HealthCounters
    requests: InFlight
    outbox: Outbox
    request_handlers: Handlers
    notification_handlers: Handlers
    subscriptions: set[Subscription]
    timeout: float | None
    protocol_version: str | None
    server: ServerSide
    client: ClientSide
    checker: FrameChecker

    @property
    def eras(self) -> NegotiatorPort: ...

    @property
    def era(self) -> str: ...

    @property
    def rules(self) -> Era: ...

    @property
    def closed(self) -> bool: ...

    @property
    def running(self) -> bool:
        """Whether background tasks can still be started (the session has not begun to close)."""
        ...

    async def handshake(self) -> None: ...

    async def round_trip(
        self,
        method: str,
        params: dict[str, Any] | None = None,
        *,
        timeout: float | None = None,
        note: str | None = None,
    ) -> Request: ...

    def new_request(self, method: str, params: dict[str, Any] | None = None) -> Request: ...

    def launch(self, pending: Request) -> None: ...

    def abandon(self, pending: Request, failure: BaseException, reason: str) -> bool: ...

    def send_request(self, pending: Request, note: str | None = None) -> None: ...

    def set_state(self, state: str, reason: str) -> None: ...

    def limit(self, timeout: float | None) -> float | None: ...

    def count_sent(self, pending: Request, count: int = 1) -> None: ...

    async def outwait_user(self) -> bool: ...

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None: ...

    def soon(self, fn: Callable[[], None]) -> None:
        """Run `fn()` on the session's loop, from any thread."""
        ...

    def closed_error(self, detail: str | None = None) -> ConnectionClosed: ...

    def end(self, error: ConnectionClosed) -> None:
        """The connection cannot go on: fail what is pending with `error`, and stop."""
        ...
