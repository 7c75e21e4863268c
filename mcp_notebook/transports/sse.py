"""Server-sent events over httpx2: its own `EventSource` parses, we count the keep-alive comments.

The parser drops comment lines (`: ping`), which servers send as keep-alive ticks; the
health data wants to count them, so the response is wrapped to see the text first.
An event may be as large as any one message (the transport's limit, the same as for a stdio
line or an HTTP body), not httpx2's default of 1 MiB: a result may be larger than that.
"""

from __future__ import annotations

import codecs
from collections.abc import AsyncIterator, Callable

import httpx2
from httpx2 import EventSource, ServerSentEvent

from .base import MAX_FRAME_BYTES


class _CommentCounter:
    """The three things EventSource reads from a response, passed through while counting comment lines."""

    def __init__(self, response: httpx2.Response, on_comment: Callable[[], None]) -> None:
        self.headers = response.headers
        self.request = response.request
        self._response = response
        self._on_comment = on_comment
        self._at_line_start = True

    async def aiter_text(self) -> AsyncIterator[str]:
        # What Response.aiter_text does (the same incremental decoder), without its chunker and
        # context layers, which cost every event a few more generator steps.
        response = self._response
        decoder = codecs.getincrementaldecoder(response.encoding or "utf-8")(errors="replace")
        async for chunk in response.aiter_bytes():
            text = decoder.decode(chunk)
            if text:
                comments = text.count("\n:") + text.count("\r:") + (self._at_line_start and text[0] == ":")
                for _ in range(comments):
                    self._on_comment()
                self._at_line_start = text[-1] in "\r\n"
                yield text
        if tail := decoder.decode(b"", True):
            yield tail


def iter_events(
    response: httpx2.Response, on_comment: Callable[[], None], max_event_size: int = MAX_FRAME_BYTES
) -> AsyncIterator[ServerSentEvent]:
    """The events of an SSE response; `on_comment()` runs for each comment line. An event over
    `max_event_size` bytes raises httpx2.SSEError as soon as it passes the limit."""
    return aiter(EventSource(_CommentCounter(response, on_comment), max_event_size=max_event_size))  # type: ignore[arg-type]


def is_event_stream(response: httpx2.Response) -> bool:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower() == "text/event-stream"
