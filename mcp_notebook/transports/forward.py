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
"""

from __future__ import annotations

import math
from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass

import anyio
import httpx2

from ..base.errors import TransportError
from .http_client import AsyncRoutes, HttpSettings
from .http_errors import describe_failure, redact_url

STREAM_IDLE = 600.0  # an event stream, or a request's answer, may be quiet this long (the SDK client's own is 300 s)
WRITE_TIMEOUT = 30.0
# RFC 9110 section 7.6.1: meant for one connection, never forwarded (plus the names `Connection` lists).
HOP_BY_HOP = frozenset({b"connection", b"proxy-connection", b"keep-alive", b"te", b"transfer-encoding", b"upgrade", b"trailer"})

Header = tuple[bytes, bytes]


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
        self._routes = AsyncRoutes(self.http)

    async def send(
        self, method: str, target: str, headers: Iterable[Header], body: AsyncIterable[bytes] | None, *, may_wait: bool = False
    ) -> Answer:
        """Forward one request; its answer (read the body with `Answer.chunks()`, then `aclose()` it).
        `target` is the path and query the client asked for; `may_wait`: the status line may take
        as long as a request's work (a POST), not just the read timeout."""
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
        try:
            with anyio.fail_after(math.inf if head_wait is None else head_wait):
                response = await self._routes.handle_async_request(request)
        except TimeoutError:
            raise UpstreamFailed(f"{where} did not answer within {head_wait:g} s", True) from None
        except httpx2.HTTPError as exc:
            raise UpstreamFailed(describe_failure(exc, where), isinstance(exc, httpx2.TimeoutException)) from None
        reason = response.extensions.get("reason_phrase", b"")
        return Answer(response.status_code, reason, end_to_end(response.headers.raw), response, self.http.read_timeout, where)

    async def aclose(self) -> None:
        await self._routes.aclose()
