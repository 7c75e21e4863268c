"""Choosing and speaking an era: the `server/discover` probe, modern requests, liveness.

A session opens in the era it was given, or in "auto" probes with `server/discover`
(2026-07-28) and falls back to the legacy `initialize` handshake, within the same connect
and on a clean slate, on any answer that is not a DiscoverResult (`probe` says which
answers are which). Every way the era is chosen is an `era` event in the trace, with why.
Modern requests carry `_meta`, follow `resultType` (fulfilling `input_required` rounds
with the same handlers that answer legacy server requests), and retry once at a mutual
version on -32022. Ping does not exist in the modern era; `liveness()` measures a
cache-bypassing `server/discover` instead.

A probe that is merely late is never taken for "not modern". Over Streamable HTTP, where
every server answers a POST and the answer decides, it is waited for (up to the
connection's timeout). Over stdio (and HTTP+SSE) a legacy server may never answer it, so
once `probe_timeout` has passed `initialize` is offered beside it, on the same process, and
the first definite answer decides: a DiscoverResult, however late, is modern; a refused
`initialize` waits for the probe (up to the connection's timeout), as a modern-only server
refuses it; an answered `initialize`, or a probe answer that says "not modern", is legacy.
A server that exits when probed is reported, not restarted: connect with era="legacy".
"""

from __future__ import annotations

import math
import time
from typing import Any

import anyio

from ..base.errors import ConnectionClosed, HandshakeError, McpError, ProtocolViolation, RequestTimeout
from ..base.sizes import clipped_text, seconds_within
from ..base.stderr import blames_the_probe, quoted
from ..protocol import jsonrpc as rpc
from ..protocol import modern
from ..protocol.versions import LEGACY_VERSIONS, MODERN_VERSIONS
from .era import AUTO, LEGACY, MODERN, Era, RoundSender, era_named
from .handlers import call_handler
from .listed_tools import ListedTools
from .pending import request_timeout
from .port import SessionPort
from .probe import NoCommonVersion, not_modern, refusal, speaks_modern
from .requests import Request
from .sides import ServerSide
from .startup import gone, other_python

PROBE_TIMEOUT = 2.0
MAX_INPUT_ROUNDS = 8
NOTE_LIMIT = 300  # characters of a server's words quoted in an era note
MAX_DISCOVERY_TTL = 86_400.0  # seconds: a server's ttlMs beyond a day (or past a float's range) is a day


class EraNegotiator:
    """One session's era: how it was chosen, the modern version and discovery it settled on,
    and the modern request flow. The session owns one and asks it to open the connection."""

    def __init__(
        self,
        session: SessionPort,
        era: str,
        era_source: str | None,
        protocol_version: str | None,
        probe_timeout: float,
    ) -> None:
        pinned = era_named(era)
        allowed = {None: LEGACY_VERSIONS + MODERN_VERSIONS, LEGACY: LEGACY_VERSIONS, MODERN: MODERN_VERSIONS}[pinned]
        if protocol_version is not None and protocol_version not in allowed:
            raise ValueError(f"protocol version {protocol_version!r} is not a {era} version; use one of {', '.join(allowed)}")
        self.session = session
        self.pinned = pinned
        self.settled = pinned is not None
        self.rules: Era = pinned or LEGACY  # until a probe says otherwise: the probe itself is framed as modern
        self.source = era_source or (None if pinned is None else "pinned")
        self.probe_timeout = probe_timeout
        self.modern_version = protocol_version if protocol_version in MODERN_VERSIONS else MODERN_VERSIONS[0]
        self.discovered: dict[str, Any] | None = None
        self.discovered_at = 0.0
        # The tools' schemas for the modern Mcp-Param-* headers; those breaking them, left out.
        self.listed_tools = ListedTools(session)

    @property
    def era(self) -> str:
        """ "legacy", "modern", or "auto" until the probe has settled it."""
        return self.rules.name if self.settled else AUTO

    def _settle(self, rules: Era, source: str) -> None:
        self.rules, self.source, self.settled = rules, source, True

    async def open(self) -> None:
        if self.pinned is LEGACY:
            self.session.trace.event("era", note=f"legacy ({self.source}): no probe", era=LEGACY.name)
            await self.session.handshake()
        elif self.pinned is MODERN:
            await self._start_modern(await self._discover(note="discover"))
        else:
            await self._negotiate()

    async def _negotiate(self) -> None:
        """Probe with server/discover; modern on a modern answer, else the legacy handshake.

        A probe that is merely late (a server under load, or still starting up) is never taken
        for "not modern". Over Streamable HTTP every server answers a POST, if only with a 4xx,
        and that answer decides (basic/transports/streamable-http, backward compatibility): it
        is waited for, up to the connection's timeout, and nothing else goes on the modern wire
        meanwhile. Elsewhere (stdio, HTTP+SSE), where a legacy server may leave it unanswered,
        the handshake is offered beside it once `probe_timeout` has passed, and the first
        definite answer decides (`_beside_the_probe`).
        """
        session = self.session
        session.transport.probe_began()
        probe = session.new_request("server/discover", None)
        answered = probe.event = anyio.Event()
        probe.note = "era probe"
        session.launch(probe)
        with anyio.move_on_after(self.probe_timeout):
            await answered.wait()
        source = "probe: server/discover answered"
        if not probe.settled and session.transport.kind == "http":
            silent = await self._outwait(probe, answered)
            if silent is not None:
                return await self._fall_back(silent)
            source += " late"
        elif not probe.settled:
            if await self._beside_the_probe(probe, answered):
                return
            source += " after the handshake was offered"
        try:
            result = await self._discover(note="era probe", first=probe)
            version = self._mutual(result)
        except RequestTimeout:
            return await self._fall_back(f"no answer to server/discover within {self.probe_timeout:g} s")
        except ConnectionClosed as closed:
            exc = await gone(closed, self.session.transport)
            assert isinstance(exc, ConnectionClosed)
            advice = "; if it exits only when probed, connect with era='legacy'" if blames_the_probe(exc.stderr_tail) else ""
            advice += other_python(exc.stderr_tail, self.session.transport)
            raise HandshakeError(
                f"{exc.reason} during the handshake (probing with server/discover){quoted(exc.stderr_tail)}{advice}"
            ) from None
        except Exception as exc:
            why = not_modern(exc)
            if why is not None:
                return await self._fall_back(why)
            if isinstance(exc, McpError) and exc.code in modern.MODERN_ERRORS:
                raise HandshakeError(f"the server speaks the modern protocol but refused us: {exc}") from None
            raise
        await self._start_modern(result, source, version)

    async def _outwait(self, probe: Request, answered: anyio.Event) -> str | None:
        """Wait for a late probe's answer over HTTP; None once it has come, else (the connection's
        timeout passed: a server silent to a POST) why the handshake follows."""
        late = f"no answer to server/discover within {self.probe_timeout:g} s"
        self.session.trace.event("era", note=f"{late}: over HTTP its answer decides, so it is waited for")
        await self._wait_out(probe, answered)
        if probe.settled:
            return None
        limit = self.session.limit(None) or 0.0
        why = f"no answer to server/discover within {limit:g} s"
        self.session.abandon(probe, request_timeout("server/discover", limit), why)
        return why

    async def _beside_the_probe(self, probe: Request, answered: anyio.Event) -> bool:
        """Offer the handshake beside a late probe; whichever gives a definite answer decides.

        True once the session is legacy: initialize answered. False once the probe speaks
        modern, however late (the handshake is forgotten). A refused handshake is no verdict
        while the probe is out (a modern-only server refuses initialize): the probe is waited
        for, until the connection's timeout has passed since it was sent; then, or when the
        probe says "not modern", the refusal is the error.
        """
        session = self.session
        late = f"no answer to server/discover within {self.probe_timeout:g} s"
        session.trace.event("era", note=f"{late}; offering the legacy handshake beside it")
        shaken = anyio.Event()
        failures: list[BaseException] = []

        async def shake() -> None:
            try:
                await session.handshake()
            except Exception as exc:  # noqa: BLE001 - raised below, if the handshake is the verdict
                failures.append(exc)
            finally:
                shaken.set()

        async with anyio.create_task_group() as handshake:
            handshake.start_soon(shake)
            await _first_of(answered, shaken)
            if failures and not answered.is_set():
                failed = clipped_text(str(failures[0]), NOTE_LIMIT)
                session.trace.event("era", note=f"initialize failed ({failed}) while server/discover is out: waiting for it")
                await self._wait_out(probe, answered)
            shaken_first = shaken.is_set() and not failures
            if answered.is_set() and not shaken_first and speaks_modern(probe.response):
                handshake.cancel_scope.cancel()  # initialize is never cancelled on the wire, only forgotten
                return False
            await shaken.wait()  # the probe says "not modern", or nothing yet: the handshake decides
        why = refusal(probe) if probe.settled else None
        if not probe.settled:
            reason = "the handshake was refused, and the probe not answered" if failures else "the handshake answered first"
            session.abandon(probe, ConnectionClosed(reason), reason)
        if failures:
            raise failures[0]
        self._settle(LEGACY, f"probe: {why or late}")
        session.trace.event("era", note=f"legacy ({self.source}; initialize answered)", era=LEGACY.name)
        return True

    async def _wait_out(self, probe: Request, answered: anyio.Event) -> None:
        """Wait for the probe as any request waits: the connection's timeout, counted from its
        sending, and as long again after an authorization a person did meanwhile."""
        limit = self.session.limit(None)
        left = math.inf if limit is None else max(0.0, limit - (time.perf_counter() - probe.sent_at))
        while True:
            with anyio.move_on_after(left):
                await answered.wait()
            if answered.is_set() or not await self.session.outwait_user():
                return
            left = math.inf if limit is None else limit

    async def _fall_back(self, why: str) -> None:
        """Not modern: the handshake, on a clean slate (nothing the probe's answer left is kept)."""
        self._settle(LEGACY, f"probe: {why}")
        self.session.trace.event("era", note=f"legacy ({why}): the handshake follows on a clean slate", era=LEGACY.name)
        self.session.transport.probe_refused()
        await self.session.handshake()

    async def _discover(
        self, *, timeout: float | None = None, note: str | None = None, first: Request | None = None
    ) -> dict[str, Any]:
        """One server/discover round trip (or `first`, one already answered); a -32022 naming a
        version we speak is retried once at that version (even the one we sent: a server may
        refuse a first request for its own reasons), else it is a `NoCommonVersion`."""
        for attempt in range(2):
            if attempt == 0 and first is not None:
                pending = first
            else:
                pending = await self.session.round_trip("server/discover", timeout=timeout, note=note)
            try:
                result = pending.outcome()
            except McpError as exc:
                if exc.code != modern.UNSUPPORTED_VERSION:
                    raise
                theirs = modern.supported_versions(exc.data)
                version = modern.mutual_version(theirs)
                if version is None or attempt == 1:
                    raise NoCommonVersion(self.modern_version, theirs, pinned=self.pinned is MODERN) from None
                self.session.trace.event("era", note=f"the server refused {self.modern_version}: retrying at {version}")
                self.modern_version = version
                continue
            if not isinstance(result, dict) or not isinstance(result.get("supportedVersions"), list):
                raise McpError(rpc.INTERNAL_ERROR, "server/discover answered without supportedVersions", method="server/discover")
            return result
        raise HandshakeError("the server keeps refusing our protocol version")

    def _mutual(self, discovered: dict[str, Any]) -> str:
        """The modern version we speak with a server that discovered itself; NoCommonVersion if none."""
        theirs = [v for v in discovered["supportedVersions"] if isinstance(v, str)]
        version = modern.mutual_version(theirs)
        if version is None:
            raise NoCommonVersion(self.modern_version, theirs, pinned=self.pinned is MODERN)
        return version

    async def _start_modern(self, discovered: dict[str, Any], source: str | None = None, version: str | None = None) -> None:
        version = version or self._mutual(discovered)
        self._settle(MODERN, source or self.source or "pinned")
        self.session.protocol_version = version
        self._remember_discovery(discovered)
        self.session.transport.use_modern(version)
        self.session.trace.event("era", note=f"modern {version} ({self.source})", era=MODERN.name)

    def _remember_discovery(self, discovered: dict[str, Any]) -> None:
        self.discovered, self.discovered_at = discovered, time.monotonic()
        meta = discovered.get("_meta") or {}
        session = self.session
        info = meta.get(modern.META_SERVER_INFO) or session.server.info
        session.server = ServerSide(info, discovered.get("capabilities") or {}, discovered.get("instructions"))

    async def discover(self, *, refresh: bool = False) -> dict[str, Any]:
        """The server's DiscoverResult, from the cache while its `ttlMs` lasts."""
        ttl = seconds_within((self.discovered or {}).get("ttlMs"), 0.0, MAX_DISCOVERY_TTL * 1000)
        fresh = self.discovered is not None and ttl is not None and time.monotonic() - self.discovered_at < ttl / 1000
        if refresh or not fresh:
            self._remember_discovery(await self._discover(note="discover"))
        assert self.discovered is not None
        return self.discovered

    async def liveness(self, send: RoundSender) -> float:
        """Ping's modern stand-in: the transport is up, and a fresh server/discover comes back.

        Returns the discover round-trip time in seconds. The probe counts as our pings do
        (sent, answered, failed, timed out): it is this era's ping.
        """
        if self.session.closed:
            raise self.session.closed_error()
        probe = await send("server/discover", None, note="liveness probe (ping was removed in 2026-07-28)", probe=True)
        self._remember_discovery(probe.outcome())
        return probe.rtt

    async def modern_request(self, method: str, params: dict[str, Any] | None, *, send: RoundSender) -> Any:
        """A modern request to completion: version retry, then `input_required` rounds, bounded.

        Each round is one request on the wire, sent by `send(method, params)`; the caller
        keeps the deadline and cancels by abandoning the round it sees.
        """
        retried_version = retried_headers = False
        self.listed_tools.refuse(method, params)
        for _ in range(MAX_INPUT_ROUNDS):
            pending = await send(method, params)
            try:
                result = pending.outcome()
            except McpError as exc:
                version = modern.mutual_version(modern.supported_versions(exc.data))
                if exc.code == modern.UNSUPPORTED_VERSION and version and not retried_version:
                    self.session.protocol_version, retried_version = version, True
                    continue
                if exc.code == modern.HEADER_MISMATCH and method == "tools/call" and not retried_headers:
                    retried_headers = True  # the tool's x-mcp-header schema may have changed: relist, retry
                    await self.modern_request("tools/list", None, send=send)
                    continue
                if exc.code == modern.MISSING_CLIENT_CAPABILITY:
                    wanted = (exc.data or {}).get("requiredCapabilities") if isinstance(exc.data, dict) else None
                    raise McpError(
                        exc.code,
                        f"the server needs client capabilities {wanted}; connect with capabilities=... (and a handler for them)",
                        exc.data,
                        method=method,
                    ) from None
                raise
            kind = modern.result_type(result)
            if kind == modern.COMPLETE:
                return self.listed_tools.take(params, result) if method == "tools/list" else result
            if kind == modern.INPUT_REQUIRED:
                params = await self._with_input(method, params, result)
                continue
            raise ProtocolViolation(
                f"{method}: the server answered with resultType {result.get('resultType')!r}, which is not defined"
            )
        raise ProtocolViolation(f"{method}: still asking for input after {MAX_INPUT_ROUNDS} rounds; gave up")

    async def _with_input(self, method: str, params: dict[str, Any] | None, result: dict[str, Any]) -> dict[str, Any]:
        """The retry's params: the inputs the server asked for, through the user's handlers, and its state."""
        responses: dict[str, Any] = {}
        for key, request in (result.get("inputRequests") or {}).items():
            wanted = request.get("method") if isinstance(request, dict) else None
            handler = self.session.request_handlers.get(wanted) if isinstance(wanted, str) else None
            if handler is None:
                raise McpError(
                    rpc.METHOD_NOT_FOUND,
                    f"the server needs input ({wanted}) that no handler provides; "
                    f"register one with conn.on_request({wanted!r}, ...)",
                    method=method,
                )
            value = await call_handler(handler, request.get("params") or {})
            responses[key] = {} if value is None else value
        retry = {k: v for k, v in (params or {}).items() if k not in ("inputResponses", "requestState")}
        if responses:
            retry["inputResponses"] = responses
        if "requestState" in result:
            retry["requestState"] = result["requestState"]  # echoed exactly, never read
        return retry


async def _first_of(*events: anyio.Event) -> None:
    """Wait until any of `events` is set."""
    async with anyio.create_task_group() as waiting:

        async def wait(event: anyio.Event) -> None:
            await event.wait()
            waiting.cancel_scope.cancel()

        for event in events:
            waiting.start_soon(wait, event)
