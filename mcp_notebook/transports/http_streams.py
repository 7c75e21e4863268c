"""The SSE streams of the HTTP transports: read into the session, and brought back when dropped.

A stream (a POST's answer, the GET listening stream, or the one HTTP+SSE stream) is read
event by event, each message pushed into the session as it arrives. A POST stream that ends
before our response is polled back with GET and `Last-Event-ID`, and the GET listening
stream is reopened the same way, after the server's `retry` or a doubling backoff. An event
over the message limit ends its stream with a TransportError: a POST stream's request fails
with it, and the GET listening stream is reopened afresh (resuming would replay the event).
A listening stream that cannot be reopened is a transport failure the session hears of.
The streams reach their transport only through `StreamHost`, so this module never imports it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Protocol

import anyio
import httpx2

from ..base.errors import TransportError
from ..protocol.jsonrpc import RequestId
from .base import Sink, size_text
from .http_errors import describe_failure
from .sse import is_event_stream, iter_events

RESUME_ATTEMPTS = 5
MAX_BACKOFF = 30.0


class StreamHost(Protocol):
    """The HTTP transport as its streams see it."""

    url: str
    session_id: str | None
    keepalive_ticks: int
    stream_resumes: int
    max_frame_bytes: int

    @property
    def sink(self) -> Sink: ...

    @property
    def client(self) -> httpx2.AsyncClient: ...

    def describe(self) -> str: ...

    def settle_listening(self) -> None:
        """The GET listening stream is open, refused or gone: nobody needs to wait for it."""
        ...

    def stream_headers(self, last_event_id: str | None) -> dict[str, str]:
        """The headers of a GET for an SSE stream, resuming after `last_event_id` if given."""
        ...

    def record(self, response: httpx2.Response, started: float) -> None:
        """Trace one exchange, and keep the session id it hands out."""
        ...

    def event_id_refused(self, problem: str) -> None:
        """A stream sent an event id that cannot be sent back (`sse.event_id_problem`)."""
        ...

    def event(self, name: str, note: str | None = None, **detail: Any) -> None: ...


class Streams:
    """The SSE streams of one HTTP transport."""

    def __init__(self, host: StreamHost) -> None:
        self._host = host

    def get(self, last_id: str | None) -> GetStream:
        return GetStream(self._host, last_id)

    async def read(
        self,
        response: httpx2.Response,
        name: str,
        last_id: str | None = None,
        on_endpoint: Callable[[str], None] | None = None,
    ) -> tuple[str | None, int | None]:
        """Push each event's data to the session; returns the last event id and retry hint.

        `on_endpoint` takes the data of `endpoint` events (the HTTP+SSE stream's POST URL).
        """
        host = self._host
        retry: int | None = None
        host.event("stream-open", stream=name)
        try:
            async for sse in iter_events(response, self._tick, host.max_frame_bytes, host.event_id_refused):
                last_id = sse.id or last_id
                retry = sse.retry if sse.retry is not None else retry
                if sse.event == "endpoint" and on_endpoint is not None:
                    on_endpoint(sse.data)
                elif sse.event == "message" and sse.data.strip():  # empty data: a priming event
                    host.sink.frame_received(sse.data, via=name)
        except httpx2.SSEError:
            host.event("oversized-event", stream=name, last_event_id=last_id)
            raise TransportError(
                f"{host.describe()} sent an event over {size_text(host.max_frame_bytes)} on its {name}, more than one "
                "message may hold; the stream was closed (raise McpNotebook.max_frame_bytes to accept larger messages)"
            ) from None
        except (httpx2.TransportError, httpx2.StreamError) as exc:
            host.event("stream-dropped", note=describe_failure(exc, host.describe()), stream=name, last_event_id=last_id)
            return last_id, retry
        host.event("stream-closed", stream=name, last_event_id=last_id)
        return last_id, retry

    async def resume(self, request_id: RequestId, last_id: str | None, retry: int | None) -> None:
        """The POST stream ended before our response: poll it back with GET and Last-Event-ID."""
        host = self._host
        for attempt in range(RESUME_ATTEMPTS):
            if last_id is None:
                break
            await anyio.sleep(_backoff(retry, attempt))
            if not host.sink.awaiting(request_id):
                return
            host.stream_resumes += 1
            host.event("stream-resume", stream=f"POST stream of request {request_id}", last_event_id=last_id)
            async with self.get(last_id) as response:
                if response is None:
                    break
                last_id, retry = await self.read(response, f"resumed stream of request {request_id}", last_id)
            if not host.sink.awaiting(request_id):
                return
        raise TransportError(f"the response stream of request {request_id} ended and could not be resumed")

    async def listen(self) -> None:
        """The GET stream: server requests and notifications between our requests, resumed when dropped."""
        host = self._host
        last_id: str | None = None
        retry: int | None = None
        failures = 0
        session = host.session_id
        try:
            while True:
                stream = self.get(last_id)
                async with stream as response:
                    host.settle_listening()
                    if response is None:
                        if stream.failure is not None:
                            host.sink.send_failed(None, stream.failure)  # the server is out of reach
                        return
                    failures = 0
                    try:
                        last_id, retry = await self.read(response, "GET stream", last_id)
                    except TransportError:
                        last_id = None  # reopened afresh: resuming after it would replay the event
                failures += 1
                if failures > RESUME_ATTEMPTS:
                    host.event("stream-given-up", stream="GET stream")
                    return
                await anyio.sleep(_backoff(retry, failures - 1))
                if host.session_id != session:
                    return
                host.stream_resumes += 1
                host.event("stream-resume", stream="GET stream", last_event_id=last_id)
        finally:
            host.settle_listening()  # it failed before it opened: waiting longer would not help

    def _tick(self) -> None:
        self._host.keepalive_ticks += 1


class GetStream:
    """`async with`: a GET for an SSE stream, or None when the server offers none (recorded) or
    could not be reached (then `failure` says why)."""

    def __init__(self, host: StreamHost, last_id: str | None) -> None:
        self._host = host
        self._last_id = last_id
        self._context: AbstractAsyncContextManager[httpx2.Response] | None = None
        self.failure: TransportError | None = None

    async def __aenter__(self) -> httpx2.Response | None:
        host = self._host
        headers = host.stream_headers(self._last_id)
        started = time.perf_counter()
        try:
            self._context = host.client.stream("GET", host.url, headers=headers)
            response = await self._context.__aenter__()
        except httpx2.HTTPError as exc:
            self.failure = TransportError(describe_failure(exc, host.describe()))
            host.event("stream-failed", note=str(self.failure))
            self._context = None
            return None
        host.record(response, started)
        if response.status_code == 404 and host.session_id is not None:
            host.sink.session_expired(None)
            return None
        if response.status_code != 200 or not is_event_stream(response):
            why = "the server offers no GET stream (405)" if response.status_code == 405 else f"HTTP {response.status_code}"
            host.event("no-stream", note=why)
            return None
        return response

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._context is not None:
            await self._context.__aexit__(exc_type, exc, traceback)


def _backoff(retry_ms: int | None, attempt: int) -> float:
    """The server's `retry` hint if it gave one, else 0.5 s doubling; never over 30 s."""
    base = retry_ms / 1000 if retry_ms is not None else 0.5
    return min(base * (2**attempt if retry_ms is None else 1), MAX_BACKOFF)
