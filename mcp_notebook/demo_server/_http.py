"""Streamable HTTP at `/mcp`, on 127.0.0.1 only.

Legacy era (2025-03-26 .. 2025-11-25 shape): `initialize` opens a session and its
response carries `Mcp-Session-Id`; every later POST, GET and DELETE must carry it
(400 without, 404 for one we do not know or have forgotten). Requests are answered
with JSON, or with SSE when something goes out before the response. Notifications
and responses get 202. GET opens the session's listening SSE stream (one at a time:
409 for a second one); server pings go there. DELETE ends the session. The events of
a session's POST streams carry ids, and a GET with `Last-Event-ID` resumes the stream
that id belongs to (`_resume`).

Modern era (2026-07-28): stateless, no session ids minted or read. Each request is
checked by `_modern.check()` (headers included), and a JSON error goes out with the
status the spec gives its code (400, or 404 for -32601). GET and DELETE get 405.
Closing the response (disconnecting) cancels the request.

`--era both`: a POST is legacy when it is `initialize` or carries `Mcp-Session-Id`
(without a modern `MCP-Protocol-Version`); every other POST is modern.

Every request whose `Origin` or `Host` header names anything but loopback gets 403.

With OAuth settings (`--oauth`), `/mcp` wants bearer tokens (`_guard`) and the same
origin serves the authorization server (`_authserver`) and the resource metadata.
"""

from __future__ import annotations

import secrets
import sys
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import anyio
from anyio.abc import SocketAttribute, TaskGroup

from ..protocol import jsonrpc as rpc
from ..protocol.versions import LEGACY_VERSIONS, MODERN_VERSIONS
from . import _modern
from ._app import App, RpcError, log, serve
from ._authserver import AuthServer
from ._guard import Guard
from ._h11 import GONE, Exchange, Request, serve_connection
from ._legacy import LegacySession
from ._oauth_settings import OAuthSettings
from ._resume import EventStore
from ._stdio import stdin_lines

HOST = "127.0.0.1"
PATH = "/mcp"
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})


def loopback_request(request: Request) -> bool:
    """No foreign `Origin` (the spec's DNS-rebinding rule) and no foreign `Host` (defence in depth)."""
    origin, host = request.header("origin"), request.header("host")
    try:
        if origin is not None:
            parts = urlsplit(origin)
            if parts.scheme not in ("http", "https") or parts.hostname not in LOOPBACK_NAMES:
                return False
        return host is None or urlsplit(f"//{host}").hostname in LOOPBACK_NAMES
    except ValueError:
        return False


def _problem(code: int, message: str) -> dict[str, Any]:
    """A JSON-RPC error without an id, as the body of an HTTP error status."""
    return rpc.error(None, code, message)


class HttpSession:
    """A legacy session over HTTP: its id, its LegacySession and its listening GET stream."""

    def __init__(self, app: App) -> None:
        self.id = secrets.token_hex(16)
        self.legacy = LegacySession(app, self.send_to_client, label=f"session {self.id[:8]}")
        self.listener: Exchange | None = None
        self.events = EventStore()
        self.ended = anyio.Event()

    async def send_to_client(self, message: dict[str, Any]) -> bool:
        if self.listener is None:
            return False
        try:
            await self.listener.send(message)
        except GONE:
            return False  # the stream broke; its GET handler clears it when it notices
        return True

    def end(self) -> None:
        self.legacy.close()
        self.ended.set()


class Endpoint:
    def __init__(self, app: App, task_group: TaskGroup, oauth: OAuthSettings | None = None, origin: str = "") -> None:
        self.app = app
        self.task_group = task_group
        self.sessions: dict[str, HttpSession] = {}
        self.auth_server: AuthServer | None = None
        self.guard: Guard | None = None
        if oauth is not None:
            self.auth_server = AuthServer(oauth)
            self.auth_server.bind(origin, PATH)
            self.guard = Guard(self.auth_server, PATH)

    async def __call__(self, request: Request, exchange: Exchange) -> None:
        if not loopback_request(request):
            await exchange.reply(403, _problem(rpc.INVALID_REQUEST, "Forbidden: Origin or Host is not loopback"))
        elif self.guard is not None and request.path in self.guard.metadata_paths():
            await exchange.reply(200, self.guard.metadata())
        elif self.auth_server is not None and request.path in self.auth_server.paths():
            await self.auth_server(request, exchange)
        elif request.path != PATH:
            await exchange.reply(404)
        elif self.guard is not None and not await self.guard.admit(request, exchange):
            return
        elif request.method == "POST":
            await self.post(request, exchange)
        elif request.method in ("GET", "DELETE") and self.app.serves_legacy:
            await (self.get if request.method == "GET" else self.delete)(request, exchange)
        else:
            allow = "GET, POST, DELETE" if self.app.serves_legacy else "POST"
            await exchange.reply(405, headers=[("allow", allow)])

    # ------------------------------------------------------------------ POST

    async def post(self, request: Request, exchange: Exchange) -> None:
        accept = request.header("accept") or ""
        if "application/json" not in accept or "text/event-stream" not in accept:
            message = "Not Acceptable: Accept must list application/json and text/event-stream"
            await exchange.reply(406, _problem(rpc.INVALID_REQUEST, message))
            return
        content_type = (request.header("content-type") or "").partition(";")[0].strip().lower()
        if content_type != "application/json":
            await exchange.reply(415, _problem(rpc.INVALID_REQUEST, "Content-Type must be application/json"))
            return
        frame = rpc.decode(request.body.decode("utf-8", "replace"))
        if frame.kind in (rpc.INVALID, rpc.BATCH):
            code = rpc.PARSE_ERROR if frame.kind == rpc.INVALID and frame.message is None else rpc.INVALID_REQUEST
            await exchange.reply(400, _problem(code, frame.problem or "JSON-RPC batches are not supported"))
        elif self._is_legacy(request, frame):
            await self.post_legacy(request, frame, exchange)
        else:
            await self.post_modern(request, frame, exchange)

    def _is_legacy(self, request: Request, frame: rpc.Frame) -> bool:
        if self.app.era != "both":
            return self.app.era == "legacy"
        if frame.kind == rpc.REQUEST and frame.method == "initialize":
            return True
        has_session = request.header("mcp-session-id") is not None
        return has_session and request.header("mcp-protocol-version") not in MODERN_VERSIONS

    async def post_legacy(self, request: Request, frame: rpc.Frame, exchange: Exchange) -> None:
        if frame.kind == rpc.REQUEST and frame.method == "initialize":
            if request.header("mcp-session-id") is not None:
                message = "initialize opens a new session: send it without Mcp-Session-Id"
                await exchange.reply(400, _problem(rpc.INVALID_REQUEST, message))
            else:
                await self._initialize(frame, exchange)
            return
        session = await self._session_of(request, exchange)
        if session is None:
            return
        version = request.header("mcp-protocol-version")
        if version is not None and version not in LEGACY_VERSIONS:
            message = f"Bad Request: unsupported MCP-Protocol-Version {version!r} in a legacy session"
            await exchange.reply(400, _problem(rpc.INVALID_REQUEST, message))
        elif frame.kind == rpc.REQUEST:
            legacy = session.legacy
            exchange.stored = session.events.open()
            expire = partial(self.expire, session)
            call = legacy.call(frame.message, exchange, expire_session=expire, drop_stream=exchange.drop)
            await serve(self.app, call, legacy.handle, legacy.in_flight)
        else:
            if frame.kind == rpc.NOTIFICATION:
                session.legacy.on_notification(frame.message)
            else:
                session.legacy.on_response(frame.message)
            await exchange.reply(202)

    async def _initialize(self, frame: rpc.Frame, exchange: Exchange) -> None:
        session = HttpSession(self.app)
        call = session.legacy.call(frame.message, exchange)
        reply = await session.legacy.handle(call)
        assert reply is not None  # only pings go unanswered
        if "result" in reply:
            self.sessions[session.id] = session
            self.task_group.start_soon(session.legacy.run_pings)
            exchange.headers.append(("mcp-session-id", session.id))
            log(f"session {session.id[:8]} opened")
        await exchange.finish(reply)  # set-up is never dropped

    async def post_modern(self, request: Request, frame: rpc.Frame, exchange: Exchange) -> None:
        if frame.kind == rpc.NOTIFICATION:
            await exchange.reply(202)  # none are defined over HTTP in this era; accepted and ignored
            return
        if frame.kind != rpc.REQUEST:
            message = "clients send no responses in 2026-07-28 (there are no server requests)"
            await exchange.reply(400, _problem(rpc.INVALID_REQUEST, message))
            return
        exchange.status_of = _modern.http_status
        if frame.method == "initialize":
            await exchange.finish(_modern.reject_initialize(frame.message))
            return
        try:
            call = _modern.call(self.app, frame.message, exchange, headers=request.headers)
        except RpcError as exc:
            await exchange.finish(exc.reply(frame.id))
            return
        await serve(self.app, call, partial(_modern.handle, self.app), {})

    # ------------------------------------------------------------------ sessions

    async def _session_of(self, request: Request, exchange: Exchange) -> HttpSession | None:
        """The request's session, or None after answering 400 (no id) or 404 (unknown id)."""
        session_id = request.header("mcp-session-id")
        if session_id is None:
            message = "Bad Request: Mcp-Session-Id header is required (send initialize first)"
            await exchange.reply(400, _problem(rpc.INVALID_REQUEST, message))
            return None
        session = self.sessions.get(session_id)
        if session is None:
            await exchange.reply(404, _problem(rpc.INVALID_REQUEST, "Session not found"))
        return session

    def expire(self, session: HttpSession) -> None:
        if self.sessions.pop(session.id, None) is not None:
            session.end()
            log(f"expire_session: forgot session {session.id[:8]}; its next request gets 404")

    async def get(self, request: Request, exchange: Exchange) -> None:
        if "text/event-stream" not in (request.header("accept") or ""):
            message = "Not Acceptable: Accept must list text/event-stream"
            await exchange.reply(406, _problem(rpc.INVALID_REQUEST, message))
            return
        session = await self._session_of(request, exchange)
        if session is None:
            return
        resumed = session.events.find(request.header("last-event-id") or "")
        if resumed is not None:
            stream, after = resumed
            log(f"session {session.id[:8]}: resuming stream {stream.key} after event {after}")
            await exchange.open_stream()
            await stream.replay(after, exchange.send_event)
            await exchange.end_stream()
            return
        if session.listener is not None:
            message = "Conflict: this session's GET stream is already open"
            await exchange.reply(409, _problem(rpc.INVALID_REQUEST, message))
            return
        session.listener = exchange
        try:
            await exchange.open_stream()
            await session.ended.wait()
        finally:
            if session.listener is exchange:
                session.listener = None
        await exchange.end_stream()

    async def delete(self, request: Request, exchange: Exchange) -> None:
        session = await self._session_of(request, exchange)
        if session is not None:
            self.sessions.pop(session.id, None)
            session.end()
            log(f"session {session.id[:8]} ended by the client (DELETE)")
            await exchange.reply(200)


async def _exit_at_stdin_eof(scope: anyio.CancelScope) -> None:
    async for _ in stdin_lines():
        pass
    log("stdin closed: exiting")
    scope.cancel()


async def serve_http(app: App, port: int = 0, exit_with_stdin: bool = False, oauth: OAuthSettings | None = None) -> None:
    """Serve until cancelled; prints `listening on http://127.0.0.1:PORT/mcp` to stderr once bound."""
    listener = await anyio.create_tcp_listener(local_host=HOST, local_port=port)
    bound_port = listener.extra(SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        endpoint = Endpoint(app, tg, oauth, f"http://{HOST}:{bound_port}")
        if exit_with_stdin:
            tg.start_soon(_exit_at_stdin_eof, tg.cancel_scope)
        log(f"serving MCP over Streamable HTTP, era {app.era}{', OAuth-protected' if oauth else ''}")
        print(f"listening on http://{HOST}:{bound_port}{PATH}", file=sys.stderr, flush=True)
        await listener.serve(partial(serve_connection, endpoint=endpoint), task_group=tg)
