"""The tap's HTTP reverse proxy: a client talks to `tap.url`, the proxy forwards to the upstream MCP
server's origin, and every JSON-RPC message that crosses is recorded (`http_sessions`).

`TapProxy(upstream, sink)` listens on 127.0.0.1 only, on the runtime's event loop (HTTP/1.1 with
h11, one task per connection, keep-alive kept: `downstream.Downstream`). Each request goes to the
same path and query on the upstream origin (`transports.forward`: only `Host` and the hop-by-hop
headers change; the rest, Authorization, cookies, Mcp-Session-Id, MCP-Protocol-Version,
Last-Event-ID included, passes as it came), its body streamed as it arrives (a small one read
whole, then sent with its head in one write); the answer comes back the same way, chunk by chunk
as the server sends it (an SSE stream's pings reach the client at once), byte for byte, except
the `endpoint` event of an HTTP+SSE stream when it names the upstream origin
(`http_sse.EndpointRewriter`). A redirect is passed back, never followed. An upstream that does
not answer gets the client a 502 (504 when it was too slow) with a one-line plain-text body;
one that breaks off mid-answer gets the connection closed, as the server's own failure would.
A client that hangs up cancels its exchange upstream. The sink and `secret` are called on the
event loop and must be quick; a failing one is ignored (the session never notices the tap).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from concurrent.futures import Future
from types import TracebackType

import anyio
import h11

from ...runtime import get_runtime
from ...transports.forward import Answer, Upstream, UpstreamFailed
from ...transports.http_client import HttpSettings
from .downstream import GONE, ClientGone, Downstream
from .sessions import Exchange, Recorder, Secret, Sink
from .sse import EndpointRewriter

HOST = "127.0.0.1"
RECORD_BOUND = 4 * 1024 * 1024  # a frame larger than this is forwarded whole, recorded clipped
START_TIMEOUT = 10.0


def _ignore(value: str) -> None:
    return None


class TapProxy:
    """A reverse proxy of `upstream`'s origin on 127.0.0.1 (`url`), calling `sink` with a record
    of every message that crosses and `secret` with every credential before a record holds it."""

    def __init__(
        self,
        upstream: str,
        sink: Sink,
        *,
        secret: Secret = _ignore,
        port: int = 0,
        http: HttpSettings | None = None,
        max_record_bytes: int = RECORD_BOUND,
    ) -> None:
        self.upstream = upstream
        self._forward = Upstream(upstream, http)
        self._recorder = Recorder(sink, secret, upstream, max_record_bytes)
        self.port = port
        self._lock = threading.Lock()
        self._task: Future[None] | None = None
        self._scope: anyio.CancelScope | None = None
        self._closed = False

    @property
    def url(self) -> str:
        """Where a client should connect: the proxy's origin with the upstream URL's path and query."""
        return f"http://{HOST}:{self.port}{self._forward.target}"

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    def __repr__(self) -> str:
        state = "closed" if self._closed else "listening" if self._task is not None else "not started"
        return f"<TapProxy {self.origin} -> {self._forward.origin} ({state})>"

    # ----- lifecycle

    def start(self) -> TapProxy:
        """Listen (once; a closed proxy does not start again); OSError if the port cannot be had."""
        with self._lock:
            if self._task is not None or self._closed:
                return self
            bound: Future[int] = Future()
            self._task = get_runtime().spawn(self._serve, bound)
            self.port = bound.result(START_TIMEOUT)
        return self

    def close(self) -> None:
        """Stop listening, end every exchange, CLOSED for the sessions still open (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            task = self._task
        if task is None:
            return
        if not task.done():
            get_runtime().call(self._cancel)
        task.result(START_TIMEOUT)

    def __enter__(self) -> TapProxy:
        return self.start()

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    async def _cancel(self) -> None:
        if self._scope is not None:
            self._scope.cancel()

    async def _serve(self, bound: Future[int]) -> None:
        tasks: set[asyncio.Task[None]] = set()
        try:
            loop = asyncio.get_running_loop()
            server = await loop.create_server(lambda: Downstream(self._connection, tasks), HOST, self.port)
        except BaseException as exc:
            bound.set_exception(exc)
            raise
        try:
            with anyio.CancelScope() as self._scope:
                bound.set_result(server.sockets[0].getsockname()[1])
                await anyio.sleep_forever()
        finally:
            with anyio.CancelScope(shield=True):
                server.close()
                for task in tasks:
                    task.cancel()
                if tasks:
                    await asyncio.wait(set(tasks))
                await self._forward.aclose()
            self._recorder.close_all("the tap closed")

    # ----- exchanges

    async def _connection(self, conn: Downstream) -> None:
        while (request := await conn.next_request()) is not None:
            await self._exchange(conn, request)
            if not conn.reusable:
                return
            conn.h11.start_next_cycle()

    async def _exchange(self, conn: Downstream, request: h11.Request) -> None:
        method = request.method.decode("ascii", "replace")
        target = request.target.decode("latin-1")
        if not target.startswith("/"):
            await conn.reply(400, "tap: this is a reverse proxy: ask for a path, not a URL")
            conn.gone = True
            return
        headers = list(request.headers)
        exchange = Exchange(self._recorder, method, target, headers, self.origin)
        conn.request_done = False
        has_body = any(name in (b"content-length", b"transfer-encoding") for name, _ in headers)
        body: bytes | AsyncIterator[bytes] | None = None
        if has_body:
            try:
                body = await conn.body_here(exchange, _content_length(headers))
            except ClientGone:
                conn.gone = True
                return
        else:
            conn.h11.next_event()  # the EndOfMessage of a request without a body
            exchange.client_end()
            conn.request_done = True
        with anyio.CancelScope() as conn.exchange_scope:
            if conn.ended:  # the client hung up already
                conn.gone = True
                return
            try:
                answer = await self._forward.send(method, target, headers, body, may_wait=method == "POST")
            except ClientGone:
                conn.gone = True
            except UpstreamFailed as exc:
                await conn.reply(504 if exc.timed_out else 502, f"tap: {exc}")
            else:
                try:
                    await self._relay(conn, exchange, answer)
                finally:
                    await answer.aclose()
        conn.exchange_scope = None

    async def _relay(self, conn: Downstream, exchange: Exchange, answer: Answer) -> None:
        """The answer to the client as it comes, its messages recorded before they go on."""
        headers = answer.headers
        rewriter = None
        if exchange.recorded and exchange.method == "GET" and answer.is_event_stream and answer.status == 200:
            rewriter = EndpointRewriter(self._forward.origin, self.origin)
            headers = [(name, value) for name, value in headers if name != b"content-length"]  # the rewrite may change it
        exchange.answered(answer.status, headers, answer.is_event_stream)
        head = h11.Response(status_code=answer.status, headers=headers, reason=answer.reason)
        out = _Outbox(conn, exchange, head, _content_length(headers) if rewriter is None else None)
        try:
            if answer.is_event_stream:
                await out.flush()  # the client is waiting for its stream to open
            async for chunk in answer.chunks():
                data = chunk
                if rewriter is not None:
                    data = rewriter.feed(chunk)
                    if rewriter.endpoint is not None:
                        exchange.endpoint(rewriter.endpoint)
                        rewriter = None  # the first event is through: the rest passes as it comes
                exchange.server_chunk(chunk)
                await out.write(data, len(chunk))
            if rewriter is not None:
                out.add(rewriter.flush())
            await out.end()
        except (UpstreamFailed, *GONE):
            conn.gone = True  # the server broke off, or the client left: the answer ends early
        finally:
            if not out.ended:
                exchange.server_end(False)


class _Outbox:
    """An answer's way to the client, in as few writes as it can: the head with the first bytes
    of a body, the end with the last bytes when Content-Length tells which they are (each write
    on loopback with TCP_NODELAY is a segment and a wake-up of the client). The exchange hears
    that the answer is whole before the client gets its end."""

    def __init__(self, conn: Downstream, exchange: Exchange, head: h11.Response, length: int | None) -> None:
        self._conn = conn
        self._exchange = exchange
        self._pending: list[h11.Event] = [head]
        self._left = length
        self.ended = False

    def add(self, data: bytes) -> None:
        if data:
            self._pending.append(h11.Data(data=data))

    async def write(self, data: bytes, read: int) -> None:
        """Pass on `data`, made of `read` bytes of the upstream's body."""
        self.add(data)
        if self._left is not None and not self.ended:
            self._left -= read
            if self._left <= 0:
                self._finish()
        await self.flush()

    async def end(self) -> None:
        if not self.ended:
            self._finish()
        await self.flush()

    async def flush(self) -> None:
        if self._pending:
            events, self._pending = self._pending, []
            await self._conn.send(*events)

    def _finish(self) -> None:
        self.ended = True
        self._exchange.server_end(True)
        self._pending.append(h11.EndOfMessage())


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    value = next((v for k, v in headers if k == b"content-length"), b"")
    return int(value) if value.isdigit() else None
