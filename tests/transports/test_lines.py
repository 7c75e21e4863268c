"""The line splitter: lines whole however they fall into chunks, a long line handed over
without a copy of it, and a line over the limit dropped up to and with its newline."""

from __future__ import annotations

from mcp_notebook.transports.lines import LineSplitter


def split(chunks: list[bytes], limit: int = 64) -> tuple[list[bytes], int, bytes]:
    lines = LineSplitter(limit)
    found = [bytes(line) for chunk in chunks for line in lines.feed(chunk)]
    return found, lines.overflowed, bytes(lines.rest())


def test_lines_come_whole_however_the_chunks_cut_them():
    data = b"one\ntwo\n\nthree, longer\nfour\nfive"
    expected = (data.split(b"\n")[:-1], 0, b"five")
    for size in (1, 2, 3, 5, 7, len(data)):
        assert split([data[at : at + size] for at in range(0, len(data), size)]) == expected


def test_a_line_gathered_over_chunks_is_the_buffer_itself_not_a_copy():
    lines = LineSplitter(1 << 20)
    assert lines.feed(b"x" * 1000) == [] and lines.feed(b"y" * 1000) == []
    buffer = lines._partial
    (line, after) = lines.feed(b"z\nnext\nrest")
    assert line is buffer and line == b"x" * 1000 + b"y" * 1000 + b"z"
    assert after == b"next" and bytes(lines.rest()) == b"rest" and lines.rest() == b""


def test_a_line_over_the_limit_is_dropped_and_counted_with_the_lines_around_it_kept():
    assert split([b"short\n" + b"x" * 40, b"x" * 40, b"x\nafter\n"], limit=64) == ([b"short", b"after"], 1, b"")
    assert split([b"a\n" + b"y" * 70 + b"\nb\n"], limit=64) == ([b"a", b"b"], 1, b"")
