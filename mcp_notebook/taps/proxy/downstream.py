"""One client connection of the tap's HTTP proxy: HTTP/1.1 by h11 on an asyncio protocol.

Bytes go to h11 as they arrive, so a client that hangs up is seen at once and ends the exchange
whose request it had sent whole (`exchange_scope`), with no task per exchange watching for it;
reading pauses while more than READ_BOUND bytes wait unread (a client sending ahead). A request
body whose Content-Length is at most WHOLE_BOUND is read whole before it is forwarded (the
server can do nothing with part of it, and it then leaves in one write); any other body is
handed on piece by piece as it arrives. Writes go at once; the handler waits only while the
transport's buffer is over its high-water mark. Every piece of a body is handed to its
`Exchange` (the recording) as it is read.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import h11

from .sessions import Exchange

WHOLE_BOUND = 1024 * 1024  # a request body up to this size is read whole before it is forwarded, in one write
READ_BOUND = 1024 * 1024  # bytes a client may send ahead of what the proxy has read (pipelined requests)
GONE = (anyio.BrokenResourceError, anyio.ClosedResourceError, anyio.EndOfStream, OSError, h11.LocalProtocolError)


class ClientGone(Exception):
    """The client closed its connection before its request was whole."""


class Downstream(asyncio.Protocol):
    """One client connection, HTTP/1.1 by h11. Bytes go to h11 as they arrive (reading pauses
    while more than READ_BOUND of them wait unread), so a hang-up is seen at once: it ends the
    exchange whose request was whole (`exchange_scope`), with no task watching for it."""

    def __init__(self, serve: Callable[[Downstream], Awaitable[None]], tasks: set[asyncio.Task[None]]) -> None:
        self.h11 = h11.Connection(h11.SERVER)
        self.gone = False
        self.request_done = False
        self.exchange_scope: anyio.CancelScope | None = None
        self._serve = serve
        self._tasks = tasks
        self._transport: asyncio.Transport | None = None
        self._arrived: asyncio.Future[None] | None = None  # the handler waits for bytes
        self._drained: asyncio.Future[None] | None = None  # the handler waits for the client to take its writes
        self._unread = 0
        self._ended = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self._transport = transport
        task = asyncio.get_running_loop().create_task(self._run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self) -> None:
        try:
            await self._serve(self)
        except Exception:  # noqa: BLE001 - one connection's failure never stops the proxy
            pass
        finally:
            if self._transport is not None:
                self._transport.close()

    def data_received(self, data: bytes) -> None:
        if self._ended:
            return
        self.h11.receive_data(data)
        self._unread += len(data)
        if self._unread > READ_BOUND and self._transport is not None:
            self._transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        self._hang_up()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self._hang_up()
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)

    def pause_writing(self) -> None:
        self._drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._drained is not None and not self._drained.done():
            self._drained.set_result(None)
        self._drained = None

    def _hang_up(self) -> None:
        if not self._ended:
            self._ended = True
            self.h11.receive_data(b"")  # h11 ends the connection after what it holds
            self._wake()
        if self.request_done and self.exchange_scope is not None:
            self.gone = True
            self.exchange_scope.cancel()  # the client hung up: the exchange ends upstream too

    @property
    def ended(self) -> bool:
        return self._ended

    def _wake(self) -> None:
        if self._arrived is not None and not self._arrived.done():
            self._arrived.set_result(None)

    async def _more(self) -> bool:
        """Wait for more bytes for h11; False once the client has gone."""
        if self._ended or self._transport is None:
            return False
        if self._unread > READ_BOUND:
            self._transport.resume_reading()
        self._unread = 0
        self._arrived = asyncio.get_running_loop().create_future()
        try:
            await self._arrived
        finally:
            self._arrived = None
        return True

    async def next_request(self) -> h11.Request | None:
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as exc:
                await self.reply(exc.error_status_hint, f"tap: a malformed request: {exc}")
                return None
            if event is h11.NEED_DATA:
                await self._more()  # at the end h11 says ConnectionClosed
            elif isinstance(event, h11.Request):
                return event
            else:
                return None  # ConnectionClosed

    async def body_here(self, exchange: Exchange, length: int | None) -> bytes | AsyncIterator[bytes]:
        """The request's body: its bytes once all came, if its Content-Length says it is small
        (a JSON-RPC POST: the server can do nothing with part of it), else its pieces as they
        arrive; each piece handed to `exchange` too."""
        if length is None or length > WHOLE_BOUND:
            return self.body(exchange, [], None)
        pieces: list[bytes] = []
        try:
            while True:
                event = self.h11.next_event()
                if isinstance(event, h11.Data):
                    exchange.client_chunk(event.data)
                    pieces.append(bytes(event.data))
                elif isinstance(event, h11.EndOfMessage):
                    exchange.client_end()
                    self.request_done = True
                    return b"".join(pieces)
                elif event is h11.NEED_DATA and not self.h11.they_are_waiting_for_100_continue:
                    if not await self._more():
                        raise ClientGone
                else:
                    return self.body(exchange, pieces, event)
        except h11.RemoteProtocolError:
            return self.body(exchange, pieces, None)  # raised where it always was: as the body is forwarded

    async def body(self, exchange: Exchange, first: list[bytes], event: object | None) -> AsyncIterator[bytes]:
        """The rest of the body as it arrives, after the `first` pieces, from `event` (None: h11's next) on."""
        for piece in first:
            yield piece
        if event is None:
            event = self.h11.next_event()
        while True:
            if event is h11.NEED_DATA and self.h11.they_are_waiting_for_100_continue:
                await self.send(h11.InformationalResponse(status_code=100, headers=[]))  # `Expect: 100-continue`
            if event is h11.NEED_DATA:
                if not await self._more():
                    raise ClientGone
            elif isinstance(event, h11.Data):
                exchange.client_chunk(event.data)
                yield bytes(event.data)
            elif isinstance(event, h11.EndOfMessage):
                exchange.client_end()
                self.request_done = True
                return
            else:
                raise ClientGone
            event = self.h11.next_event()

    async def send(self, *events: h11.Event) -> None:
        data = b"".join(self.h11.send(event) or b"" for event in events)
        transport = self._transport
        if transport is None or transport.is_closing():
            raise ConnectionResetError("the client closed its connection")
        transport.write(data)
        if self._drained is not None:
            await self._drained

    async def reply(self, status: int, text: str) -> None:
        """A whole plain-text answer of the proxy's own, if no answer has begun."""
        if self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = (text.replace("\n", " ").strip() + "\n").encode("utf-8")
        headers = [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())]
        try:
            await self.send(h11.Response(status_code=status, headers=headers), h11.Data(data=body), h11.EndOfMessage())
        except GONE:
            self.gone = True

    @property
    def reusable(self) -> bool:
        return not self.gone and self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE
