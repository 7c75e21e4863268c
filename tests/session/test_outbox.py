"""The outbox over a transport that takes frames in batches: frames queued while one thread
writes go out together after it, in the order the trace shows; the threads that queued them
do not wait for the write; a frame another thread failed to write fails its request."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest

from mcp_notebook.base.errors import TransportClosed
from mcp_notebook.protocol import jsonrpc as rpc
from mcp_notebook.session.health import HealthCounters
from mcp_notebook.session.outbox import Outbox
from mcp_notebook.session.trace import Trace


class Batches:
    """A transport taking frames in batches; the first write waits until `release` is set."""

    kind = "stdio"
    sends_from_any_thread = True

    def __init__(self, fail_on: int | None = None, interrupt_first: bool = False) -> None:
        self.writes: list[list[str]] = []
        self.entered, self.release = threading.Event(), threading.Event()
        self.fail_on = fail_on
        self.interrupt_first = interrupt_first
        self.closed = False
        self.attempts = 0

    def writable(self) -> None:
        if self.closed:
            raise TransportClosed("closed")

    def send_frames(self, texts: Sequence[str]) -> None:
        number, self.attempts = self.attempts, self.attempts + 1
        if number == 0:
            self.entered.set()
            assert self.release.wait(30)
            if self.interrupt_first:
                self.writes.append(list(texts))
                raise KeyboardInterrupt
        if number == self.fail_on:
            raise TransportClosed("broken pipe")
        self.writes.append(list(texts))

    def send(self, text: str, request_id: Any = None, **_: Any) -> None:
        raise AssertionError("a batching transport is written through send_frames")


def ping(request_id: int) -> dict[str, Any]:
    return rpc.request(request_id, "ping", None)


def queued_behind_a_write(transport: Batches, outbox: Outbox, others: int = 3) -> threading.Thread:
    """Frame 1 in a write that waits; frames 2.. queued meanwhile from this thread (each `send` returns)."""
    failures: list[BaseException] = []

    def first() -> None:
        try:
            outbox.send(ping(1), rpc.REQUEST)
        except BaseException as exc:  # noqa: BLE001 - checked by the caller
            failures.append(exc)

    writer = threading.Thread(target=first)
    writer.start()
    assert transport.entered.wait(30)
    for request_id in range(2, 2 + others):
        outbox.send(ping(request_id), rpc.REQUEST)  # returns at once: the write under way takes it
    writer.failures = failures  # type: ignore[attr-defined]
    return writer


def test_frames_queued_during_a_write_go_out_in_one_write_in_trace_order() -> None:
    transport, trace = Batches(), Trace()
    outbox = Outbox(transport, trace, HealthCounters())  # type: ignore[arg-type]
    writer = queued_behind_a_write(transport, outbox)
    assert len(transport.writes) == 0  # nothing of theirs written yet: they did not wait
    transport.release.set()
    writer.join(30)
    assert writer.failures == []  # type: ignore[attr-defined]
    assert [len(batch) for batch in transport.writes] == [1, 3]
    wire = [rpc.decode(text).message["id"] for batch in transport.writes for text in batch]
    assert wire == [e.id for e in trace.frames("out")] == [1, 2, 3, 4]
    outbox.send(ping(5), rpc.REQUEST)  # nobody writing now: written at once, by this thread
    assert transport.writes[-1] == [rpc.encode(ping(5))]


def test_frames_another_thread_failed_to_write_are_reported_lost() -> None:
    lost: list[Any] = []
    transport = Batches(fail_on=1)
    outbox = Outbox(transport, Trace(), HealthCounters(), lambda ids, error: lost.extend(ids))  # type: ignore[arg-type]
    writer = queued_behind_a_write(transport, outbox)
    transport.release.set()
    writer.join(30)
    assert writer.failures == []  # its own frame went out  # type: ignore[attr-defined]
    assert lost == [2, 3, 4]
    transport.closed = True
    with pytest.raises(TransportClosed):
        outbox.send(ping(6), rpc.REQUEST)  # refused before it is traced or queued


def test_an_interrupted_writer_still_writes_what_was_queued_behind_it() -> None:
    transport = Batches(interrupt_first=True)
    outbox = Outbox(transport, Trace(), HealthCounters())  # type: ignore[arg-type]
    writer = queued_behind_a_write(transport, outbox)
    transport.release.set()
    writer.join(30)
    assert [type(exc) for exc in writer.failures] == [KeyboardInterrupt]  # type: ignore[attr-defined]
    assert [len(batch) for batch in transport.writes] == [1, 3]
    outbox.send(ping(5), rpc.REQUEST)  # the outbox is not left thinking a write is under way
    assert len(transport.writes) == 3


def test_a_pong_another_thread_failed_to_write_is_counted_as_dropped_not_sent() -> None:
    transport, trace, counters = Batches(fail_on=1), Trace(), HealthCounters()
    outbox = Outbox(transport, trace, counters)  # type: ignore[arg-type]
    writer = queued_behind_a_write(transport, outbox, others=0)
    outbox.send_reply(rpc.result("srv-1", {}), {"method": "ping", "id": "srv-1"}, note="pong", read_at=0.0)
    assert counters.pongs_sent == 0  # queued, not written yet
    transport.release.set()
    writer.join(30)
    assert (counters.pongs_sent, counters.pong_failures) == (0, 1)
    assert [e.detail["id"] for e in trace.filter(kind="reply-dropped")] == ["srv-1"]
    outbox.send_reply(rpc.result("srv-2", {}), {"method": "ping", "id": "srv-2"}, note="pong", read_at=0.0)
    assert counters.pongs_sent == 1 and len(counters.pong_latencies) == 1  # written at once: accounted at once
