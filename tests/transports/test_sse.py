"""SSE parsing: httpx-sse does the parsing; we count comment lines as keep-alive ticks."""

from __future__ import annotations

import anyio
import httpx

from mcp_notebook.transports.sse import iter_events


async def _events(chunks: list[bytes]) -> tuple[list, int]:
    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1

    async def body():
        for chunk in chunks:
            yield chunk

    response = httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body())
    events = [sse async for sse in iter_events(response, tick)]
    return events, ticks


def test_comments_are_counted_across_chunk_boundaries_and_events_parse():
    chunks = [b": keep-alive\n", b"id: 7\nretry: 500\ndata: \n\n", b"data: {\"a\":\n", b"data: 1}\n\n:", b" tick\r\n", b": x\r\n\r\n"]
    events, ticks = anyio.run(_events, chunks)
    assert ticks == 3
    priming, message = events[:2]
    assert (priming.id, priming.retry, priming.data) == ("7", 500, "")  # an empty-data priming event
    assert message.data == '{"a":\n1}' and message.id == "7"  # multi-line data; the last id carries over
    assert all(not e.data for e in events[2:])  # empty events (a comment, then a blank line) carry nothing
