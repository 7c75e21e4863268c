"""What an httpx2 client really sent and received, for comparing a client's view with a tap's.

`Wire` is a transport wrapper for an httpx2.AsyncClient (give it to the official SDK client
through `http_client=` or `httpx_client_factory=`): every non-empty POST body it sends is kept
in `sent`, and of every answer a JSON body (whole) or the data of each SSE event with data
(parsed here, independently of the tap's own parser) in `received`, in the order they arrived.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx2


class Wire(httpx2.AsyncBaseTransport):
    def __init__(self) -> None:
        self.inner = httpx2.AsyncHTTPTransport()
        self.sent: list[bytes] = []
        self.received: list[bytes] = []
        self.requests: list[tuple[str, str, dict[str, str]]] = []  # method, path, headers (lower-cased names)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        body = await request.aread()
        self.requests.append((request.method, request.url.path, {k.lower(): v for k, v in request.headers.items()}))
        if request.method == "POST" and body:
            self.sent.append(body)
        response = await self.inner.handle_async_request(request)
        content_type = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        if content_type in ("application/json", "text/event-stream"):
            response.stream = _Tee(response.stream, content_type == "text/event-stream", self.received)  # type: ignore[arg-type]
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()

    def client(self, **options: Any) -> httpx2.AsyncClient:
        options.setdefault("timeout", httpx2.Timeout(30.0, read=300.0))
        return httpx2.AsyncClient(transport=self, **options)


class _Tee(httpx2.AsyncByteStream):
    def __init__(self, stream: httpx2.AsyncByteStream, events: bool, into: list[bytes]) -> None:
        self._stream = stream
        self._events = events
        self._into = into
        self._buffer = b""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self._buffer += chunk
            if self._events:
                self._take_events()
            yield chunk
        if not self._events and self._buffer:
            self._into.append(self._buffer)

    def _take_events(self) -> None:
        text = self._buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        *done, rest = text.split(b"\n\n")
        self._buffer = rest
        for block in done:
            lines = block.split(b"\n")
            name = b"".join(line[6:].strip() for line in lines if line.startswith(b"event:"))
            data = [line[5:].removeprefix(b" ") for line in lines if line.startswith(b"data:")]
            if data and any(data) and name in (b"", b"message"):
                self._into.append(b"\n".join(data))

    async def aclose(self) -> None:
        await self._stream.aclose()
