"""HTTP bodies read within bounds: never more than one message may hold, never past a cancel,
never waiting for good on a server that stopped sending, never an event stream taken for JSON.

A body is read chunk by chunk, so a request given up on (its timeout, a cancel) stops the
read at the next chunk, and the read ends as soon as the body passes the limit, or before it
starts when Content-Length already says it would. The limit is the transport's message
limit, the same as for a stdio line or an SSE event. `limit_idle` puts a response under the
read timeout: each wait for its next bytes may last that long, no longer (what an answer
without a deadline of its own gets: every body but an SSE stream answering a request, which
its request's timeout bounds). A JSON body that opens as SSE does (`data:`, `event:`, ...)
is a stream the server mislabelled: it fails at once, where it would otherwise be read to its
end (which a stream may never reach) and then be no JSON.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import anyio
import httpx2

from ..base.errors import TransportError
from .base import size_text

MAX_ERROR_BODY = 64 * 1024  # read of a body nobody needs (an error page, a 202's)
SSE_START = re.compile(rb"(?:(?:data|event|id|retry):|:)")
SNIFF = 8  # bytes past leading whitespace that decide whether a body opens as SSE


class BodyTooLarge(TransportError):
    """A body over the message limit: not read further."""


class ReadStalled(TransportError):
    """The server sent nothing for the read timeout in the middle of an answer."""


class IdleLimited(httpx2.AsyncByteStream):
    """A response's byte stream whose every wait for more bytes ends after `idle` seconds."""

    def __init__(self, stream: httpx2.AsyncByteStream, idle: float, where: str) -> None:
        self._stream = stream
        self._idle = idle
        self._where = where

    async def __aiter__(self) -> AsyncIterator[bytes]:
        chunks = aiter(self._stream)
        while True:
            try:
                with anyio.fail_after(self._idle):
                    chunk = await anext(chunks, None)
            except TimeoutError:
                raise stalled(self._where, self._idle, "in the middle of its answer") from None
            if chunk is None:
                return
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()


def stalled(where: str, idle: float, when: str) -> ReadStalled:
    return ReadStalled(
        f"{where} sent nothing for {idle:g} s {when}; gave up on it (McpNotebook.http_read_timeout sets how long "
        "a server may pause)"
    )


def limit_idle(response: httpx2.Response, idle: float | None, where: str) -> None:
    """Put every later read of `response`'s body under the read timeout `idle` (None: no limit)."""
    if idle is not None and isinstance(response.stream, httpx2.AsyncByteStream):
        response.stream = IdleLimited(response.stream, idle, where)


async def read_body(response: httpx2.Response, limit: int, where: str, *, json: bool = False) -> bytes:
    """The whole body, or BodyTooLarge once it passes `limit` bytes (`where`: the URL, for the message).
    `json`: the body is labelled JSON; one that opens as an SSE stream does fails at once."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(where, limit, f" ({size_text(int(declared))} announced)")
    parts: list[bytes] = []
    size = 0
    head, sniffing = b"", json
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _too_large(where, limit, "")
        parts.append(chunk)
        if sniffing:
            head += chunk[:SNIFF] if head else chunk.lstrip()[:SNIFF]
            if len(head) >= SNIFF:
                sniffing = False
                _refuse_sse(head, response, where)
    if sniffing:
        _refuse_sse(head, response, where)
    return b"".join(parts)


def _refuse_sse(head: bytes, response: httpx2.Response, where: str) -> None:
    if SSE_START.match(head):
        content_type = response.headers.get("content-type", "").partition(";")[0].strip()
        raise TransportError(
            f"{where} labelled an event stream as JSON (Content-Type: {content_type}, but the body is SSE "
            "'event:'/'data:' lines); the server is misconfigured: it should say text/event-stream",
            status=response.status_code,
        )


async def read_head(response: httpx2.Response, limit: int) -> bytes:
    """At most the first `limit` bytes of the body (an error page, a body nobody needs); the
    rest is left unread, and closing the response drops the connection."""
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        parts.append(chunk)
        size += len(chunk)
        if size >= limit:
            break
    return b"".join(parts)[:limit]


def _too_large(where: str, limit: int, announced: str) -> BodyTooLarge:
    return BodyTooLarge(
        f"{where} answered with a body over {size_text(limit)}{announced}, more than one message may hold; "
        "it was not read (raise McpNotebook.max_frame_bytes to accept larger messages)"
    )
