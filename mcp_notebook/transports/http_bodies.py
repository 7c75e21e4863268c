"""HTTP bodies read within bounds: never more than one message may hold, never past a cancel.

A body is read chunk by chunk, so a request given up on (its timeout, a cancel) stops the
read at the next chunk, and the read ends as soon as the body passes the limit, or before it
starts when Content-Length already says it would. The limit is the transport's message
limit, the same as for a stdio line or an SSE event.
"""

from __future__ import annotations

import httpx2

from ..base.errors import TransportError
from .base import size_text


class BodyTooLarge(TransportError):
    """A body over the message limit: not read further."""


async def read_body(response: httpx2.Response, limit: int, where: str) -> bytes:
    """The whole body, or BodyTooLarge once it passes `limit` bytes (`where`: the URL, for the message)."""
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise _too_large(where, limit, f" ({size_text(int(declared))} announced)")
    parts: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > limit:
            raise _too_large(where, limit, "")
        parts.append(chunk)
    return b"".join(parts)


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
