"""The relay's feed to the notebook: never blocks on a notebook that does not read (drops with a
count instead), lets a notebook that goes away go, and attaches to one that starts later, each
connection opening with the session's HELLO."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.tap_relay import short_tap_dir

from mcp_notebook.taps.relay.feed import NotebookFeed

LINE = b"x" * 999 + b"\n"


@pytest.fixture
def path() -> Iterator[Path]:
    with short_tap_dir() as folder:
        folder.mkdir(mode=0o700)
        yield folder / "n.sock"


def listen(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(1)
    return server


def test_a_notebook_that_never_reads_never_blocks_it(path: Path) -> None:
    server = listen(path)
    feed = NotebookFeed(path, queue_bytes=50_000)
    feed.hello = b"hello\n"

    def offer_many() -> None:
        for seq in range(2, 2002):  # 2 MB: more than the socket's buffer and the queue together
            feed.offer(seq, LINE)
            feed.send()

    worker = threading.Thread(target=offer_many)
    worker.start()
    worker.join(20)
    try:
        assert not worker.is_alive(), "the feed blocked on a notebook that does not read"
        assert feed.connected and feed.dropped > 0
        count, first, last = feed.take_dropped()
        assert first > 2 and last == 2001 and count <= last - first + 1
        assert feed.dropped == 0
    finally:
        feed.close()
        server.close()


def test_a_notebook_that_goes_away_is_let_go_and_one_that_comes_back_gets_the_hello_first(path: Path) -> None:
    feed = NotebookFeed(path, retry=0.0)
    feed.hello = b"hello\n"
    feed.offer(2, b"early\n")  # no one listens: nothing queued, nothing counted
    assert not feed.connected and feed.dropped == 0
    server = listen(path)
    feed.offer(3, b"three\n")
    feed.send()
    conn, _ = server.accept()
    expected = b"hello\nthree\n"
    assert conn.recv(len(expected), socket.MSG_WAITALL) == expected
    conn.close()
    server.close()
    path.unlink()
    for seq in (4, 5):  # the peer is gone: a send fails (EPIPE or reset), quietly
        feed.offer(seq, b"lost\n")
        feed.send()
    assert not feed.connected
    server = listen(path)
    feed.poke()
    assert feed.connected and feed.connections == 2
    feed.offer(6, b"six\n")
    feed.send()
    conn, _ = server.accept()
    with conn, conn.makefile("rb") as lines:
        assert lines.readline() == b"hello\n" and lines.readline() == b"six\n"
    feed.close()
    server.close()


def test_no_notebook_is_tried_again_only_after_the_retry(path: Path) -> None:
    feed = NotebookFeed(path, retry=3600.0)
    feed.poke()
    server = listen(path)
    feed.poke()  # within the retry: no new attempt
    assert not feed.connected
    server.close()
