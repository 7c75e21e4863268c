"""The SSE streams of the HTTP transports: read into the session, and brought back when dropped.

A stream (a POST's answer, the GET listening stream, or the one HTTP+SSE stream) is read
event by event, each message pushed into the session as it arrives. A POST stream that ends
before our response is polled back with GET and `Last-Event-ID`, and the GET listening
stream is reopened the same way, for the connection's life. The rule every reopen keeps
(`backoff.backoff`): wait the server's `retry`, never less than FLOOR (a `retry: 0` would reopen
a thousand times a second), doubled for each attempt in a row that brought nothing, never more
than CAP. An event over the message limit ends its stream with a TransportError: a POST
stream's request fails with it, and the GET listening stream is reopened afresh (resuming
would replay the event). While the listening stream cannot be reopened, or keeps closing as
soon as it opens, it is down (`ListeningStatus`): the session hears it went down and when it
is back, and the health says since when. Between events the reader waits while the session
is behind with what came in (`Sink.caught_up`): a flood slows the server, not the memory.
A GET whose status line does not come within the read timeout (McpNotebook.http_read_timeout)
is given up as a failed (re)open, as one that could not connect is: a server that takes the
listening stream's request and never answers it leaves the stream down, not "ready".
The streams reach their transport only through `StreamHost`, so this module never imports it.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Any, Protocol

import anyio
import httpx2

from ..base.errors import TransportError
from ..base.plural import counted
from ..protocol.jsonrpc import RequestId
from .backoff import backoff
from .base import Sink, size_text
from .http_bodies import stalled
from .http_client import HttpSettings
from .http_errors import describe_failure
from .sse import is_event_stream, iter_events

RESUME_ATTEMPTS = 5  # resumes of a POST stream in a row that bring nothing, before its request fails
FLAPS_TO_DOWN = 3  # listening streams in a row that close with nothing sent: it is down


class StreamHost(Protocol):
    """The HTTP transport as its streams see it."""

    url: str
    session_id: str | None
    keepalive_ticks: int
    stream_resumes: int
    max_frame_bytes: int
    http: HttpSettings  # its read timeout bounds the wait for a GET's status

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


class ListeningStatus:
    """How the GET listening stream is doing, for the health: `state` is "opening", "open",
    "down" (since `down_since`, wall time, with `attempts` reopens since) or "none" (the
    server offers no GET stream, or the connection has none)."""

    def __init__(self) -> None:
        self.state = "opening"
        self.down_since: float | None = None
        self.attempts = 0
        self.why = ""

    def describe(self) -> str:
        if self.state == "down" and self.down_since is not None:
            since = time.strftime("%H:%M:%S", time.localtime(self.down_since))
            return f"down since {since} ({counted(self.attempts, 'reopen attempt')}): {self.why}"
        if self.state == "none":
            return f"none: {self.why}"
        return self.state


class Streams:
    """The SSE streams of one HTTP transport."""

    pause: Callable[[float], Awaitable[None]] = staticmethod(anyio.sleep)  # the waits between reopens

    def __init__(self, host: StreamHost) -> None:
        self._host = host
        self.status = ListeningStatus()
        self._listener = 0  # the GET listening stream's generation: a new session's supersedes the old
        self._told_down = False

    def get(self, last_id: str | None) -> GetStream:
        return GetStream(self._host, last_id)

    async def read(
        self,
        response: httpx2.Response,
        name: str,
        last_id: str | None = None,
        on_endpoint: Callable[[str], None] | None = None,
        on_message: Callable[[], None] | None = None,
    ) -> tuple[str | None, int | None]:
        """Push each event's data to the session; returns the last event id and retry hint.

        `on_endpoint` takes the data of `endpoint` events (the HTTP+SSE stream's POST URL);
        `on_message()` runs after each message is pushed.
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
                    if on_message is not None:
                        on_message()
                    await host.sink.caught_up()  # backpressure: no more is read while the session is behind
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
        empty = 0  # resumes in a row that brought no message
        while last_id is not None and empty < RESUME_ATTEMPTS:
            await self.pause(backoff(retry, empty))
            if not host.sink.awaiting(request_id):
                return
            host.stream_resumes += 1
            host.event("stream-resume", stream=f"POST stream of request {request_id}", last_event_id=last_id)
            messages: list[None] = []
            async with self.get(last_id) as response:
                if response is None:
                    break
                name = f"resumed stream of request {request_id}"
                last_id, retry = await self.read(response, name, last_id, on_message=functools.partial(messages.append, None))
            if not host.sink.awaiting(request_id):
                return
            empty = 0 if messages else empty + 1
        raise TransportError(f"the response stream of request {request_id} ended and could not be resumed")

    async def listen(self) -> None:
        """The GET stream: server requests and notifications between our requests, reopened when
        it ends or fails, with `backoff`, for as long as the session lasts; down while it cannot be."""
        host = self._host
        self._listener += 1
        self._told_down = False  # whether this generation's session has heard that the stream is down
        generation, session = self._listener, host.session_id
        last_id: str | None = None
        retry: int | None = None
        empty = 0  # attempts in a row that brought nothing: no stream, or one that closed with nothing sent
        first = True
        try:
            while generation == self._listener:
                stream = self.get(last_id)
                lively: list[None] = []
                async with stream as response:
                    host.settle_listening()
                    if response is None:
                        if stream.expired or (first and stream.refused):
                            self.status.state, self.status.why = "none", stream.why
                            return  # no stream to keep, or a new session will open its own
                        self._down(stream.why, stream.failure)
                    else:
                        if empty < FLAPS_TO_DOWN:
                            self._up()
                        try:
                            last_id, retry = await self.read(
                                response, "GET stream", last_id, on_message=functools.partial(self._lively, lively)
                            )
                        except TransportError:
                            last_id = None  # reopened afresh: resuming after it would replay the event
                first = False
                empty = 0 if lively else empty + 1
                if response is not None and empty >= FLAPS_TO_DOWN:
                    self._down(f"it closed as soon as it opened, {counted(empty, 'time')} in a row", None)
                await self.pause(backoff(retry, max(empty - 1, 0)))
                if host.session_id != session or generation != self._listener:
                    return
                host.stream_resumes += 1
                if self.status.state == "down":
                    self.status.attempts += 1
                host.event("stream-resume", stream="GET stream", last_event_id=last_id)
        finally:
            host.settle_listening()  # it failed before it opened: waiting longer would not help

    def _lively(self, lively: list[None]) -> None:
        """A message came on the listening stream: it is up (a stream that kept closing is back)."""
        if not lively:
            lively.append(None)
            self._up()

    def _up(self) -> None:
        status = self.status
        if status.state == "down" or self._told_down:
            self._told_down = False
            self._host.event(
                "listening-up", note=f"the GET listening stream is open again after {counted(status.attempts, 'reopen attempt')}"
            )
            self._host.sink.listening_changed(None)
        status.state, status.down_since, status.attempts, status.why = "open", None, 0, ""

    def _down(self, why: str, failure: TransportError | None) -> None:
        """The listening stream could not be (re)opened, or keeps closing: the session hears it once."""
        status = self.status
        status.why = why
        if status.state != "down":
            status.state, status.down_since, status.attempts = "down", time.time(), 1  # the attempt that failed
            self._host.event("listening-down", note=f"the GET listening stream is down: {why}")
            if failure is not None:
                self._host.sink.send_failed(None, failure)  # the server is out of reach
        if not self._told_down:
            self._told_down = True
            self._host.sink.listening_changed(status.describe())

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
        self.why = ""  # why there is no stream, in words
        self.refused = False  # the server answered with a 4xx: it offers no GET stream (405, or its own way of saying so)
        self.expired = False  # the server forgot our session (404): the session is renewed

    async def __aenter__(self) -> httpx2.Response | None:
        host = self._host
        headers = host.stream_headers(self._last_id)
        started = time.perf_counter()
        idle = host.http.read_timeout
        try:
            self._context = host.client.stream("GET", host.url, headers=headers)
            with anyio.fail_after(idle):
                response = await self._context.__aenter__()
        except TimeoutError:
            self._failed(stalled(host.describe(), idle, "in answer to a GET for its event stream"))
            return None
        except httpx2.HTTPError as exc:
            self._failed(TransportError(describe_failure(exc, host.describe())))
            return None
        host.record(response, started)
        sent_session = headers.get("Mcp-Session-Id")
        if response.status_code == 404 and sent_session is not None:
            self.expired, self.why = True, "the server forgot the session (404)"
            host.sink.session_expired(None, current=sent_session == host.session_id)
            return None
        if response.status_code != 200 or not is_event_stream(response):
            self.refused = 400 <= response.status_code < 500
            status = f"HTTP {response.status_code}" if response.status_code != 200 else "not an event stream"
            self.why = "the server offers no GET stream (405)" if response.status_code == 405 else status
            host.event("no-stream", note=self.why)
            return None
        return response

    def _failed(self, failure: TransportError) -> None:
        """No answer came: a failed (re)open, `failure` saying why."""
        self.failure, self.why, self._context = failure, str(failure), None
        self._host.event("stream-failed", note=self.why)

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._context is not None:
            await self._context.__aexit__(exc_type, exc, traceback)
