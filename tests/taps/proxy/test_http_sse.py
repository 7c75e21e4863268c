"""Event streams as the tap's HTTP proxy reads them (mcp_notebook.taps.proxy.sse): events out of
bytes however they are cut, within a bound, and the one event it rewrites, the HTTP+SSE `endpoint`
naming the upstream origin, with every other byte passed on as it came."""

from __future__ import annotations

import pytest

from mcp_notebook.taps.proxy.sse import HOLD_LIMIT, EndpointRewriter, EventScanner

UPSTREAM, PROXY = "http://127.0.0.1:9000", "http://127.0.0.1:1234"
STREAM = b': hi\r\nevent: message\r\nid: s1/7\r\ndata: {"a":1}\r\n\r\ndata: 0123456789abcdef\rdata: x\r\r'


def events(scanner: EventScanner, *chunks: bytes) -> list[tuple[bytes, int, str, str]]:
    lines = [line for chunk in chunks for line in scanner.feed(chunk)] + scanner.close()
    return [(e.data, e.size, e.name, e.event_id) for line in lines if (e := line.event) is not None]


@pytest.mark.parametrize("cut", range(len(STREAM) + 1))
def test_events_are_the_same_wherever_the_bytes_are_cut_and_data_is_clipped_at_the_bound(cut: int) -> None:
    expected = [(b'{"a":1}', 7, "message", "s1/7"), (b"0123456789", 18, "", "s1/7")]
    assert events(EventScanner(10), STREAM[:cut], STREAM[cut:]) == expected


def test_line_sizes_add_up_to_the_bytes_fed() -> None:
    scanner = EventScanner(4)
    lines = scanner.feed(STREAM) + scanner.close()
    assert sum(line.size for line in lines) == len(STREAM)


def test_an_unfinished_event_at_the_end_is_no_event() -> None:
    assert events(EventScanner(100), b"data: one\n\ndata: half") == [(b"one", 3, "", "")]


ABSOLUTE = (
    b": ping\n\nevent: endpoint\r\ndata: http://127.0.0.1:9000/messages/?session_id=abc\r\n\r\nevent: message\ndata: {}\n\n"
)


@pytest.mark.parametrize("cut", range(len(ABSOLUTE) + 1))
def test_an_endpoint_on_the_upstream_origin_is_rewritten_to_the_proxy_and_nothing_else(cut: int) -> None:
    rewriter = EndpointRewriter(UPSTREAM, PROXY)
    out = rewriter.feed(ABSOLUTE[:cut]) + rewriter.feed(ABSOLUTE[cut:]) + rewriter.flush()
    assert out == ABSOLUTE.replace(b"127.0.0.1:9000", b"127.0.0.1:1234")


@pytest.mark.parametrize(
    "endpoint",
    [b"/messages/?session_id=abc", b"http://elsewhere.example:9000/messages/", b"https://127.0.0.1:9000/messages/"],
)
def test_a_relative_endpoint_or_one_on_another_origin_passes_unchanged(endpoint: bytes) -> None:
    stream = b"event: endpoint\ndata: " + endpoint + b"\n\nevent: message\ndata: {}\n\n"
    rewriter = EndpointRewriter(UPSTREAM, PROXY)
    assert rewriter.feed(stream) + rewriter.flush() == stream


def test_only_the_first_event_is_held_and_comments_before_it_go_on_at_once() -> None:
    rewriter = EndpointRewriter(UPSTREAM, PROXY)
    assert rewriter.feed(b": keep-alive\n") == b": keep-alive\n"
    assert rewriter.feed(b"data: {}\n") == b""  # the first event, not yet complete
    assert rewriter.feed(b"\nevent: endpoint\ndata: http://127.0.0.1:9000/x\n\n") == (
        b"data: {}\n\nevent: endpoint\ndata: http://127.0.0.1:9000/x\n\n"  # a later endpoint event is not rewritten
    )


def test_a_first_event_over_the_hold_limit_is_passed_on_as_it_comes() -> None:
    rewriter = EndpointRewriter(UPSTREAM, PROXY)
    big = b"data: " + b"x" * HOLD_LIMIT
    assert rewriter.feed(big) == big and not rewriter.holding
