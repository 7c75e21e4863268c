"""What the tap's HTTP proxy records: each JSON-RPC message it sees, in the local session it belongs to.

A `Recorder` numbers records for one proxy and keeps its local sessions; an `Exchange` is one
request and its answer as the recorder sees them. Recorded are the requests to the MCP endpoint
(the upstream URL's path, or an HTTP+SSE `endpoint` the server named): the client's POST body
(side CLIENT), a JSON answer's body and every event with data on an answering event stream
(side SERVER). Other paths (OAuth discovery, anything else on the origin) are forwarded unrecorded.

Local sessions, numbered 1, 2, ... per proxy, each opened by a HELLO event:
- an `initialize` POST opens one; the `Mcp-Session-Id` its answer carries names it from then on
  (an id the proxy never saw, as when it starts mid-session, opens one too);
- an HTTP+SSE stream (a GET whose first event is `endpoint`) opens one, its POSTs go to the
  endpoint it named, and it is CLOSED when the stream ends;
- every request without an `Mcp-Session-Id` that is not `initialize` (a 2026-07-28 client, which
  has no sessions; a stateless server's) belongs to the one sessionless session of the proxy:
  the latest initialize answered without a session id, or else one opened by the first such
  request. So an SDK client in "auto" mode probing a legacy server shows its probe in a session
  of its own, then its initialize in the next.
A DELETE closes its session (CLOSED, with the status the server gave).

Secrets go to `secret()` before any record that may hold them: the values of Authorization,
Proxy-Authorization, Cookie, Set-Cookie, Mcp-Session-Id and any header whose name reads like a
credential, an HTTP+SSE endpoint's query values, and `access_token` / `refresh_token` values in
bodies. Records carry no header values at all; the session id is never in `detail`.
Frames larger than the bound are recorded clipped, `detail["size"]` giving the full size.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl, unquote_plus, urljoin, urlsplit

from ...transports.urls import is_secret_name, redact_url
from ..wire.records import CLIENT, CLOSED, EVENT, HELLO, SERVER, Record
from .sse import Event, EventScanner

Sink = Callable[[Record], None]
Secret = Callable[[str], None]
Header = tuple[bytes, bytes]

SECRET_HEADERS = frozenset({b"authorization", b"proxy-authorization", b"cookie", b"set-cookie", b"mcp-session-id"})
MIN_SECRET = 8  # shorter values are not registered: redacting every "1" would garble the trace
MAX_SESSIONS = 1024  # session ids and endpoints remembered (the oldest forgotten first)
MAX_SECRETS = 4096
TOKENS_JSON = re.compile(rb'"(?:access_token|refresh_token)"\s*:\s*"((?:[^"\\]|\\.)*)"')
TOKENS_FORM = re.compile(rb"(?:^|&)(?:access_token|refresh_token)=([^&\s]*)")


class Recorder:
    """Records and local sessions of one proxy; every method runs on the proxy's event loop."""

    def __init__(self, sink: Sink, secret: Secret, upstream: str, bound: int) -> None:
        self._sink = sink
        self._secret = secret
        self.upstream = upstream
        self.bound = bound
        self.endpoint_path = urlsplit(upstream).path or "/"
        self._seq = 0
        self._sessions = 0
        self._open: set[int] = set()
        self._by_id: dict[str, int] = {}  # Mcp-Session-Id -> local session
        self._by_endpoint: dict[str, int] = {}  # an HTTP+SSE endpoint's path and query -> local session
        self._endpoint_paths: dict[str, int] = {}  # those endpoints' paths (recorded), with how many use each
        self._sessionless: int | None = None
        self._secrets: set[str] = set()

    # ----- records

    def emit(self, side: str, data: bytes = b"", name: str = "", detail: dict[str, Any] | None = None) -> None:
        self._seq += 1
        record = Record(self._seq, side, time.time(), time.monotonic(), data, name, detail or {})
        try:
            self._sink(record)
        except Exception:  # noqa: BLE001 - a watcher's failure never breaks the session it watches
            pass

    def frame(self, side: str, data: bytes, size: int, detail: dict[str, Any]) -> None:
        self.secrets_in_body(data)
        self.emit(side, data, detail={**detail, "size": size} if size > len(data) else detail)

    def hello(self, http: str, via: str = "") -> int:
        self._sessions += 1
        number = self._sessions
        self._open.add(number)
        detail = {"session": number, "transport": "http", "url": redact_url(self.upstream), "http": http, "started": time.time()}
        self.emit(EVENT, name=HELLO, detail={**detail, "via": via} if via else detail)
        return number

    def closed(self, session: int, **detail: Any) -> None:
        if session in self._open:
            self._open.discard(session)
            self.emit(EVENT, name=CLOSED, detail={"session": session, **detail})
        for table in (self._by_id, self._by_endpoint):
            for key in [key for key, value in table.items() if value == session]:
                del table[key]
        if self._sessionless == session:
            self._sessionless = None

    def close_all(self, reason: str) -> None:
        for session in sorted(self._open):
            self.closed(session, reason=reason)

    # ----- sessions

    def records(self, path: str) -> bool:
        """Whether requests to `path` carry MCP messages (the endpoint, or an HTTP+SSE endpoint)."""
        return path == self.endpoint_path or path in self._endpoint_paths

    def by_session_id(self, session_id: str, http: str) -> int:
        session = self._by_id.get(session_id)
        if session is None:
            session = self.hello(http)
            self.name_session(session, session_id)
        return session

    def name_session(self, session: int, session_id: str) -> None:
        self._by_id[session_id] = session
        _bound(self._by_id)

    def sessionless(self, http: str) -> int:
        if self._sessionless is None:
            self._sessionless = self.hello(http)
        return self._sessionless

    def make_sessionless(self, session: int) -> None:
        self._sessionless = session

    def by_endpoint(self, target: str) -> int | None:
        return self._by_endpoint.get(target)

    def add_endpoint(self, session: int, stream_url: str, endpoint: str) -> None:
        """An HTTP+SSE stream named `endpoint`: its POSTs (to the endpoint's path and query) are `session`'s."""
        parts = urlsplit(urljoin(stream_url, endpoint))
        for _, value in parse_qsl(parts.query, keep_blank_values=True):
            self.secret(value)
        self._by_endpoint[f"{parts.path}?{parts.query}" if parts.query else parts.path] = session
        self._endpoint_paths[parts.path] = session
        _bound(self._by_endpoint)
        _bound(self._endpoint_paths)

    # ----- secrets

    def secret(self, value: str) -> None:
        value = value.strip()
        if len(value) < MIN_SECRET or value in self._secrets:
            return
        if len(self._secrets) >= MAX_SECRETS:
            self._secrets.clear()  # registered ones stay registered with the watcher; this only spares repeats
        self._secrets.add(value)
        try:
            self._secret(value)
        except Exception:  # noqa: BLE001 - as for the sink
            pass

    def secrets_in_headers(self, headers: list[Header]) -> None:
        for name, raw in headers:
            if name not in SECRET_HEADERS and not is_secret_name(name.decode("latin-1")):
                continue
            value = raw.decode("latin-1")
            self.secret(value)
            if name in (b"authorization", b"proxy-authorization"):
                self.secret(value.partition(" ")[2])
            elif name == b"cookie":
                for pair in value.split(";"):
                    self.secret(pair.partition("=")[2])
            elif name == b"set-cookie":
                self.secret(value.partition(";")[0].partition("=")[2])

    def secrets_in_body(self, body: bytes) -> None:
        if b"_token" not in body:
            return
        for found in TOKENS_JSON.finditer(body):
            try:
                self.secret(json.loads(b'"' + found.group(1) + b'"'))
            except ValueError:
                self.secret(found.group(1).decode("utf-8", "replace"))
        for found in TOKENS_FORM.finditer(body):
            self.secret(unquote_plus(found.group(1).decode("utf-8", "replace")))


def _bound(table: dict[str, int]) -> None:
    while len(table) > MAX_SESSIONS:
        del table[next(iter(table))]


def opens_session(body: bytes) -> bool:
    """Whether a POST body is an `initialize` request (alone, or in a batch)."""
    try:
        message = json.loads(body)
    except ValueError:
        return False
    messages = message if isinstance(message, list) else [message]
    return any(isinstance(m, dict) and m.get("method") == "initialize" and "id" in m for m in messages)


class Exchange:
    """One request and its answer, as recorded (`recorded` False: forwarded only, scanned for tokens)."""

    def __init__(self, recorder: Recorder, method: str, target: str, headers: list[Header], proxy_origin: str) -> None:
        self.recorder = recorder
        self.method = method
        self.target = target
        self.path = target.partition("?")[0]
        self.recorded = recorder.records(self.path)
        self.scanned = self.recorded or _may_hold_tokens(headers)  # a body to look into for tokens
        self.session_id = next((v.decode("latin-1") for k, v in headers if k == b"mcp-session-id"), None)
        self.proxy_origin = proxy_origin
        self.session: int | None = None
        self.status = 0
        self.via = ""
        self._body = bytearray()
        self._size = 0
        self._events: EventScanner | None = None
        self._opens = False
        recorder.secrets_in_headers(headers)

    # ----- the request

    def client_chunk(self, chunk: bytes) -> None:
        if self.scanned:
            self._keep(chunk)

    def client_end(self) -> None:
        """The request's body is in: its session is known, and the body recorded."""
        recorder, body = self.recorder, bytes(self._body)
        if not self.recorded:
            recorder.secrets_in_body(body)
            return
        endpoint = recorder.by_endpoint(self.target)
        if endpoint is not None:
            self.session = endpoint
        elif self.session_id is not None:
            self.session = recorder.by_session_id(self.session_id, self.method)
        elif self.method == "POST" and opens_session(body):
            self.session, self._opens = recorder.hello(self.method), True
        elif self.method != "GET":  # a GET without a session is told by its answer (an HTTP+SSE stream, or none)
            self.session = recorder.sessionless(self.method)
        if self.method == "POST" and self._size and self.session is not None:
            recorder.frame(CLIENT, body, self._size, {"session": self.session, "http": self.method})
        self._body.clear()
        self._size = 0

    # ----- the answer

    def answered(self, status: int, headers: list[Header], event_stream: bool) -> None:
        recorder = self.recorder
        recorder.secrets_in_headers(headers)
        self.status = status
        if self._opens and self.session is not None:
            session_id = next((v.decode("latin-1") for k, v in headers if k == b"mcp-session-id"), None)
            if session_id is not None:
                recorder.name_session(self.session, session_id)
            elif 200 <= status < 300:
                recorder.make_sessionless(self.session)
        if not self.recorded:
            self.scanned = self.scanned or _may_hold_tokens(headers)
        elif event_stream:
            self._events = EventScanner(recorder.bound)
            self.via = "sse" if self.method == "POST" else "get"
        else:
            self.via = "json"
            self.scanned = _is_json(headers)

    def server_chunk(self, chunk: bytes) -> None:
        if self._events is None:
            if self.scanned:
                self._keep(chunk)
            return
        for line in self._events.feed(chunk):
            if line.event is not None:
                self._event(line.event)

    def endpoint(self, url: str) -> None:
        """The stream opened with an HTTP+SSE `endpoint` event naming `url`: a session of its own."""
        if self.session is None:
            self.session = self.recorder.hello(self.method, "legacy-sse")
        self.via = "legacy-sse"
        self.recorder.add_endpoint(self.session, self.target, url)

    def server_end(self, complete: bool) -> None:
        """The answer is over: whole (`complete`), or broken off (the client or the server left)."""
        recorder = self.recorder
        if self._events is not None:
            for line in self._events.close() if complete else ():
                if line.event is not None:
                    self._event(line.event)
            if self.via == "legacy-sse" and self.session is not None:
                recorder.closed(self.session, http=self.method, status=self.status, reason="the event stream ended")
        elif complete and self.recorded and self.scanned and self._size and self.session is not None:
            detail = {"session": self.session, "http": self.method, "status": self.status, "via": "json"}
            recorder.frame(SERVER, bytes(self._body), self._size, detail)
        elif self._size:
            recorder.secrets_in_body(bytes(self._body))
        if self.method == "DELETE" and self.session is not None and self.recorded:
            recorder.closed(self.session, http="DELETE", status=self.status)

    def _event(self, event: Event) -> None:
        if event.name not in ("", "message") or not event.data:
            return  # the endpoint event, a priming event (an id, no data), an event of another kind
        if self.session is None:
            self.session = self.recorder.sessionless(self.method)
        detail: dict[str, Any] = {"session": self.session, "http": self.method, "status": self.status, "via": self.via}
        if event.event_id:
            detail["event_id"] = event.event_id
        self.recorder.frame(SERVER, event.data, event.size, detail)

    def _keep(self, chunk: bytes) -> None:
        room = self.recorder.bound - len(self._body)
        if room > 0:
            self._body += chunk[:room]
        self._size += len(chunk)


def _is_json(headers: list[Header]) -> bool:
    content_type = next((v for k, v in headers if k == b"content-type"), b"").partition(b";")[0].strip().lower()
    return content_type == b"application/json" or content_type.endswith(b"+json")


def _may_hold_tokens(headers: list[Header]) -> bool:
    content_type = next((v for k, v in headers if k == b"content-type"), b"").partition(b";")[0].strip().lower()
    return content_type in (b"application/json", b"application/x-www-form-urlencoded")
