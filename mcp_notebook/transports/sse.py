"""Server-sent events over httpx2: its own `EventSource` parses, we count the keep-alive comments.

The parser drops comment lines (`: ping`), which servers send as keep-alive ticks; the
health data wants to count them, so the response is wrapped to see the text first.
An event may be as large as any one message (the transport's limit, the same as for a stdio
line or an HTTP body), not httpx2's default of 1 MiB: a result may be larger than that.

An event id is what a resume sends back as the `Last-Event-ID` header, so an id that header
cannot carry as it is, or longer than `MAX_EVENT_ID`, is refused: reported (a protocol
violation) and ignored, as the SSE standard ignores an id with a NUL: the stream resumes, if
it must, after the last id that could be sent back. The MCP transport asks ids to identify
their stream and position, which a few dozen characters do (the SDKs' are UUIDs and stream
names with counters); a kibibyte leaves room for any encoding of that, not for a payload.
"""

from __future__ import annotations

import codecs
import dataclasses
from collections.abc import AsyncIterator, Callable

import httpx2
from httpx2 import EventSource, ServerSentEvent

from ..base.text import clip
from .base import MAX_FRAME_BYTES, size_text

MAX_EVENT_ID = 1024  # bytes (an id is visible ASCII)


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
    response: httpx2.Response,
    on_comment: Callable[[], None],
    max_event_size: int = MAX_FRAME_BYTES,
    on_bad_id: Callable[[str], None] = lambda problem: None,
) -> AsyncIterator[ServerSentEvent]:
    """The events of an SSE response; `on_comment()` runs for each comment line. An event over
    `max_event_size` bytes raises httpx2.SSEError as soon as it passes the limit. An event id
    that cannot be sent back is taken out of the events that carry it, and `on_bad_id(problem)`
    runs once for it."""
    events = aiter(EventSource(_CommentCounter(response, on_comment), max_event_size=max_event_size))  # type: ignore[arg-type]
    return _ids_checked(events, on_bad_id)


async def _ids_checked(
    events: AsyncIterator[ServerSentEvent], on_bad_id: Callable[[str], None]
) -> AsyncIterator[ServerSentEvent]:
    good = bad = ""  # the last id passed, and the last refused (each event carries the id in force)
    async for sse in events:
        event_id = sse.id
        if event_id and event_id != good:
            problem = None if event_id == bad else event_id_problem(event_id)
            if problem is not None:
                bad = event_id
                on_bad_id(problem)
            if event_id == bad:
                sse = dataclasses.replace(sse, id="")
            else:
                good = event_id
        yield sse


def event_id_problem(event_id: str) -> str | None:
    """Why `event_id` cannot be sent back as a `Last-Event-ID` header, or None if it can."""
    if len(event_id) > MAX_EVENT_ID:
        size = size_text(len(event_id.encode("utf-8", errors="replace")))
        return f"an event id of {size}, over the {MAX_EVENT_ID} bytes one may have (it is sent back as Last-Event-ID)"
    if not (event_id.isascii() and event_id.isprintable()) or event_id != event_id.strip():
        return f"an event id a Last-Event-ID header cannot carry as it is: {clip(ascii(event_id), 80)}"
    return None


def is_event_stream(response: httpx2.Response) -> bool:
    return response.headers.get("content-type", "").partition(";")[0].strip().lower() == "text/event-stream"
