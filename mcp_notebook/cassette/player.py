"""Playing a cassette to one live client: each request answered with its recorded reply, and
the recorded server frames sent where they came.

The live client's ids are not the recorded ones: a reply goes out under the id it was asked
with, a recorded progress token becomes the live request's token, and each server request
goes out under a fresh id of ours (from 0), so one recording can play twice. Where the
recorded client answered a server request before the server went on, the player waits for
the live client's answer (up to `ANSWER_WAIT` seconds) before it does.

A ping is answered even when none was recorded (a keepalive pings whenever it likes),
except in a modern cassette, whose era has no ping. A request no recording answers gets a
JSON-RPC error naming the closest recorded one.
"""

from __future__ import annotations

import copy
import itertools
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import anyio

from ..protocol import jsonrpc as rpc
from ..protocol.versions import MODERN_ERA
from .matching import Matcher, Miss
from .tape import ServerFrame, Tape

ANSWER_WAIT = 60.0  # seconds a replay waits for the client's answer to a server request

Push = Callable[[dict[str, Any]], Awaitable[None]]  # a server frame outside any request's stream


class Outbox(Protocol):
    """Where one request's frames go: before its reply, then the reply."""

    async def send(self, message: dict[str, Any]) -> None: ...

    async def finish(self, reply: dict[str, Any]) -> None: ...


def log(text: str) -> None:
    print(f"replay: {text}", file=sys.stderr, flush=True)


class Player:
    def __init__(self, tape: Tape, match: str = "params") -> None:
        self.tape = tape
        self.matcher = Matcher(tape, match)
        self.modern = tape.era == MODERN_ERA
        self._ids = itertools.count()
        self._waiting: dict[str, anyio.Event] = {}

    def reply_to(self, message: dict[str, Any]) -> tuple[dict[str, Any], list[ServerFrame], list[ServerFrame]]:
        """(the reply, the frames before it, the frames after it) for a live request."""
        request_id: rpc.RequestId = message["id"]
        method = str(message.get("method"))
        found = self.matcher.request(method, message.get("params"))
        if isinstance(found, Miss):
            if method == "ping" and not self.modern:
                return rpc.result(request_id, {}), [], []
            log(f"unmatched {method} id={request_id!r}: {found.describe()}")
            return self._miss(request_id, method, found), [], []
        tokens = (found.meta.get("progressToken"), _meta(message).get("progressToken"))
        during, after = [self._mapped(f, tokens) for f in found.during], [self._mapped(f, tokens) for f in found.after]
        if found.reply is None:
            text = f"the recorded {method} got no reply before the recording ended"
            return rpc.error(request_id, rpc.INTERNAL_ERROR, text), during, []
        return {**copy.deepcopy(found.reply), "id": request_id}, during, after

    @staticmethod
    def _miss(request_id: Any, method: str, miss: Miss) -> dict[str, Any]:
        code = rpc.INVALID_PARAMS if miss.reason.startswith("no recorded") else rpc.METHOD_NOT_FOUND
        data = None
        if miss.closest is not None:
            data = {"closest": {"method": miss.closest.method, "params": miss.closest.bare_params()}}
        return rpc.error(request_id, code, f"replay: {miss.describe()}", data)

    def _mapped(self, frame: ServerFrame, tokens: tuple[Any, Any]) -> ServerFrame:
        """A copy to send now: our fresh id on a request, the live progress token for the recorded one."""
        message = copy.deepcopy(frame.message)
        params = message.get("params")
        recorded, live = tokens
        if isinstance(params, dict) and recorded is not None and params.get("progressToken") == recorded:
            params["progressToken"] = live
        if frame.is_request:
            message["id"] = next(self._ids)
        return ServerFrame(message, frame.answer)

    async def request(self, message: dict[str, Any], out: Outbox, push: Push) -> None:
        """Answer a live request: the frames during it, its reply, then the frames after it."""
        reply, during, after = self.reply_to(message)
        for frame in during:
            await self._play(frame, out.send)
        await out.finish(reply)
        for frame in after:
            await self._play(frame, push)

    async def notification(self, message: dict[str, Any], push: Push) -> None:
        """A live notification: play what followed its recorded twin (e.g. after notifications/initialized)."""
        found = self.matcher.notification(str(message.get("method")))
        for frame in found.after if found is not None else ():
            await self._play(self._mapped(frame, (None, None)), push)

    def answer(self, message: dict[str, Any]) -> None:
        """The live client answered one of our server requests."""
        event = self._waiting.pop(json.dumps(message.get("id")), None)
        if event is not None:
            event.set()

    async def _play(self, frame: ServerFrame, send: Push) -> None:
        if not frame.is_request or frame.answer is None:
            await send(frame.message)
            return
        answered = self._waiting[json.dumps(frame.message["id"])] = anyio.Event()
        await send(frame.message)
        with anyio.move_on_after(ANSWER_WAIT) as waited:
            await answered.wait()
        if waited.cancelled_caught:
            log(f"no answer to {frame.message.get('method')} within {ANSWER_WAIT:g} s: going on")


def _meta(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta if isinstance(meta, dict) else {}
