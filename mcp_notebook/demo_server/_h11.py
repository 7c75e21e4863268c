"""HTTP/1.1 over an anyio socket stream with h11 (sans-IO): requests in, responses out.

`serve_connection()` reads one request at a time (keep-alive included) and hands it
to the endpoint with an `Exchange`, the request's response. While the endpoint
works, the socket is watched: when the client goes away the endpoint is cancelled
(on modern HTTP that is how a request is cancelled).

An `Exchange` decides its body late: a message sent before the response turns it
into an SSE stream (`text/event-stream`), otherwise the response goes out as one
JSON body. So a request is answered with SSE exactly when the server has something
to say before the response. An exchange with a `stored` stream (a legacy session's
POST) numbers its events and keeps them (`_resume`), and may be dropped before its
response: the connection is then left to the client while the request runs on.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import h11
from anyio.abc import ByteStream

from ..protocol import jsonrpc as rpc
from ._app import log
from ._resume import RETRY_MS, StoredStream

MAX_BODY = 4 * 1024 * 1024
# What writing to a connection the client has left raises.
GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError, h11.LocalProtocolError)
SSE_HEADERS = [("content-type", "text/event-stream"), ("cache-control", "no-cache"), ("x-accel-buffering", "no")]


@dataclass
class Request:
    method: str
    path: str
    headers: list[tuple[str, str]]  # names lower-cased, in order, duplicates kept
    body: bytes
    query: str = ""  # the raw query string, without its "?"

    def header(self, name: str) -> str | None:
        for key, value in self.headers:
            if key == name:
                return value
        return None


class Connection:
    def __init__(self, stream: ByteStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.SERVER)
        self.lock = anyio.Lock()

    async def _read(self) -> bytes:
        """The next bytes from the client; b"" once it has closed the connection."""
        try:
            return await self.stream.receive(65536)
        except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            return b""

    async def next_request(self) -> Request | None:
        """The next request, or None when the client has closed the connection."""
        request: h11.Request | None = None
        body = bytearray()
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                self.h11.receive_data(await self._read())
            elif isinstance(event, h11.Request):
                request = event
            elif isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:
                    raise h11.RemoteProtocolError("request body too large", error_status_hint=413)
            elif isinstance(event, h11.EndOfMessage):
                assert request is not None
                headers = [(name.decode("latin-1").lower(), value.decode("latin-1")) for name, value in request.headers]
                target = request.target.decode("latin-1")
                path, _, query = target.partition("?")
                return Request(request.method.decode("ascii"), path, headers, bytes(body), query)
            else:  # ConnectionClosed, or PAUSED after a response we did not finish
                return None

    async def watch_for_close(self) -> None:
        """Return when the client closes the connection (bytes it sends meanwhile are kept)."""
        while data := await self._read():
            self.h11.receive_data(data)

    async def send(self, *events: Any) -> None:
        async with self.lock:
            data = b"".join(self.h11.send(event) or b"" for event in events)
            await self.stream.send(data)


class Exchange:
    """One request's response: a plain status, a JSON body, or an SSE stream."""

    def __init__(self, conn: Connection, status_of: Callable[[dict[str, Any]], int] = lambda reply: 200) -> None:
        self.conn = conn
        self.status_of = status_of  # HTTP status of a JSON reply
        self.headers: list[tuple[str, str]] = []  # extra headers for whichever response goes out
        self.state = "new"  # -> "sse" -> "done", or "new" -> "done"
        self.stored: StoredStream | None = None  # legacy session POSTs: events numbered and kept
        self.dropped = False  # the stream ended before the response; the rest goes to `stored` only
        self._lock = anyio.Lock()

    async def reply(self, status: int, body: dict[str, Any] | None = None, headers: Sequence[tuple[str, str]] = ()) -> None:
        """A whole response: JSON if `body` is given, else empty."""
        data = rpc.encode(body).encode("utf-8") if body is not None else b""
        fields = [*self.headers, *headers, ("content-length", str(len(data)))]
        if body is not None:
            fields.append(("content-type", "application/json"))
        self.state = "done"
        await self.conn.send(h11.Response(status_code=status, headers=fields), h11.Data(data=data), h11.EndOfMessage())

    async def open_stream(self) -> None:
        """Start the SSE response now (if it has not started)."""
        async with self._lock:
            await self._open()

    async def _open(self) -> None:
        if self.state == "new":
            self.state = "sse"
            await self.conn.send(h11.Response(status_code=200, headers=[*self.headers, *SSE_HEADERS]))

    def _event(self, text: str, last: bool = False) -> bytes:
        event_id = f"id: {self.stored.add(text, last)}\n" if self.stored is not None else ""
        return f"{event_id}event: message\ndata: {text}\n\n".encode("utf-8")

    async def send_text(self, text: str) -> None:
        """One SSE event with `text` as its data (one line: messages are encoded without newlines)."""
        async with self._lock:
            if self.dropped and self.stored is not None:
                self.stored.add(text)
                return
            if self.state == "done":
                return
            await self._open()
            await self.conn.send(h11.Data(data=self._event(text)))

    async def send_event(self, event_id: str, text: str) -> None:
        """A replayed event: `text` under the id it was first given."""
        async with self._lock:
            await self._open()
            await self.conn.send(h11.Data(data=f"id: {event_id}\nevent: message\ndata: {text}\n\n".encode("utf-8")))

    async def drop(self) -> None:
        """End the SSE stream now, before the response: a priming event (last id, retry hint), then the end."""
        async with self._lock:
            if self.stored is None or self.state == "done":
                return
            await self._open()
            priming = f"id: {self.stored.event_id(len(self.stored.events))}\nretry: {RETRY_MS}\ndata: \n\n"
            self.state, self.dropped = "done", True
            await self.conn.send(h11.Data(data=priming.encode("utf-8")), h11.EndOfMessage())

    async def send(self, message: dict[str, Any]) -> None:
        await self.send_text(rpc.encode(message))

    async def finish(self, reply: dict[str, Any]) -> None:
        async with self._lock:
            if self.dropped and self.stored is not None:
                self.stored.add(rpc.encode(reply), last=True)
            elif self.state == "new":
                await self.reply(self.status_of(reply), reply)
            elif self.state == "sse":
                data = self._event(rpc.encode(reply), last=True)
                self.state = "done"
                await self.conn.send(h11.Data(data=data), h11.EndOfMessage())

    async def end_stream(self) -> None:
        async with self._lock:
            if self.state == "sse":
                self.state = "done"
                await self.conn.send(h11.EndOfMessage())

    async def abandon(self) -> None:
        """A cancelled request: close its stream without a response."""
        if self.stored is not None:
            self.stored.add(None, last=True)  # a resumed stream ends too
        if self.dropped:
            return
        async with self._lock:
            await self._open()
        await self.end_stream()

    async def hold(self) -> None:
        """A withheld response: keep the request open until the client gives up."""
        await anyio.sleep_forever()


Endpoint = Callable[[Request, Exchange], Awaitable[None]]


async def serve_connection(stream: ByteStream, endpoint: Endpoint) -> None:
    conn = Connection(stream)
    async with stream:
        while True:
            try:
                request = await conn.next_request()
            except h11.RemoteProtocolError as exc:
                await _bad_request(conn, exc)
                return
            if request is None:
                return
            exchange = Exchange(conn)
            async with anyio.create_task_group() as tg:

                async def watch(exchange: Exchange = exchange) -> None:
                    await conn.watch_for_close()
                    if not exchange.dropped:  # a dropped stream's request runs on for a resumed one
                        tg.cancel_scope.cancel()  # the client left: stop serving its request

                tg.start_soon(watch)
                await _run(endpoint, request, exchange)
                tg.cancel_scope.cancel()
            if conn.h11.our_state is not h11.DONE or conn.h11.their_state is not h11.DONE:
                return
            conn.h11.start_next_cycle()


async def _run(endpoint: Endpoint, request: Request, exchange: Exchange) -> None:
    """Serve one request; no error of one connection reaches the listener (and stops the server)."""
    try:
        await endpoint(request, exchange)
    except GONE:
        pass  # the client went away mid-response
    except Exception:  # noqa: BLE001 - a bug in one request never takes the server down
        log(f"error serving {request.method} {request.path}:\n{traceback.format_exc()}")
        if exchange.state == "new":
            with contextlib.suppress(*GONE):
                await exchange.reply(500)


async def _bad_request(conn: Connection, exc: h11.RemoteProtocolError) -> None:
    if conn.h11.our_state in (h11.IDLE, h11.SEND_RESPONSE):
        body = str(exc).encode("utf-8")
        headers = [("content-type", "text/plain"), ("content-length", str(len(body))), ("connection", "close")]
        with contextlib.suppress(*GONE):
            response = h11.Response(status_code=exc.error_status_hint, headers=headers)
            await conn.send(response, h11.Data(data=body), h11.EndOfMessage())
