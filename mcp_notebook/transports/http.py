"""The HTTP transports: Streamable HTTP, with the HTTP+SSE transport of 2024-11-05 as fallback.

Each frame we send is its own POST, started at once on a task of its own (one kept from an
earlier POST, see `workers`), so a pong goes out while a long call is still streaming. Replies
(a JSON body, SSE events on the POST, on the GET listening stream, or on HTTP+SSE's one stream)
are pushed into the session (`http_replies`, `http_streams`). An answer with no deadline of its
own may pause for the read timeout at most, and no request leaves the origin the user named.
The transport keeps the `Mcp-Session-Id` (set by `initialize`'s answer only: `http_session`) and
the `MCP-Protocol-Version` header, and says when the server forgot the session.
"""

from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

import anyio
import anyio.abc
import httpx2

from ..base.errors import TransportError
from ..protocol.frame_rules import EVENT_ID
from ..protocol.jsonrpc import RequestId
from . import http_errors
from .auth_hook import AuthHook
from .base import MAX_FRAME_BYTES, Sink
from .http_bodies import MAX_ERROR_BODY, limit_idle, read_head, stalled
from .http_client import AsyncRoutes, HttpSettings, async_client
from .http_errors import describe_failure, is_json_rpc, redact_url, refuse_cross_origin_redirects
from .http_replies import take_error, take_reply
from .http_requests import PostRequests
from .http_session import session_id_set
from .http_streams import Streams
from .sse import is_event_stream
from .workers import Workers

ACCEPT_BOTH = "application/json, text/event-stream"
FALLBACK_STATUSES = (400, 404, 405)
EVENT_ID_SECTION = "basic/transports#resumability-and-redelivery"
VERSIONS_WITH_HEADER = ("2025-06-18", "2025-11-25", "2026-07-28")  # MCP-Protocol-Version came in 2025-06-18


class HttpTransport:
    """Frames over HTTP to one MCP endpoint: `mode` is "auto", "http" (no fallback) or "sse"."""

    sends_from_any_thread = False  # each POST is a task on the loop

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        mode: str = "auto",
        events: Any = None,
        max_frame_bytes: int = MAX_FRAME_BYTES,
        auth: AuthHook | None = None,
        http: HttpSettings | None = None,
    ) -> None:
        if mode not in ("auto", "http", "sse"):
            raise ValueError(f"unknown HTTP transport {mode!r}; use auto, http or sse")
        self.url = url
        self.kind = "sse" if mode == "sse" else "http"
        self._mode = mode
        self._headers = dict(headers or {})
        self.auth = auth  # authorizes requests (OAuth), if the server asks
        self._events = events or (lambda *a, **k: None)
        self.http = http or HttpSettings()  # proxy, trusted roots, connect timeout: as every client of the package
        self._connect_timeout = self.http.connect_timeout
        self._read_timeout = self.http.read_timeout  # an answer with no deadline of its own may pause this long
        self.max_frame_bytes = max_frame_bytes  # the largest body or SSE event read
        self._client: httpx2.AsyncClient | None = None
        self._requests: PostRequests | None = None
        self._task_group: anyio.abc.TaskGroup | None = None
        self._workers: Workers | None = None  # the tasks that run the POSTs
        self._sink: Sink | None = None
        self._post_url = url
        self._legacy_ready: anyio.Event | None = None
        self._order: anyio.Event | None = None  # the last notification/response POST still in flight
        self._posts: dict[RequestId, anyio.CancelScope] = {}
        self.modern = False
        self.session_id: str | None = None
        self._renewing: anyio.Event | None = None  # set once a forgotten session's successor is opened
        self.protocol_version: str | None = None
        self.exit_code: int | None = None
        self.stderr_tail: deque[str] = deque()
        self.keepalive_ticks = 0
        self.stream_resumes = 0
        self.hangup_reason = "the HTTP+SSE event stream ended"
        # Set once the GET listening stream is open or known to be absent (any thread may wait).
        self.listening_settled = threading.Event()
        self._listening: anyio.Event | None = None  # the same, for the handshake to await on the loop
        self._streams = Streams(self)

    def describe(self) -> str:
        return redact_url(self.url)

    @property
    def sink(self) -> Sink:
        assert self._sink is not None, "the transport is not open"
        return self._sink

    @property
    def client(self) -> httpx2.AsyncClient:
        assert self._client is not None, "the transport is not open"
        return self._client

    # ----- lifecycle -----

    async def open(self, task_group: anyio.abc.TaskGroup, sink: Sink) -> None:
        self._task_group, self._sink = task_group, sink
        self._workers = Workers(task_group)
        if self.auth is not None:
            self.auth.attach(task_group)
        routes = AsyncRoutes(self.http)
        self._client = async_client(
            self.http,
            routes=routes,
            timeout=httpx2.Timeout(connect=self._connect_timeout, read=None, write=30.0, pool=None),
            follow_redirects=True,
            event_hooks={"response": [refuse_cross_origin_redirects]},
        )
        self._requests = PostRequests(self._client, routes)

    def use_modern(self, protocol_version: str) -> None:
        """Stateless from now on: the version header on every POST, no session, no GET stream."""
        self.modern = True
        self.protocol_version = protocol_version

    def initialized(self, protocol_version: str) -> None:
        """Send the version header from now on, and open the GET listening stream."""
        self.protocol_version = protocol_version
        if self.kind == "http":
            assert self._task_group is not None
            self.listening_settled.clear()
            self._listening = anyio.Event()
            self._task_group.start_soon(self._streams.listen)

    async def listening(self) -> None:
        if self._listening is None:
            return  # HTTP+SSE (the one stream is open already) or modern (no listening stream)
        with anyio.move_on_after(self._connect_timeout):
            await self._listening.wait()
            return
        self.event("listening-late", note=f"the GET listening stream did not open within {self._connect_timeout:g} s")

    @property
    def listening_stream(self) -> str | None:
        """How the GET listening stream is doing, in words; None where there is none to speak of."""
        if self.kind != "http" or self.modern or self._listening is None:
            return None
        return self._streams.status.describe()

    def settle_listening(self) -> None:
        """The GET listening stream is open, refused, or gone: nobody needs to wait for it."""
        self.listening_settled.set()
        if self._listening is not None:
            self._listening.set()

    def reset_session(self) -> None:
        """Forget the expired session; frames other than the new `initialize` wait for its successor
        (a frame queued behind the one that met the 404 would otherwise go out with no session)."""
        self.event("session-reset", note="forgetting the expired session")
        self.session_id = None
        self.protocol_version = None
        if self._renewing is None:
            self._renewing = anyio.Event()

    def probe_began(self) -> None:
        """Nothing to do: only the answer to initialize sets a session id (`http_session`)."""

    def probe_refused(self) -> None:
        """The handshake starts on a clean slate: no session id, no cookie from the probe's answer."""
        self.session_id = None
        self.client.cookies.clear()

    def _renewed(self) -> None:
        if self._renewing is not None:
            self._renewing.set()
            self._renewing = None

    async def wait_exit(self, timeout: float) -> int | None:
        return None

    async def aclose(self, grace: float | None = None) -> None:
        """DELETE the session (a 405 is fine: the server just keeps it), then close the client."""
        client = self._client
        if client is None:
            return
        if self.auth is not None:
            self.auth.attach(None)  # the session's task group is gone: the DELETE below starts no flow
        with anyio.CancelScope(shield=True):
            if self.session_id is not None and self.kind == "http" and not self.modern:
                with anyio.move_on_after(grace if grace is not None else 2.0):
                    try:
                        response = await client.delete(self.url, headers=self._request_headers("DELETE"))
                        self.event("http", method="DELETE", url=self.describe(), status=response.status_code)
                    except httpx2.HTTPError as exc:
                        self.event("http-error", note=describe_failure(exc, self.describe()), method="DELETE")
            await client.aclose()
            if self.auth is not None:
                await self.auth.aclose()
        self.event("closed")

    # ----- sending -----

    def send(
        self,
        text: str,
        request_id: RequestId | None = None,
        *,
        headers: dict[str, str] | None = None,
        opens: bool = False,
    ) -> None:
        """POST one frame on a task of its own; notifications and responses keep their order until
        each is answered (its status: a body the server stalls holds up only itself)."""
        assert self._workers is not None
        after, done = self._order, None
        if request_id is None:
            done = self._order = anyio.Event()
        scope = anyio.CancelScope()  # made here, so a cancel() that comes before the task starts still counts
        if request_id is not None:
            self._posts[request_id] = scope
        self._workers.start_soon(self._post, scope, text, request_id, headers, opens, after, done)

    def cancel(self, request_id: RequestId) -> None:
        """Close a request's response stream: in the modern era that is how a request is cancelled;
        in the legacy era it follows notifications/cancelled, to which a server need not answer (the
        TypeScript SDK never does), and frees the stream's connection."""
        scope = self._posts.pop(request_id, None)
        if scope is not None:
            scope.cancel()
            self.event("stream-cancelled", id=request_id)

    async def _post(
        self,
        scope: anyio.CancelScope,
        text: str,
        request_id: RequestId | None,
        headers: dict[str, str] | None,
        opens: bool,
        after: anyio.Event | None,
        done: anyio.Event | None,
    ) -> None:
        with scope:
            try:
                # Waiting on a set anyio Event still yields to the loop: one more loop turn per POST.
                if after is not None and not after.is_set():
                    await after.wait()
                if self._legacy_ready is not None and not self._legacy_ready.is_set():
                    await self._legacy_ready.wait()
                if scope.cancel_called:
                    return  # cancelled before it went out: nothing to send
                await self._post_now(text, request_id, headers or {}, opens, done)
            except httpx2.HTTPError as exc:
                self._failed(request_id, TransportError(describe_failure(exc, self.describe())))
            except TransportError as exc:
                self._failed(request_id, exc)
            finally:
                if request_id is not None and self._posts.get(request_id) is scope:
                    del self._posts[request_id]
                if done is not None:
                    done.set()

    async def _post_now(
        self,
        text: str,
        request_id: RequestId | None,
        extra: dict[str, str],
        opens: bool,
        answered: anyio.Event | None,
        attempt: int = 0,
    ) -> None:
        """POST `text`; `answered` is set once the server has answered it (the frames after it may go)."""
        if opens and self._mode == "sse" and self._legacy_ready is None:
            await self._start_legacy()
        if self._renewing is not None and not opens:
            await self._renewing.wait()
        sent_session = self.session_id
        headers = self._request_headers(content_type="application/json", accept=ACCEPT_BOTH)
        assert self._requests is not None
        request = self._requests.build(self._post_url, {**headers, **extra} if extra else headers, text.encode())
        started = time.perf_counter()
        try:
            with anyio.fail_after(self._read_timeout if request_id is None else math.inf):  # a request has its own
                response = await self._requests.send(request)
        except TimeoutError:
            raise stalled(self.describe(), self._read_timeout, "before answering a notification or response") from None
        if request_id is None or not is_event_stream(response):  # an SSE answer to a request: its timeout bounds it
            limit_idle(response, self._read_timeout, self.describe())
        try:
            self.record(response, started, opens)
            if opens:
                self._renewed()  # with or without a session id, the new session has answered
            if response.status_code in (401, 403) and self.auth is not None and await self.auth.retry(response, attempt):
                await read_head(response, MAX_ERROR_BODY)
                return await self._post_now(text, request_id, extra, opens, answered, attempt + 1)
            fallback = opens and self._mode == "auto" and self.kind == "http" and sent_session is None
            if fallback and response.status_code in FALLBACK_STATUSES:
                body = (await read_head(response, MAX_ERROR_BODY)).decode("utf-8", errors="replace")
                if is_json_rpc(body):  # a Streamable HTTP server refusing the request: no sign of the old transport
                    return take_error(self, response, body, request_id)
                self.event("fallback", note=f"POST answered {response.status_code}: trying the HTTP+SSE transport of 2024-11-05")
                await self._start_legacy(response.status_code)
                return await self._post_now(text, request_id, extra, opens, answered)
            if response.status_code == 404 and sent_session is not None:
                self.sink.session_expired(request_id, current=sent_session == self.session_id)
                return
            if answered is not None:
                answered.set()
            await take_reply(self, self._streams, response, request_id)
        finally:
            await response.aclose()

    def _failed(self, request_id: RequestId | None, error: TransportError) -> None:
        self.event("send-failed", note=str(error), id=request_id)
        self.sink.send_failed(request_id, error)

    # ----- HTTP+SSE (2024-11-05) -----

    async def _start_legacy(self, post_status: int | None = None) -> None:
        """Open the old transport's one SSE stream and wait for its `endpoint` (`post_status`: what a POST met)."""
        assert self._client is not None and self._task_group is not None
        self.kind = "sse"
        self._legacy_ready = ready = anyio.Event()
        failure: list[Exception] = []

        async def run_stream() -> None:
            try:
                async with (stream := self._streams.get(None)) as response:
                    if response is None:
                        raise stream.failure or http_errors.no_mcp_endpoint(self.describe(), post_status, stream.why)
                    await self._streams.read(response, "SSE stream", on_endpoint=self._set_legacy_endpoint)
            except (TransportError, httpx2.HTTPError) as exc:
                failure.append(exc if isinstance(exc, TransportError) else TransportError(describe_failure(exc, self.describe())))
                self.hangup_reason = str(failure[0])
            finally:
                ready.set()
                if self._sink is not None:
                    self._sink.hung_up()  # the old transport has no way back once its stream ends

        self._task_group.start_soon(run_stream)
        await ready.wait()
        if failure:
            raise failure[0]

    def _set_legacy_endpoint(self, data: str) -> None:
        """The POST URL the HTTP+SSE stream names, if on the server's origin (else the stream ends)."""
        self._post_url = http_errors.same_origin_endpoint(self.url, urljoin(self.url, data.strip()))
        self.event("endpoint", url=redact_url(self._post_url))
        assert self._legacy_ready is not None
        self._legacy_ready.set()

    # ----- helpers -----

    def _request_headers(
        self, method: str = "POST", *, content_type: str = "", accept: str = "", last_event_id: str | None = None
    ) -> dict[str, str]:
        headers = dict(self._headers)
        if accept:
            headers["Accept"] = accept
        if content_type:
            headers["Content-Type"] = content_type
        if self.session_id is not None:
            headers["Mcp-Session-Id"] = self.session_id
        if self.protocol_version in VERSIONS_WITH_HEADER:
            headers["MCP-Protocol-Version"] = self.protocol_version
        if self.auth is not None:
            headers |= self.auth.credentials(method, self._post_url if method == "POST" else self.url)
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    def stream_headers(self, last_event_id: str | None) -> dict[str, str]:
        return self._request_headers("GET", accept="text/event-stream", last_event_id=last_event_id)

    def event_id_refused(self, problem: str) -> None:
        """An SSE event id we will not send back: the server broke the transport's rules."""
        self.sink.violated(EVENT_ID, f"{problem}; not sent back (a resume goes from the last id that can be)", EVENT_ID_SECTION)

    def record(self, response: httpx2.Response, started: float, opens: bool = False) -> None:
        """Trace one exchange, and keep the session id it hands out (`opens`: it answers initialize)."""
        self.event(
            "http",
            method=response.request.method,
            url=redact_url(str(response.request.url)),
            status=response.status_code,
            content_type=response.headers.get("content-type"),
            seconds=round(time.perf_counter() - started, 6),
        )
        if (session_id := session_id_set(response, opens, self.describe())) is not None and session_id != self.session_id:
            self.session_id = session_id
            self.event("session-id", note=f"{session_id[:6]}… (the rest is a credential)")

    def event(self, name: str, note: str | None = None, **detail: Any) -> None:
        self._events(name, note, **detail)
