"""Requests forwarded to one upstream origin as they came: the HTTP side of the tap's reverse proxy.

`Upstream(url)` sends a request (method, target, the client's own headers, its body as it
streams in) to `url`'s origin and hands back the answer's status, headers and raw body bytes,
so what the client gets is byte for byte what the server sent (no decoding, no re-chunking
of the content). It goes through the package's one HTTP configuration (`http_client.AsyncRoutes`:
the proxy settings, the trust store, TCP_NODELAY), but not through an httpx2 client: a client
would add its own headers, keep cookies across clients, and follow redirects; here nothing is
added but `Host`, the hop-by-hop headers of RFC 9110 section 7.6.1 are dropped both ways, and a
redirect is an answer like any other, passed back. No request leaves the origin: a target is a
path, never a URL.

Every wait has a bound. Connecting: the connect timeout. The status line: the read timeout
(`HttpSettings.read_timeout`), except for a POST that may carry a request, whose answer comes
when the work is done: `stream_idle`. Between two reads of a body: the read timeout, except for
an event stream, which may be quiet for as long as nothing happens: `stream_idle` (a stream
quiet longer ends as a dropped one does; the client resumes or reopens it as after any drop).
An exchange the client leaves is cancelled by the caller; nothing here outlives it.

A request whose body is whole when it is sent (`bytes`) leaves in one write, its head and body
together (`_Coalescing`): two writes are two segments on loopback with TCP_NODELAY, and the
server wakes for the head only to wait for the body. A streamed body is written as it comes.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import anyio
import httpcore2
import httpx2

from ..base.errors import TransportError
from .http_client import AsyncRoutes, HttpSettings
from .http_errors import describe_failure, redact_url

STREAM_IDLE = 600.0  # an event stream, or a request's answer, may be quiet this long (the SDK client's own is 300 s)
WRITE_TIMEOUT = 30.0
# RFC 9110 section 7.6.1: meant for one connection, never forwarded (plus the names `Connection` lists).
HOP_BY_HOP = frozenset({b"connection", b"proxy-connection", b"keep-alive", b"te", b"transfer-encoding", b"upgrade", b"trailer"})

Header = tuple[bytes, bytes]
_WHOLE = ContextVar("_WHOLE", default=False)  # this task sends a request whose body is whole: hold its writes


class UpstreamFailed(TransportError):
    """The upstream gave no answer, or broke off in the middle of one: `str()` says why in one
    line (the URL redacted); `timed_out` tells a silent server from one that is not there."""

    def __init__(self, message: str, timed_out: bool) -> None:
        super().__init__(message)
        self.timed_out = timed_out


def end_to_end(headers: Iterable[Header]) -> list[Header]:
    """`headers` without the hop-by-hop ones (names lower-cased, order and repeats kept)."""
    pairs = [(name.lower(), value) for name, value in headers]
    listed = {token.strip().lower() for name, value in pairs if name == b"connection" for token in value.split(b",")}
    return [(name, value) for name, value in pairs if name not in HOP_BY_HOP and name not in listed]


@dataclass
class Answer:
    """What the upstream answered: status, reason, end-to-end headers; `chunks()` the raw body."""

    status: int
    reason: bytes
    headers: list[Header]
    _response: httpx2.Response
    _idle: float
    _where: str

    def header(self, name: bytes) -> bytes | None:
        return next((value for key, value in self.headers if key == name), None)

    @property
    def is_event_stream(self) -> bool:
        content_type = (self.header(b"content-type") or b"").partition(b";")[0].strip().lower()
        return content_type == b"text/event-stream"

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they come, each wait bounded; UpstreamFailed if it breaks off."""
        idle = STREAM_IDLE if self.is_event_stream else self._idle
        raw = aiter(self._response.aiter_raw())
        while True:
            try:
                with anyio.fail_after(idle):
                    chunk = await anext(raw, None)
            except TimeoutError:
                raise UpstreamFailed(f"{self._where} sent nothing for {idle:g} s in the middle of its answer", True) from None
            except httpx2.HTTPError as exc:
                raise UpstreamFailed(describe_failure(exc, self._where), isinstance(exc, httpx2.TimeoutException)) from None
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        with anyio.CancelScope(shield=True), anyio.move_on_after(WRITE_TIMEOUT):
            await self._response.aclose()


class Upstream:
    """The origin of `url`, reached as the package reaches any server; `aclose()` ends its connections."""

    def __init__(self, url: str, http: HttpSettings | None = None, stream_idle: float = STREAM_IDLE) -> None:
        parsed = httpx2.URL(url)
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise ValueError(f"{redact_url(url)} is not an http(s) URL")
        self.url = url
        self.http = http or HttpSettings()
        self.stream_idle = stream_idle
        default = {"http": 80, "https": 443}[parsed.scheme]
        host = f"[{parsed.host}]" if ":" in parsed.host else parsed.host
        self.host = host if parsed.port in (None, default) else f"{host}:{parsed.port}"
        self.origin = f"{parsed.scheme}://{self.host}"
        self.target = parsed.raw_path.decode("ascii")  # the path and query a client asks for
        self._routes = _CoalescingRoutes(self.http)

    async def send(
        self,
        method: str,
        target: str,
        headers: Iterable[Header],
        body: AsyncIterable[bytes] | bytes | None,
        *,
        may_wait: bool = False,
    ) -> Answer:
        """Forward one request; its answer (read the body with `Answer.chunks()`, then `aclose()` it).
        `target` is the path and query the client asked for; `body` the bytes of a whole body, or
        its pieces as they come; `may_wait`: the status line may take as long as a request's work
        (a POST), not just the read timeout."""
        if not target.startswith("/"):
            raise ValueError("a forwarded request's target is a path on the upstream origin")
        where = redact_url(self.origin + target)
        forwarded = [(b"host", self.host.encode("ascii")), *((k, v) for k, v in end_to_end(headers) if k != b"host")]
        timeouts = {"connect": self.http.connect_timeout, "read": None, "write": WRITE_TIMEOUT, "pool": self.http.connect_timeout}
        request = httpx2.Request(method, self.origin + target, headers=forwarded, content=body, extensions={"timeout": timeouts})
        if body is None:  # httpx2 would add `Content-Length: 0` to a POST the client sent without a body
            for name in ("content-length", "transfer-encoding"):
                if name not in {k.decode("latin-1") for k, _ in forwarded}:
                    request.headers.pop(name, None)
        head_wait = self.stream_idle if may_wait else self.http.read_timeout
        whole = _WHOLE.set(isinstance(body, bytes))
        try:
            with anyio.fail_after(math.inf if head_wait is None else head_wait):
                response = await self._routes.handle_async_request(request)
        except TimeoutError:
            raise UpstreamFailed(f"{where} did not answer within {head_wait:g} s", True) from None
        except httpx2.HTTPError as exc:
            raise UpstreamFailed(describe_failure(exc, where), isinstance(exc, httpx2.TimeoutException)) from None
        finally:
            _WHOLE.reset(whole)
        reason = response.extensions.get("reason_phrase", b"")
        return Answer(response.status_code, reason, end_to_end(response.headers.raw), response, self.http.read_timeout, where)

    async def aclose(self) -> None:
        await self._routes.aclose()


class _CoalescingRoutes(AsyncRoutes):
    """The package's routes, each transport's connections made by `_Coalescing`."""

    def __init__(self, settings: HttpSettings) -> None:
        super().__init__(settings)
        make = self.table._make

        def coalescing(proxy: str | None) -> httpx2.AsyncHTTPTransport:
            transport = make(proxy)
            # httpx2 takes no network backend of its own; its pool does. Should a release rename
            # these, requests go upstream as before, in two writes instead of one.
            pool = getattr(transport, "_pool", None)
            backend = getattr(pool, "_network_backend", None)
            if isinstance(backend, httpcore2.AsyncNetworkBackend):
                pool._network_backend = _Coalescing(backend)  # type: ignore[union-attr]
            return transport

        self.table._make = coalescing


class _Coalescing(httpcore2.AsyncNetworkBackend):
    """The pool's own backend, its streams holding a whole request's writes until it reads."""

    def __init__(self, backend: httpcore2.AsyncNetworkBackend) -> None:
        self._backend = backend

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> httpcore2.AsyncNetworkStream:
        return _HeldWrites(await self._backend.connect_tcp(*args, **kwargs))

    async def connect_unix_socket(self, *args: Any, **kwargs: Any) -> httpcore2.AsyncNetworkStream:
        return _HeldWrites(await self._backend.connect_unix_socket(*args, **kwargs))

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


class _HeldWrites(httpcore2.AsyncNetworkStream):
    """While its task sends a whole request (`_WHOLE`), writes wait and go as one before the
    first read (the answer's head); any other write goes at once."""

    def __init__(self, stream: httpcore2.AsyncNetworkStream) -> None:
        self._stream = stream
        self._held: list[bytes] = []

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            await self._flush(timeout)
        return await self._stream.read(max_bytes, timeout)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if _WHOLE.get():
            self._held.append(buffer)
            return
        if self._held:
            await self._flush(timeout)
        await self._stream.write(buffer, timeout)

    async def _flush(self, timeout: float | None) -> None:
        data = b"".join(self._held)
        self._held.clear()
        await self._stream.write(data, timeout)

    async def aclose(self) -> None:
        self._held.clear()
        await self._stream.aclose()

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.AsyncNetworkStream:
        return _HeldWrites(await self._stream.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)
