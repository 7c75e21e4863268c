"""The two eras as strategies: what differs between legacy and modern, asked of one object.

`LEGACY` (the `initialize` handshake, 2024-11-05 to 2025-11-25) and `MODERN` (2026-07-28,
stateless) answer the same questions: how a request is framed on the wire, how it runs to
its end (one round, or `input_required` rounds), what a liveness probe is, how an abandoned
request is cancelled, and which features exist (pings, server requests, tasks, log levels,
subscriptions). The negotiator (`negotiation.EraNegotiator`) chooses one at connect;
nothing else compares era names: code above asks the chosen object. `era_named` reads a
user's option ("auto" is no era: it asks the negotiator to probe).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..base.errors import ConnectionClosed
from ..protocol import jsonrpc as rpc
from ..protocol import modern
from ..protocol.versions import LEGACY_ERA, LEGACY_VERSIONS, MODERN_ERA, MODERN_VERSIONS

if TYPE_CHECKING:
    from ..transports.base import Transport
    from .listed_tools import ListedTools
    from .requests import Request
    from .sides import ClientSide


class RoundSender(Protocol):
    """Puts one round of a call on the wire and awaits its response (`note`: for the trace;
    `probe`: it counts as our ping)."""

    async def __call__(
        self, method: str, params: dict[str, Any] | None = None, *, note: str | None = None, probe: bool = False
    ) -> Request: ...


class Sends(Protocol):
    """The session's outbox, as far as cancelling needs it."""

    def send(self, message: dict[str, Any], kind: str, note: str | None = None) -> None: ...


class NegotiatorPort(Protocol):
    """What the negotiator keeps for the modern era: the version it settled on, the tools'
    schemas for the Mcp-Param headers, and the modern request flow."""

    modern_version: str
    listed_tools: ListedTools

    async def modern_request(self, method: str, params: dict[str, Any] | None, *, send: RoundSender) -> Any: ...

    async def liveness(self, send: RoundSender) -> float: ...


class EraSession(Protocol):
    """The session as its era's rules see it."""

    transport: Transport

    @property
    def outbox(self) -> Sends: ...

    client: ClientSide
    protocol_version: str | None

    @property
    def eras(self) -> NegotiatorPort: ...

    @property
    def rules(self) -> Era: ...

    @property
    def closed(self) -> bool: ...


AUTO = "auto"
ERA_CHOICES = (AUTO, LEGACY_ERA, MODERN_ERA)  # what users may ask for


class Era:
    """What one era's rules say; one instance per era, shared by every session."""

    name = ""
    stateless = False  # each request stands alone: no handshake, no session
    pings = True  # ping exists, both ways
    server_requests = True  # the server may send us requests (sampling, elicitation, roots, ping)
    tasks = True  # task-augmented requests (2025-11-25)
    log_level_per_request = False  # a request may carry its own log level in _meta
    set_log_level = True  # logging/setLevel exists
    roots_changed = True  # notifications/roots/list_changed exists
    listens = False  # subscriptions/listen streams, instead of resources/subscribe
    discovers = False  # server/discover exists
    keepalive_jitter = False  # keepalive probes are spread out (a stateless server may be many)
    opening = "initialize"  # the first request of a connection
    probe = "ping"  # what a liveness check is called
    probe_method = "ping"
    opening_words = "legacy era, initialize handshake"

    def __repr__(self) -> str:
        return f"<era {self.name}>"

    def __str__(self) -> str:
        return self.name

    def frame(self, session: EraSession, pending: Request) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        """The params and extra HTTP headers `pending` goes out with (the probe is modern by definition)."""
        if pending.method == "server/discover":
            return MODERN.frame(session, pending)
        return pending.params, None

    def one_round(self, method: str) -> bool:
        """Whether a request is one round on the wire (else it runs as a flow on the loop)."""
        return True

    async def run(self, session: EraSession, method: str, params: dict[str, Any] | None, send: RoundSender) -> Any:
        """A request to its end, each round put on the wire by `send`; its result."""
        return (await send(method, params)).outcome()

    async def liveness(self, session: EraSession, send: RoundSender) -> Any:
        """One liveness check; its round is on the wire through `send`."""
        return (await send("ping", None)).outcome()

    def cancel(self, session: EraSession, pending: Request, reason: str) -> None:
        """Tell the server we gave up on `pending` (never `initialize`, which the spec forbids)."""
        if pending.method != "initialize" and not session.closed:
            try:
                session.outbox.send(
                    rpc.notification("notifications/cancelled", {"requestId": pending.id, "reason": reason}), rpc.NOTIFICATION
                )
            except ConnectionClosed:
                pass
            session.transport.cancel(pending.id)  # HTTP: stop reading its stream, which a server need not ever end

    def cancel_words(self, transport_kind: str) -> str:
        """What cancelling told the server, for the one line Ctrl-C prints."""
        return "cancelled; the server was sent notifications/cancelled"


class Legacy(Era):
    name = LEGACY_ERA


class Modern(Era):
    name = MODERN_ERA
    stateless = True
    pings = False
    server_requests = False
    tasks = False
    log_level_per_request = True
    set_log_level = False
    roots_changed = False
    listens = True
    discovers = True
    keepalive_jitter = True
    opening = "server/discover"
    probe = "liveness probe"
    probe_method = "server/discover"
    opening_words = "modern era, no handshake"

    def frame(self, session: EraSession, pending: Request) -> tuple[dict[str, Any] | None, dict[str, str] | None]:
        eras = session.eras
        version = session.protocol_version if session.rules is self and session.protocol_version else eras.modern_version
        params = modern.with_meta(pending.params, version, session.client.info, session.client.capabilities)
        headers = modern.request_headers(pending.method, params, version, eras.listed_tools.schemas.get(tool_name(params)))
        return params, headers

    def one_round(self, method: str) -> bool:
        return False  # input_required rounds, a version retry

    async def run(self, session: EraSession, method: str, params: dict[str, Any] | None, send: RoundSender) -> Any:
        return await session.eras.modern_request(method, params, send=send)

    async def liveness(self, session: EraSession, send: RoundSender) -> Any:
        return await session.eras.liveness(send)

    def cancel(self, session: EraSession, pending: Request, reason: str) -> None:
        if session.transport.kind == "stdio":
            super().cancel(session, pending, reason)
        else:
            session.transport.cancel(pending.id)  # 2026-07-28 HTTP: closing the response stream cancels

    def cancel_words(self, transport_kind: str) -> str:
        if transport_kind == "stdio":
            return super().cancel_words(transport_kind)
        return "cancelled; the request's response stream was closed, which cancels it in 2026-07-28"


LEGACY: Era = Legacy()
MODERN: Era = Modern()
ERAS = {era.name: era for era in (LEGACY, MODERN)}


def era_named(name: str | None) -> Era | None:
    """The era a user's option names; None for "auto" (or no option): the negotiator probes."""
    if name is None or name == AUTO:
        return None
    try:
        return ERAS[name]
    except KeyError:
        raise ValueError(f"unknown era {name!r}; use one of: {', '.join(ERA_CHOICES)}") from None


def era_of_version(version: str) -> Era | None:
    """The era a protocol version belongs to; None for a version we do not know."""
    return LEGACY if version in LEGACY_VERSIONS else MODERN if version in MODERN_VERSIONS else None


def tool_name(params: dict[str, Any] | None) -> str:
    return params.get("name", "") if isinstance(params, dict) and isinstance(params.get("name"), str) else ""
