"""The stdio reader's ordering rule, on a plain pipe: a frame the reading thread could take
itself never overtakes one it handed to the loop before it, and the end comes after both; the
callers a chunk answers are woken as the chunk ends, not one by one while it is read."""

from __future__ import annotations

import asyncio
import os
import threading

from mcp_notebook.base import wakeups
from mcp_notebook.protocol.jsonrpc import RequestId
from mcp_notebook.transports import pipe_reader
from mcp_notebook.transports.pipe_reader import PipeReader

NAME = "test pipe reader"


class RecordingSink:
    """Takes frames that start with "here" on the reading thread; the rest go to the loop."""

    def __init__(self) -> None:
        self.taken_here: list[str] = []
        self.dispatched: list[str] = []
        self.problems: list[str | None] = []
        self.waiters: list[threading.Lock] = []  # one a frame taken here, released as its answer would be
        self.woken_while_reading: list[int] = []  # for each frame taken here: how many waiters were awake
        self.woken_at_once: list[bool] = []  # for each frame taken here: its waiter awake as it settled

    def frame_here(self, text: str) -> bool:
        if text.startswith("here"):
            self.woken_while_reading.append(sum(not lock.locked() for lock in self.waiters))
            waiter = threading.Lock()
            waiter.acquire()
            self.waiters.append(waiter)
            wakeups.release(waiter)
            self.woken_at_once.append(not waiter.locked())
            self.taken_here.append(text)
            return True
        return False

    def frame_received(self, text: str, via: str | None = None, problem: str | None = None) -> None:
        self.dispatched.append(text)
        self.problems.append(problem)

    def hung_up(self) -> None:
        raise AssertionError("the reader reports its end through on_end")

    def send_failed(self, request_id: RequestId | None, error: Exception) -> None:
        raise AssertionError("a reader never sends")

    def session_expired(self, request_id: RequestId | None, current: bool = True) -> None:
        raise AssertionError("a pipe has no session")

    def violated(self, rule: str, message: str, section: str) -> None:
        raise AssertionError("a pipe has no transport rules of its own")

    def awaiting(self, request_id: RequestId) -> bool:
        return False

    def wait_caught_up(self) -> None:
        pass  # no checker behind this sink


def read_all(data: bytes) -> tuple[RecordingSink, list[str]]:
    """Feed `data` and the end of the pipe to a reader whose loop runs only once the reading
    thread has ended, so what it handed to the loop is still undispatched while it reads on."""
    loop = asyncio.new_event_loop()
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    sink, order = RecordingSink(), []
    ended = loop.create_future()
    reader = PipeReader(
        read_fd,
        loop,
        sink,
        max_frame_bytes=1024,
        on_end=lambda: (order.append("end"), ended.set_result(None)),
        events=lambda *args, **kwargs: None,
        name=NAME,
    )
    try:
        reader.start()
        # Found before the pipe ends: once it has, the thread may be gone already.
        (thread,) = [t for t in threading.enumerate() if t.name == NAME]
        os.write(write_fd, data)
        os.close(write_fd)
        thread.join(30)
        assert not thread.is_alive()
        loop.run_until_complete(ended)
        loop.run_until_complete(reader.stop())
    finally:
        os.close(read_fd)
        loop.close()
    order[:0] = sink.dispatched
    return sink, order


def test_a_frame_the_reader_could_take_waits_behind_one_handed_to_the_loop():
    sink, order = read_all(b"loop 1\nhere 2\nloop 3\n")
    assert sink.taken_here == []
    assert order == ["loop 1", "here 2", "loop 3", "end"]


def test_frames_are_taken_on_the_reading_thread_while_nothing_waits_for_the_loop():
    sink, order = read_all(b"here 1\nhere 2\nloop 3\nhere 4\nlast line, unterminated")
    assert sink.taken_here == ["here 1", "here 2"]
    assert order == ["loop 3", "here 4", "last line, unterminated", "end"]


def test_a_line_that_is_not_utf8_goes_to_the_loop_in_its_place_saying_so():
    sink, order = read_all(b"here 1\nhere caf\xe9\nhere 3\n")
    assert sink.taken_here == ["here 1"]
    assert order == ["here caf\ufffd", "here 3", "end"]
    assert sink.problems == ["not UTF-8: unexpected end of data at byte 8", None]


def test_the_callers_a_chunk_answers_are_woken_as_it_ends():
    sink, _ = read_all(b"here 1\nhere 2\nhere 3\n")  # one write: one chunk
    assert sink.taken_here == ["here 1", "here 2", "here 3"]
    assert sink.woken_while_reading == [0, 0, 0]
    assert sink.woken_at_once == [False, False, False]
    assert not any(lock.locked() for lock in sink.waiters)


def test_a_chunk_of_one_answer_wakes_its_caller_as_it_settles():
    sink, _ = read_all(b"here 1\n")  # nothing to wake with it: the caller runs while the reader finishes
    assert sink.woken_at_once == [True]


def test_the_reader_reads_no_further_while_its_frames_wait_for_the_loop(monkeypatch):
    """A flood of frames for the loop: the thread hands HANDING of them, then waits (the rest stay
    in the pipe) until the loop has dispatched some; then every frame arrives, in order."""
    monkeypatch.setattr(pipe_reader, "HANDING", 3)
    loop = asyncio.new_event_loop()
    read_fd, write_fd = os.pipe()
    os.set_blocking(read_fd, False)
    sink, waited = RecordingSink(), threading.Event()
    ended = loop.create_future()
    reader = PipeReader(
        read_fd, loop, sink, max_frame_bytes=1024, on_end=lambda: ended.set_result(None), events=lambda *a, **k: None, name=NAME
    )
    wait = reader._wait_for_the_loop

    def noted_wait() -> None:
        waited.set()
        wait()

    reader._wait_for_the_loop = noted_wait  # type: ignore[method-assign]
    try:
        reader.start()
        os.write(write_fd, b"".join(b"loop %d\n" % n for n in range(10)))
        os.close(write_fd)
        assert waited.wait(30)
        assert reader._handed == 3 and sink.dispatched == []  # the loop has not run: the thread waits
        loop.run_until_complete(asyncio.wait_for(ended, 30))
        loop.run_until_complete(reader.stop())
    finally:
        os.close(read_fd)
        loop.close()
    assert sink.dispatched == [f"loop {n}" for n in range(10)]
