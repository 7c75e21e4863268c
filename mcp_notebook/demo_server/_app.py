"""What every transport and era shares: the server's identity and state, and one request in flight.

`App` holds the era setting, the fault switches and the counters. A `Call` is one
client request being served: its frame, the version it is served at, and the
`Outbox` its notifications and its response go to (stdout on stdio, the request's
own HTTP response on HTTP). `serve()` runs a request handler in a cancel scope and
hands its reply to `App.respond()`, where the drop fault is applied.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from ..base.about import __version__
from ..protocol import jsonrpc as rpc
from ..protocol.versions import LEGACY_VERSIONS, MODERN_VERSIONS
from ._faults import Faults

SERVER_INFO = {"name": "mcp-notebook-demo", "version": __version__}
INSTRUCTIONS = (
    "A demo server for learning MCP: tools (echo, add, slow with progress and cancellation, image, log, "
    "bump, ask_name and summarize that ask the client, drop_stream, faults), resources and templates "
    "under demo://, prompts with argument completion, resource subscriptions and logging."
)
ERAS = ("legacy", "modern", "both")
CRASH_EXIT_CODE = 3
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
# Responses that set a connection up are never dropped, so a demo always gets connected.
SETUP_METHODS = frozenset({"initialize", "server/discover"})
PROTOCOL_VERSION_KEY = "io.modelcontextprotocol/protocolVersion"


class ToolError(Exception):
    """A tool execution error: reported inside the result with isError (so a model could correct itself)."""


class RpcError(Exception):
    """A request that fails with a JSON-RPC error response."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code, self.message, self.data = code, message, data

    def reply(self, request_id: rpc.RequestId | None) -> dict[str, Any]:
        return rpc.error(request_id, self.code, self.message, self.data)


def log(text: str) -> None:
    """One line on stderr (stdout is the protocol channel on stdio)."""
    print(f"demo-server: {text}", file=sys.stderr, flush=True)


def crash(reason: str) -> None:
    log(f"crash: {reason}; exiting with code {CRASH_EXIT_CODE}")
    os._exit(CRASH_EXIT_CODE)


@dataclass
class Counters:
    pings_received: int = 0
    pings_ignored: int = 0
    server_pings_sent: int = 0
    server_pongs_received: int = 0
    responses_dropped: int = 0
    requests_cancelled: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(vars(self))


class Outbox(Protocol):
    """Where one request's messages go, in order."""

    async def send(self, message: dict[str, Any]) -> None:
        """A message before the response (progress, log)."""

    async def send_text(self, text: str) -> None:
        """A frame exactly as given (the malformed fault)."""

    async def finish(self, reply: dict[str, Any]) -> None:
        """The response; nothing follows it."""

    async def abandon(self) -> None:
        """No response will come: the request was cancelled."""

    async def hold(self) -> None:
        """The response is withheld (dropped or ignored): keep the request unanswered."""


@dataclass
class Call:
    """One client request being served."""

    message: dict[str, Any]
    outbox: Outbox
    version: str
    modern: bool
    # Lowest level of notifications/message to send; None sends none (modern without opt-in).
    log_level: str | None = "debug"
    # What the client declared (legacy: at initialize; modern: in this request's _meta).
    client_capabilities: dict[str, Any] = field(default_factory=dict)
    # Legacy: send a server request on this call's channel and wait for the client's answer.
    ask_client: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]] | None = None
    # Set by transports that have a session to forget (legacy HTTP).
    expire_session: Callable[[], None] | None = None
    # Legacy HTTP: end this request's SSE stream now; the rest is kept for a GET with Last-Event-ID.
    drop_stream: Callable[[], Awaitable[None]] | None = None
    after_response: list[Callable[[], None]] = field(default_factory=list)
    received_at: float = field(default_factory=anyio.current_time)

    @property
    def id(self) -> rpc.RequestId:
        request_id: rpc.RequestId = self.message["id"]
        return request_id

    @property
    def method(self) -> str:
        return str(self.message["method"])

    @property
    def params(self) -> dict[str, Any]:
        return rpc.params_of(self.message)

    @property
    def meta(self) -> dict[str, Any]:
        return rpc.meta_of(self.message)

    def at_least(self, version: str) -> bool:
        """Whether the served version is `version` or later (dates compare as strings)."""
        return self.version >= version

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self.outbox.send(rpc.notification(method, params))

    async def progress(self, progress: float, total: float, message: str) -> None:
        token = self.meta.get("progressToken")
        if not rpc.is_valid_id(token):
            return
        params: dict[str, Any] = {"progressToken": token, "progress": progress, "total": total}
        if self.at_least("2025-03-26"):
            params["message"] = message
        await self.notify("notifications/progress", params)

    def wants_log(self, level: str) -> bool:
        return self.log_level is not None and LOG_LEVELS.index(level) >= LOG_LEVELS.index(self.log_level)


# Sends one notification to a watcher; False when it could not go now, raises when the watcher has gone.
Send = Callable[[dict[str, Any]], Awaitable[Any]]


class Watchers:
    """Who is told when a resource changes: (URIs watched, how to tell them), by a key."""

    def __init__(self) -> None:
        self._by_key: dict[object, tuple[set[str], Send, dict[str, Any]]] = {}

    def watch(self, key: object, uris: set[str], send: Send, meta: dict[str, Any] | None = None) -> None:
        self._by_key[key] = (uris, send, meta or {})

    def forget(self, key: object) -> None:
        self._by_key.pop(key, None)

    async def changed(self, uri: str) -> int:
        """Tell every watcher of `uri`; how many were told."""
        told = 0
        for key, (uris, send, meta) in list(self._by_key.items()):
            if uri not in uris:
                continue
            params: dict[str, Any] = {"uri": uri}
            if meta:
                params["_meta"] = meta
            try:
                if await send(rpc.notification("notifications/resources/updated", params)) is not False:
                    told += 1
            except Exception as exc:  # noqa: BLE001 - a watcher that has gone is forgotten, not fatal
                log(f"resource update for {uri} not delivered ({type(exc).__name__}): forgetting that watcher")
                self.forget(key)
        return told


class App:
    """The demo server's process-wide state."""

    def __init__(self, era: str = "legacy", faults: Faults | None = None, ping_interval: float | None = None):
        if era not in ERAS:
            raise ValueError(f"era must be one of {ERAS}, not {era!r}")
        self.era = era
        self.faults = faults if faults is not None else Faults()
        self.ping_interval = ping_interval if ping_interval and ping_interval > 0 else None
        self.counters = Counters()
        self.counter = 0  # the demo://counter resource
        self.watchers = Watchers()

    @property
    def serves_legacy(self) -> bool:
        return self.era in ("legacy", "both")

    def supported_versions(self) -> list[str]:
        """What `server/discover` and UnsupportedProtocolVersionError name, newest first."""
        return [*MODERN_VERSIONS, *(LEGACY_VERSIONS if self.serves_legacy else ())]

    async def respond(self, call: Call, reply: dict[str, Any]) -> None:
        """Send a request's reply, unless the drop fault withholds it."""
        if call.method not in SETUP_METHODS and self.faults.drop():
            self.counters.responses_dropped += 1
            log(f"drop_percent: dropped the response to {call.method} id={call.id!r}")
            self._after(call)
            await call.outbox.hold()
            return
        await call.outbox.finish(reply)
        self._after(call)

    @staticmethod
    def _after(call: Call) -> None:
        for action in call.after_response:
            action()


Handler = Callable[[Call], Awaitable["dict[str, Any] | None"]]


async def serve(app: App, call: Call, handler: Handler, in_flight: dict[Any, anyio.CancelScope]) -> None:
    """Run `handler` for `call` where `notifications/cancelled` can reach it, then respond.

    The handler returns the reply, or None for a request that is never to be answered
    (an ignored ping). A cancelled request gets no response.
    """
    reply: dict[str, Any] | None = None  # the handler's, unless the call is cancelled: then it is never read
    with anyio.CancelScope() as scope:
        in_flight[call.id] = scope
        try:
            reply = await handler(call)
        except anyio.get_cancelled_exc_class():
            if not scope.cancel_called:  # from outside: the HTTP client closed the connection
                _client_left(app, call)
            raise
        except Exception:  # noqa: BLE001 - a bug in one call never takes the server down
            log(f"error serving {call.method} id={call.id!r}:\n{traceback.format_exc()}")
            reply = rpc.error(call.id, rpc.INTERNAL_ERROR, "Internal error in the demo server (see its stderr)")
        finally:
            if in_flight.get(call.id) is scope:
                del in_flight[call.id]
    if scope.cancelled_caught:
        await call.outbox.abandon()
        return
    if reply is None:
        await call.outbox.hold()
        return
    await app.respond(call, reply)


def _client_left(app: App, call: Call) -> None:
    if call.modern:  # 2026-07-28 HTTP: closing the response stream is the cancellation
        app.counters.requests_cancelled += 1
        log(f"cancelled request id={call.id!r}: the client closed its response stream")
    else:
        log(f"request id={call.id!r} stopped: the client closed the connection before the response")


def cancel(app: App, in_flight: dict[Any, anyio.CancelScope], message: dict[str, Any]) -> None:
    """Handle `notifications/cancelled`: stop the named request if it is still running."""
    params = message.get("params")
    request_id = params.get("requestId") if isinstance(params, dict) else None
    scope = in_flight.pop(request_id, None) if rpc.is_valid_id(request_id) else None
    if scope is None:
        log(f"cancel for id={request_id!r}: no such request in flight")
        return
    app.counters.requests_cancelled += 1
    log(f"cancelled request id={request_id!r}")
    scope.cancel()
