"""SSE parsing: httpx2's EventSource does the parsing; we count comment lines as keep-alive ticks."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from mcp_notebook.transports.sse import iter_events


async def _events(chunks: list[bytes]) -> tuple[list, int]:
    ticks = 0

    def tick() -> None:
        nonlocal ticks
        ticks += 1

    async def body():
        for chunk in chunks:
            yield chunk

    request = httpx2.Request("GET", "http://127.0.0.1/mcp")
    response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body(), request=request)
    events = [sse async for sse in iter_events(response, tick)]
    return events, ticks


def test_comments_are_counted_across_chunk_boundaries_and_events_parse():
    chunks = [
        b": keep-alive\n",
        b"id: 7\nretry: 500\ndata: \n\n",
        b'data: {"a":\n',
        b"data: 1}\n\n:",
        b" tick\r\n",
        b": x\r\n\r\n",
    ]
    events, ticks = anyio.run(_events, chunks)
    assert ticks == 3
    priming, message = events  # a comment, then a blank line, makes no event
    assert (priming.id, priming.retry, priming.data) == ("7", 500, "")  # an empty-data priming event
    assert message.data == '{"a":\n1}' and message.id == "7"  # multi-line data; the last id carries over


def test_events_over_a_mebibyte_are_kept_whole():
    data = "x" * (3 * 1024 * 1024)
    events, ticks = anyio.run(_events, [f"data: {data[: len(data) // 2]}".encode(), f"{data[len(data) // 2 :]}\n\n".encode()])
    assert ticks == 0 and [e.data for e in events] == [data]


def test_an_event_over_the_limit_fails_as_soon_as_it_passes_it():
    async def over(limit: int) -> list:
        chunks = [b"data: " + b"x" * 600, b"x" * 600, b"x" * 600, b"\n\n"]
        request = httpx2.Request("GET", "http://127.0.0.1/mcp")

        async def body():
            for chunk in chunks:
                yield chunk

        response = httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=body(), request=request)
        return [sse async for sse in iter_events(response, lambda: None, limit)]

    with pytest.raises(httpx2.SSEError, match="1000 byte limit"):
        anyio.run(over, 1000)
    assert [len(e.data) for e in anyio.run(over, 4000)] == [1800]
