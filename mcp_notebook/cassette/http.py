"""Serving a cassette over Streamable HTTP at `/mcp`, on 127.0.0.1 only.

The HTTP/1.1 framing is the demo server's (`demo_server._h11`): a request's reply goes out
as JSON, or as an SSE stream when recorded frames come before it. A legacy `initialize`
mints an `Mcp-Session-Id`; the session's GET stream carries the frames recorded after a
reply (queued until the client opens it), DELETE ends it. A modern cassette is stateless:
GET and DELETE get 405, and its JSON errors the status its era gives them. Requests whose
`Origin` or `Host` is not loopback get 403.
"""

from __future__ import annotations

import secrets
import sys
from functools import partial
from typing import Any

import anyio
from anyio.abc import SocketAttribute, TaskGroup

from ..demo_server import _modern
from ..demo_server._h11 import GONE, Exchange, Request, serve_connection
from ..demo_server._http import HOST, PATH, loopback_request
from ..demo_server._stdio import stdin_lines
from ..protocol import jsonrpc as rpc
from .player import Player, log


class Endpoint:
    def __init__(self, player: Player, task_group: TaskGroup) -> None:
        self.player = player
        self.task_group = task_group
        self.listener: Exchange | None = None
        self.queued: list[dict[str, Any]] = []

    async def __call__(self, request: Request, exchange: Exchange) -> None:
        modern = self.player.modern
        if not loopback_request(request):
            await exchange.reply(403, rpc.error(None, rpc.INVALID_REQUEST, "Forbidden: Origin or Host is not loopback"))
        elif request.path != PATH:
            await exchange.reply(404)
        elif request.method == "POST":
            await self.post(request, exchange)
        elif request.method == "GET" and not modern:
            await self.get(exchange)
        elif request.method == "DELETE" and not modern:
            await exchange.reply(200)
        else:
            await exchange.reply(405, headers=[("allow", "POST" if modern else "GET, POST, DELETE")])

    async def post(self, request: Request, exchange: Exchange) -> None:
        frame = rpc.decode(request.body.decode("utf-8", "replace"))
        if frame.kind == rpc.REQUEST:
            if self.player.modern:
                exchange.status_of = _modern.http_status
            elif frame.method == "initialize":
                exchange.headers.append(("mcp-session-id", secrets.token_hex(16)))
            await self.player.request(frame.message, exchange, self.push)
        elif frame.kind == rpc.NOTIFICATION:
            await exchange.reply(202)
            self.task_group.start_soon(self.player.notification, frame.message, self.push)
        elif frame.kind in (rpc.RESPONSE, rpc.ERROR):
            self.player.answer(frame.message)
            await exchange.reply(202)
        else:
            await exchange.reply(400, rpc.error(None, rpc.INVALID_REQUEST, frame.problem or "JSON-RPC batches are not supported"))

    async def push(self, message: dict[str, Any]) -> None:
        """A frame outside any request: on the GET stream, or kept until one opens."""
        if self.listener is not None:
            try:
                await self.listener.send(message)
                return
            except GONE:
                self.listener = None
        self.queued.append(message)

    async def get(self, exchange: Exchange) -> None:
        if self.listener is not None:
            await exchange.reply(409, rpc.error(None, rpc.INVALID_REQUEST, "Conflict: the GET stream is already open"))
            return
        self.listener = exchange
        try:
            await exchange.open_stream()
            queued, self.queued = self.queued, []
            for message in queued:
                await exchange.send(message)
            await anyio.sleep_forever()  # until the client leaves (the connection's watch cancels us)
        finally:
            if self.listener is exchange:
                self.listener = None


async def _exit_at_stdin_eof(scope: anyio.CancelScope) -> None:
    async for _ in stdin_lines():
        pass
    log("stdin closed: exiting")
    scope.cancel()


async def serve_http(player: Player, port: int = 0, exit_with_stdin: bool = False) -> None:
    """Serve until cancelled; prints `listening on http://127.0.0.1:PORT/mcp` to stderr once bound."""
    listener = await anyio.create_tcp_listener(local_host=HOST, local_port=port)
    bound_port = listener.extra(SocketAttribute.local_port)
    async with anyio.create_task_group() as tg:
        if exit_with_stdin:
            tg.start_soon(_exit_at_stdin_eof, tg.cancel_scope)
        log(f"replaying over Streamable HTTP, era {player.tape.era or 'unknown'}, match {player.matcher.mode}")
        print(f"listening on http://{HOST}:{bound_port}{PATH}", file=sys.stderr, flush=True)
        await listener.serve(partial(serve_connection, endpoint=Endpoint(player, tg)), task_group=tg)
