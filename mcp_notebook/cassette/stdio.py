"""Serving a cassette on stdio: one JSON-RPC message per line, logs on stderr only.

The framing is the demo server's (`demo_server._stdio`): stdin read by a daemon thread,
stdout written in order. Each request is answered in its own task, so a recorded server
request waiting for the client's answer holds up nothing else.
"""

from __future__ import annotations

import anyio

from ..demo_server._stdio import StdoutLines, stdin_lines
from ..protocol import jsonrpc as rpc
from .player import Player, log


async def serve_stdio(player: Player) -> None:
    async with anyio.create_task_group() as tg:
        out = StdoutLines(on_closed=tg.cancel_scope.cancel)
        log(f"replaying on stdio, era {player.tape.era or 'unknown'}, match {player.matcher.mode}")
        async for line in stdin_lines():
            text = line.decode("utf-8", "replace").strip()
            if not text:
                continue
            frame = rpc.decode(text)
            if frame.kind == rpc.REQUEST:
                tg.start_soon(player.request, frame.message, out, out.send)
            elif frame.kind == rpc.NOTIFICATION:
                tg.start_soon(player.notification, frame.message, out.send)
            elif frame.kind in (rpc.RESPONSE, rpc.ERROR):
                player.answer(frame.message)
            else:
                problem = frame.problem or "JSON-RPC batches are not supported"
                request_id = frame.id if rpc.is_valid_id(frame.id) else None
                tg.start_soon(out.send, rpc.error(request_id, rpc.INVALID_REQUEST, problem))
        log("stdin closed: exiting")
        tg.cancel_scope.cancel()
