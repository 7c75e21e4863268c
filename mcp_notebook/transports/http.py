"""The HTTP transports: Streamable HTTP, with the HTTP+SSE transport of 2024-11-05 as fallback.

Each frame we send is its own POST, started at once in its own task, so a pong goes out while a long call
is still streaming. Replies come as a JSON body, as SSE events on the POST, on the GET listening stream, or
(HTTP+SSE) on the one GET stream, each pushed into the session. It keeps `Mcp-Session-Id` and the version
header, resumes dropped streams with `Last-Event-ID`, and says when the server forgot the session.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

import anyio
import anyio.abc
import httpx

from ..base.errors import StreamBroken, TransportError
from ..protocol.jsonrpc import RequestId
from .base import Sink
from .http_errors import describe_failure, describe_status, redact_url
from .sse import is_event_stream, iter_events

ACCEPT_BOTH = "application/json, text/event-stream"
FALLBACK_STATUSES = (400, 404, 405)
MAX_ERROR_BODY = 64 * 1024
RESUME_ATTEMPTS = 5
MAX_BACKOFF = 30.0
VERSIONS_WITH_HEADER = ("2025-06-18", "2025-11-25", "2026-07-28")  # MCP-Protocol-Version came in 2025-06-18


class HttpTransport:
    """Frames over HTTP to one MCP endpoint: `mode` is "auto", "http" (no fallback) or "sse"."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        mode: str = "auto",
        events: Any = None,
        connect_timeout: float = 10.0,
    ) -> None:
        if mode not in ("auto", "http", "sse"):
            raise ValueError(f"unknown HTTP transport {mode!r}; use auto, http or sse")
        self.url = url
        self.kind = "sse" if mode == "sse" else "http"
        self._mode = mode
        self._headers = dict(headers or {})
        self._events = events or (lambda *a, **k: None)
        self._connect_timeout = connect_timeout
        self._client: httpx.AsyncClient | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._sink: Sink | None = None
        self._post_url = url
        self._legacy_ready: anyio.Event | None = None
        self._order: anyio.Event | None = None  # the last notification/response POST still in flight
        self._posts: dict[RequestId, anyio.CancelScope] = {}
        self.modern = False
        self.session_id: str | None = None
        self.protocol_version: str | None = None
        self.exit_code: int | None = None
        self.stderr_tail: deque[str] = deque()
        self.keepalive_ticks = 0
        self.stream_resumes = 0
        self.hangup_reason = "the HTTP+SSE event stream ended"
        # Set once the GET listening stream is open or known to be absent (any thread may wait).
        self.listening_settled = threading.Event()

    def describe(self) -> str:
        return redact_url(self.url)

    # ----- lifecycle -----

    async def open(self, task_group: anyio.abc.TaskGroup, sink: Sink) -> None:
        self._task_group, self._sink = task_group, sink
        self._client = httpx.AsyncClient(
            timeout=httpx.Timeout(connect=self._connect_timeout, read=None, write=30.0, pool=None),
            # Without TCP_NODELAY every small POST waits ~40 ms for Nagle and delayed ACK.
            transport=httpx.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]),
            follow_redirects=True,
        )

    def use_modern(self, protocol_version: str) -> None:
        """Stateless from now on: the version header on every POST, no session, no GET stream."""
        self.modern = True
        self.protocol_version = protocol_version

    def initialized(self, protocol_version: str) -> None:
        """Send the version header from now on, and open the GET listening stream."""
        self.protocol_version = protocol_version
        if self.kind == "http":
            assert self._task_group is not None
            self._task_group.start_soon(self._listen)

    def reset_session(self) -> None:
        self._event("session-reset", note="forgetting the expired session")
        self.session_id = None
        self.protocol_version = None

    async def wait_exit(self, timeout: float) -> int | None:
        return None

    async def aclose(self, grace: float | None = None) -> None:
        """DELETE the session (a 405 is fine: the server just keeps it), then close the client."""
        client = self._client
        if client is None:
            return
        with anyio.CancelScope(shield=True):
            if self.session_id is not None and self.kind == "http" and not self.modern:
                with anyio.move_on_after(grace if grace is not None else 2.0):
                    try:
                        response = await client.delete(self.url, headers=self._request_headers())
                        self._event("http", method="DELETE", url=self.describe(), status=response.status_code)
                    except httpx.HTTPError as exc:
                        self._event("http-error", note=describe_failure(exc, self.describe()), method="DELETE")
            await client.aclose()
        self._event("closed")

    # ----- sending -----

    def send(
        self, text: str, request_id: RequestId | None = None, *, headers: dict[str, str] | None = None, opens: bool = False,
    ) -> None:
        """POST one frame in its own task; notifications and responses keep their order."""
        assert self._task_group is not None
        after, done = self._order, None
        if request_id is None:
            done = self._order = anyio.Event()
        scope = anyio.CancelScope()  # made here, so a cancel() that comes before the task starts still counts
        if request_id is not None:
            self._posts[request_id] = scope
        self._task_group.start_soon(self._post, scope, text, request_id, headers, opens, after, done)

    def cancel(self, request_id: RequestId) -> None:
        """Close a request's response stream: in the modern era that is how a request is cancelled;
        in the legacy era it follows notifications/cancelled, to which a server need not answer (the
        TypeScript SDK never does), and frees the stream's connection."""
        scope = self._posts.pop(request_id, None)
        if scope is not None:
            scope.cancel()
            self._event("stream-cancelled", id=request_id)

    async def _post(
        self, scope: anyio.CancelScope, text: str, request_id: RequestId | None, headers: dict[str, str] | None,
        opens: bool, after: anyio.Event | None, done: anyio.Event | None,
    ) -> None:
        with scope:
            try:
                if after is not None:
                    await after.wait()
                if self._legacy_ready is not None:
                    await self._legacy_ready.wait()
                await self._post_now(text, request_id, headers or {}, opens)
            except httpx.HTTPError as exc:
                self._failed(request_id, TransportError(describe_failure(exc, self.describe())))
            except TransportError as exc:
                self._failed(request_id, exc)
            finally:
                if request_id is not None and self._posts.get(request_id) is scope:
                    del self._posts[request_id]
                if done is not None:
                    done.set()

    async def _post_now(self, text: str, request_id: RequestId | None, extra: dict[str, str], opens: bool) -> None:
        assert self._client is not None
        if opens and self._mode == "sse" and self._legacy_ready is None:
            await self._start_legacy()
        sent_session = self.session_id
        headers = {**self._request_headers(content_type="application/json", accept=ACCEPT_BOTH), **extra}
        started = time.perf_counter()
        async with self._client.stream("POST", self._post_url, content=text.encode(), headers=headers) as response:
            self._record(response, started)
            fallback = opens and self._mode == "auto" and self.kind == "http" and sent_session is None
            if fallback and response.status_code in FALLBACK_STATUSES:
                await response.aread()
                self._event("fallback", note=f"POST answered {response.status_code}: trying the HTTP+SSE transport of 2024-11-05")
                await self._start_legacy()
                return await self._post_now(text, request_id, extra, opens)
            if response.status_code == 404 and sent_session is not None:
                assert self._sink is not None
                self._sink.session_expired(request_id, current=sent_session == self.session_id)
                return
            await self._take_reply(response, request_id)

    async def _take_reply(self, response: httpx.Response, request_id: RequestId | None) -> None:
        """Hand what a POST answered to the session, whatever shape it came in."""
        assert self._sink is not None
        status = response.status_code
        if status >= 400:
            body = (await response.aread())[:MAX_ERROR_BODY].decode("utf-8", errors="replace")
            if body.lstrip().startswith("{") and '"id"' in body and request_id is not None:
                self._sink.frame_received(body, via="POST error body")  # a JSON-RPC error for our request
                if not self._sink.awaiting(request_id):
                    return
            raise TransportError(describe_status(response, body, self.describe()), status=status)
        if self.kind == "sse" or status == 202:
            await response.aread()
            if status == 202 and request_id is not None and self.kind == "http":
                raise TransportError(f"{self.describe()} answered a request with 202 and no body")
            return
        if is_event_stream(response):
            last_id, retry = await self._read_stream(response, f"POST stream of request {request_id}")
            if request_id is not None and self._sink.awaiting(request_id):
                if self.modern:  # 2026-07-28 streams do not resume: the session re-issues the request
                    raise StreamBroken(f"the response stream of request {request_id} ended before its response")
                await self._resume(request_id, last_id, retry)
            return
        body_text = (await response.aread()).decode("utf-8", errors="replace")
        content_type = response.headers.get("content-type", "")
        if "json" not in content_type:
            raise TransportError(describe_status(response, body_text, self.describe()), status=status)
        if body_text.strip():
            self._sink.frame_received(body_text, via="POST body")

    def _failed(self, request_id: RequestId | None, error: TransportError) -> None:
        self._event("send-failed", note=str(error), id=request_id)
        assert self._sink is not None
        self._sink.send_failed(request_id, error)

    # ----- streams -----

    async def _read_stream(self, response: httpx.Response, name: str, last_id: str | None = None) -> tuple[str | None, int | None]:
        """Push each event's data to the session; returns the last event id and retry hint."""
        assert self._sink is not None
        retry: int | None = None
        self._event("stream-open", stream=name)
        try:
            async for sse in iter_events(response, self._tick):
                last_id = sse.id or last_id
                retry = sse.retry if sse.retry is not None else retry
                if sse.event == "endpoint" and self.kind == "sse":
                    self._set_legacy_endpoint(sse.data)
                elif sse.event in ("", "message") and sse.data.strip():  # empty data: a priming event
                    self._sink.frame_received(sse.data, via=name)
        except (httpx.TransportError, httpx.StreamError) as exc:
            self._event("stream-dropped", note=describe_failure(exc, self.describe()), stream=name, last_event_id=last_id)
            return last_id, retry
        self._event("stream-closed", stream=name, last_event_id=last_id)
        return last_id, retry

    async def _resume(self, request_id: RequestId, last_id: str | None, retry: int | None) -> None:
        """The POST stream ended before our response: poll it back with GET and Last-Event-ID."""
        assert self._sink is not None
        for attempt in range(RESUME_ATTEMPTS):
            if last_id is None:
                break
            await anyio.sleep(_backoff(retry, attempt))
            if not self._sink.awaiting(request_id):
                return
            self.stream_resumes += 1
            self._event("stream-resume", stream=f"POST stream of request {request_id}", last_event_id=last_id)
            async with self._get_stream(last_id) as response:
                if response is None:
                    break
                last_id, retry = await self._read_stream(response, f"resumed stream of request {request_id}", last_id)
            if not self._sink.awaiting(request_id):
                return
        raise TransportError(f"the response stream of request {request_id} ended and could not be resumed")

    async def _listen(self) -> None:
        """The GET stream: server requests and notifications between our requests, resumed when dropped."""
        last_id: str | None = None
        retry: int | None = None
        failures = 0
        session = self.session_id
        while True:
            async with self._get_stream(last_id) as response:
                self.listening_settled.set()
                if response is None:
                    return
                failures = 0
                last_id, retry = await self._read_stream(response, "GET stream", last_id)
            failures += 1
            if failures > RESUME_ATTEMPTS:
                self._event("stream-given-up", stream="GET stream")
                return
            await anyio.sleep(_backoff(retry, failures - 1))
            if self.session_id != session:
                return
            self.stream_resumes += 1
            self._event("stream-resume", stream="GET stream", last_event_id=last_id)

    def _get_stream(self, last_id: str | None) -> Any:
        return _GetStream(self, last_id)

    # ----- HTTP+SSE (2024-11-05) -----

    async def _start_legacy(self) -> None:
        """Open the one SSE stream of the old transport and wait for its `endpoint` event."""
        assert self._client is not None and self._task_group is not None
        self.kind = "sse"
        self._legacy_ready = ready = anyio.Event()
        failure: list[Exception] = []

        async def run_stream() -> None:
            try:
                async with self._get_stream(None) as response:
                    if response is None:
                        raise TransportError(f"{self.describe()} offers neither Streamable HTTP nor HTTP+SSE")
                    await self._read_stream(response, "SSE stream")
            except (TransportError, httpx.HTTPError) as exc:
                failure.append(exc if isinstance(exc, TransportError) else TransportError(describe_failure(exc, self.describe())))
            finally:
                ready.set()
                if self._sink is not None:
                    self._sink.hung_up()  # the old transport has no way back once its stream ends

        self._task_group.start_soon(run_stream)
        await ready.wait()
        if failure:
            raise failure[0]

    def _set_legacy_endpoint(self, data: str) -> None:
        self._post_url = urljoin(self.url, data.strip())
        self._event("endpoint", url=redact_url(self._post_url))
        assert self._legacy_ready is not None
        self._legacy_ready.set()

    # ----- helpers -----

    def _request_headers(self, *, content_type: str | None = None, accept: str | None = None, last_event_id: str | None = None) -> dict[str, str]:
        headers = dict(self._headers)
        if accept:
            headers["Accept"] = accept
        if content_type:
            headers["Content-Type"] = content_type
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version in VERSIONS_WITH_HEADER:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    def _record(self, response: httpx.Response, started: float) -> None:
        self._event(
            "http",
            method=response.request.method,
            url=redact_url(str(response.request.url)),
            status=response.status_code,
            content_type=response.headers.get("content-type"),
            seconds=round(time.perf_counter() - started, 6),
        )
        session_id = response.headers.get("mcp-session-id")
        if session_id and session_id != self.session_id:
            self.session_id = session_id
            self._event("session-id", note=f"{session_id[:6]}… (the rest is a credential)")

    def _tick(self) -> None:
        self.keepalive_ticks += 1

    def _event(self, name: str, note: str | None = None, **detail: Any) -> None:
        self._events(name, note, **detail)


class _GetStream:
    """`async with`: a GET for an SSE stream, or None when the server offers none (recorded)."""

    def __init__(self, transport: HttpTransport, last_id: str | None) -> None:
        self._transport = transport
        self._last_id = last_id
        self._context: Any = None

    async def __aenter__(self) -> httpx.Response | None:
        t = self._transport
        assert t._client is not None
        headers = t._request_headers(accept="text/event-stream", last_event_id=self._last_id)
        started = time.perf_counter()
        try:
            self._context = t._client.stream("GET", t.url, headers=headers)
            response = await self._context.__aenter__()
        except httpx.HTTPError as exc:
            t._event("stream-failed", note=describe_failure(exc, t.describe()))
            self._context = None
            return None
        t._record(response, started)
        if response.status_code == 404 and t.session_id is not None and t._sink is not None:
            t._sink.session_expired(None)
            return None
        if response.status_code != 200 or not is_event_stream(response):
            why = "the server offers no GET stream (405)" if response.status_code == 405 else f"HTTP {response.status_code}"
            t._event("no-stream", note=why)
            return None
        return response

    async def __aexit__(self, *exc: object) -> None:
        if self._context is not None:
            await self._context.__aexit__(*exc)


def _backoff(retry_ms: int | None, attempt: int) -> float:
    """The server's `retry` hint if it gave one, else 0.5 s doubling; never over 30 s."""
    base = retry_ms / 1000 if retry_ms is not None else 0.5
    return min(base * (2 ** attempt if retry_ms is None else 1), MAX_BACKOFF)
