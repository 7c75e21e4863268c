"""What a POST answered, handed to the session whatever shape it came in.

An error status (with the JSON-RPC error it may carry for our request), a 202, an SSE stream
(resumed with `Last-Event-ID` if it ends before our response, or re-issued in the modern era,
whose streams do not resume), or a JSON body: read within the message limit, and refused at
once when it is an event stream labelled JSON. The transport is seen only as a `ReplyHost`.
"""

from __future__ import annotations

from typing import Protocol

import httpx2

from ..base.errors import ReissuableError, TransportError
from ..protocol.jsonrpc import RequestId, utf8_problem
from .base import Sink
from .http_bodies import MAX_ERROR_BODY, read_body, read_head
from .http_errors import describe_status
from .http_streams import Streams
from .sse import is_event_stream


class ReplyHost(Protocol):
    """The HTTP transport as its replies see it."""

    kind: str  # "http" (Streamable HTTP) or "sse" (HTTP+SSE: every answer comes on the one stream)
    modern: bool
    max_frame_bytes: int

    @property
    def sink(self) -> Sink: ...

    def describe(self) -> str: ...


async def take_reply(host: ReplyHost, streams: Streams, response: httpx2.Response, request_id: RequestId | None) -> None:
    """Hand what a POST answered to the session, whatever shape it came in."""
    sink = host.sink
    status = response.status_code
    if status >= 400:
        body = (await read_head(response, MAX_ERROR_BODY)).decode("utf-8", errors="replace")
        return take_error(host, response, body, request_id)
    if host.kind == "sse" or status == 202:
        await read_head(response, MAX_ERROR_BODY)
        if status == 202 and request_id is not None and host.kind == "http":
            raise TransportError(f"{host.describe()} answered a request with 202 and no body", status=202)
        return
    if is_event_stream(response):
        last_id, retry = await streams.read(response, f"POST stream of request {request_id}")
        if request_id is not None and sink.awaiting(request_id):
            if host.modern:  # 2026-07-28 streams do not resume: the session re-issues the request
                raise ReissuableError(f"the response stream of request {request_id} ended before its response")
            await streams.resume(request_id, last_id, retry)
        return
    content_type = response.headers.get("content-type", "")
    if "json" not in content_type:
        body = (await read_head(response, MAX_ERROR_BODY)).decode("utf-8", errors="replace")
        raise TransportError(describe_status(response, body, host.describe()), status=status)
    data = await read_body(response, host.max_frame_bytes, host.describe(), json=True)
    try:
        body_text, problem = data.decode("utf-8"), None
    except UnicodeDecodeError as exc:  # JSON text is UTF-8: the session hears why this body is not a frame
        body_text, problem = data.decode("utf-8", errors="replace"), utf8_problem(exc)
    if body_text.strip():
        sink.frame_received(body_text, via="POST body", problem=problem)


def take_error(host: ReplyHost, response: httpx2.Response, body: str, request_id: RequestId | None) -> None:
    """An HTTP error answer: the JSON-RPC error it carries for our request, else a TransportError."""
    sink = host.sink
    if body.lstrip().startswith("{") and '"id"' in body and request_id is not None:
        sink.frame_received(body, via="POST error body")  # a JSON-RPC error for our request
        if not sink.awaiting(request_id):
            return
    raise TransportError(describe_status(response, body, host.describe()), status=response.status_code)
