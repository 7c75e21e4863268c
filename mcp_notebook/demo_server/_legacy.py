"""The handshake era (2024-11-05 .. 2025-11-25): one session, opened by `initialize`.

A session is the whole stdio process, or one `Mcp-Session-Id` on HTTP. Before
`initialize` only `ping` is served. After `notifications/initialized` the server
pings the client every `--ping-interval` seconds and counts the pongs (stderr gets a
line per pong).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

import anyio

from ..protocol import jsonrpc as rpc
from ..protocol.versions import LATEST_LEGACY, LEGACY_VERSIONS
from . import _features, _resources, _ui_app
from ._app import INSTRUCTIONS, LOG_LEVELS, SERVER_INFO, App, Call, Outbox, RpcError, cancel, log
from ._asking import Questions
from ._faults import wait_pong_delay

METHODS = frozenset({"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
MAX_UNANSWERED_PINGS = 1000

# Sends a server-initiated message to the client; False when there is nowhere to send it.
SendToClient = Callable[[dict[str, Any]], Awaitable[bool]]


class LegacySession:
    """One handshake-era session."""

    def __init__(self, app: App, send_to_client: SendToClient, label: str = "stdio") -> None:
        self.app = app
        self.label = label
        self.version: str | None = None
        self.initialized = False
        self.log_level = "debug"  # until logging/setLevel: every level
        self.client_capabilities: dict[str, Any] = {}
        self.subscribed: set[str] = set()  # resources/subscribe
        self.questions = Questions()  # elicitation and sampling requests waiting for the client
        self.in_flight: dict[Any, anyio.CancelScope] = {}
        self._send_to_client = send_to_client
        self._pings: dict[str, float] = {}  # our ping id -> when it was sent
        self._ping_scope = anyio.CancelScope()
        self._skipped_ping_logged = False

    def call(self, message: dict[str, Any], outbox: Outbox, **extra: Any) -> Call:
        version = self.version or LATEST_LEGACY
        return Call(
            message,
            outbox,
            version=version,
            modern=False,
            log_level=self.log_level,
            client_capabilities=self.client_capabilities,
            ask_client=partial(self.questions.ask, outbox),
            **extra,
        )

    async def handle(self, call: Call) -> dict[str, Any] | None:
        """A request's reply, or None for a ping left unanswered (ignore_pings)."""
        try:
            if call.method == "ping":
                return await self._pong(call)
            return rpc.result(call.id, await self._result(call))
        except RpcError as exc:
            return exc.reply(call.id)

    async def _result(self, call: Call) -> dict[str, Any]:
        method = call.method
        if method not in METHODS and method not in _features.METHODS:
            raise RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {method}")
        if method == "initialize":
            return self._initialize(call)
        if self.version is None:
            raise RpcError(rpc.INVALID_REQUEST, f"{method} before initialize: send initialize first")
        if method in _features.METHODS:
            return await _features.result(self.app, call)
        if method in ("resources/subscribe", "resources/unsubscribe"):
            subscribe = method == "resources/subscribe"
            return _resources.subscribe(self.app, self, self.subscribed, call, subscribe, self._send_to_client)
        return self._set_level(call)

    def _initialize(self, call: Call) -> dict[str, Any]:
        if self.version is not None:
            raise RpcError(rpc.INVALID_REQUEST, f"this session is already initialized ({self.version})")
        requested = call.params.get("protocolVersion")
        self.version = version = requested if isinstance(requested, str) and requested in LEGACY_VERSIONS else LATEST_LEGACY
        capabilities = call.params.get("capabilities")
        self.client_capabilities.update(capabilities if isinstance(capabilities, dict) else {})
        log(f"{self.label}: initialize: client asked for {requested!r}, serving {version}")
        return {
            "protocolVersion": version,
            "capabilities": _ui_app.capabilities(_features.capabilities(version), _ui_app.wanted(capabilities)),
            "serverInfo": SERVER_INFO,
            "instructions": INSTRUCTIONS,
        }

    def _set_level(self, call: Call) -> dict[str, Any]:
        level = call.params.get("level")
        if level not in LOG_LEVELS:
            raise RpcError(rpc.INVALID_PARAMS, f"level must be one of {', '.join(LOG_LEVELS)}")
        self.log_level = level
        return {}

    async def _pong(self, call: Call) -> dict[str, Any] | None:
        counters, faults = self.app.counters, self.app.faults
        counters.pings_received += 1
        if faults.ignore_pings:
            counters.pings_ignored += 1
            log(f"ignore_pings: not answering ping id={call.id!r}")
            return None
        if faults.pong_delay_ms:
            log(f"pong_delay_ms: ping id={call.id!r} gets its pong {faults.pong_delay_ms} ms after it arrived")
        await wait_pong_delay(faults, call.received_at)
        return rpc.result(call.id, {})

    def on_notification(self, message: dict[str, Any]) -> None:
        method = message["method"]
        if method == "notifications/initialized":
            self.initialized = True
        elif method == "notifications/cancelled":
            cancel(self.app, self.in_flight, message)

    def on_response(self, message: dict[str, Any]) -> None:
        """An answer to one of our questions (elicitation, sampling) or pings."""
        if self.questions.answered(message):
            return
        ping_id = message.get("id")
        sent_at = self._pings.pop(ping_id, None) if isinstance(ping_id, str) else None
        if sent_at is None:
            log(f"{self.label}: response to no request of ours: id={message.get('id')!r}")
            return
        rtt_ms = (anyio.current_time() - sent_at) * 1000
        if "error" in message:
            log(f"{self.label}: ping {message['id']} answered with an error after {rtt_ms:.1f} ms")
            return
        self.app.counters.server_pongs_received += 1
        log(f"{self.label}: pong {self.app.counters.server_pongs_received} ({message['id']}) after {rtt_ms:.1f} ms")

    async def run_pings(self) -> None:
        """Ping the client every `ping_interval` seconds once initialized, until close()."""
        interval = self.app.ping_interval
        if interval is None:
            return
        with self._ping_scope:
            number = 0
            while True:
                await anyio.sleep(interval)
                if not self.initialized:
                    continue
                number += 1
                ping_id = f"demo-ping-{number}"
                # Recorded before sending: the pong can be read before the send returns.
                self._pings[ping_id] = anyio.current_time()
                if len(self._pings) > MAX_UNANSWERED_PINGS:  # a client that never answers
                    del self._pings[next(iter(self._pings))]
                if await self._send_to_client(rpc.request(ping_id, "ping")):
                    self.app.counters.server_pings_sent += 1
                    continue
                del self._pings[ping_id]
                if not self._skipped_ping_logged:
                    self._skipped_ping_logged = True
                    log(f"{self.label}: no stream to the client is open: server pings wait for one")

    def close(self) -> None:
        self._ping_scope.cancel()
        self.app.watchers.forget(self)
