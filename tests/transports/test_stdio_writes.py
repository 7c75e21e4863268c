"""Requests written from the caller's thread over stdio (no hop into the loop), answers and
server pings taken by the transport's reading thread (the session thread may be busy), and
the frames that cannot go out at once: queued, flushed by the loop, never torn or reordered."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest
from support.servers import server_everything_cmd

import mcp_notebook
from mcp_notebook.base.errors import ConnectionClosed
from mcp_notebook.runtime import get_runtime
from mcp_notebook.session.health import HealthCounters
from mcp_notebook.session.requests import InFlight

pytestmark = [pytest.mark.node]


@contextlib.contextmanager
def loop_held() -> Iterator[None]:
    """The session thread kept busy in a callback of ours until the block ends."""
    busy, release = threading.Event(), threading.Event()

    def hold_the_loop() -> None:
        busy.set()
        release.wait(30)

    get_runtime().call_soon(hold_the_loop)
    assert busy.wait(30)
    try:
        yield
    finally:
        release.set()


def test_a_ping_is_written_and_answered_off_the_loop_while_the_loop_is_busy():
    with mcp_notebook.connect(server_everything_cmd(), era="legacy", name="direct") as conn:
        session = conn._session
        conn.ping()  # what the server sends after the handshake is dispatched before this answer
        with loop_held():
            pending = session.call("ping")
            sent = conn.trace.frames("out")[-1]  # written here: the loop could not have done it
            assert (sent.method, sent.id) == ("ping", pending.id)  # type: ignore[attr-defined]
            # settled by the transport's reading thread: the session thread is still held
            assert pending.wait(30) and pending.outcome() == {}
            answer = conn.trace.frames("in")[-1]
            assert (answer.kind, answer.id, answer.method) == ("response", pending.id, "ping")  # type: ignore[attr-defined]
        assert conn.health.pings_sent == 2 and conn.health.pings_answered == 2
        reader = f"mcp-notebook stdio reader (pid {session.transport.pid})"
        assert reader in [thread.name for thread in threading.enumerate()]
    assert reader not in [thread.name for thread in threading.enumerate()]  # closing ended it


def test_server_pings_are_answered_while_the_loop_is_busy():
    with mcp_notebook.demo("pinged", ping_interval=0.05, load_magics=False) as conn:
        outbox, written = conn._session.outbox, threading.Semaphore(0)
        send_reply = outbox.send_reply

        def counted(*args: object, **kwargs: object) -> None:
            send_reply(*args, **kwargs)  # type: ignore[arg-type]
            written.release()

        outbox.send_reply = counted  # type: ignore[method-assign]
        with loop_held():
            for _ in range(3):  # the demo server pings every 50 ms; only the reading thread can answer now
                assert written.acquire(timeout=30), "no pongs while the loop was held"
        pongs = [e for e in conn.trace.frames("out") if e.note == "pong"]
        assert len(pongs) >= 3 and conn._session.counters.pong_failures == 0


def test_frames_from_many_threads_arrive_whole_large_ones_through_the_loop():
    big = "x" * 200_000  # more than one atomic pipe write: queued, the loop writes it
    with mcp_notebook.connect(server_everything_cmd(), era="legacy", name="writers") as conn:
        failures: list[BaseException] = []

        def pings() -> None:
            try:
                for _ in range(40):
                    conn.ping()
            except BaseException as exc:  # noqa: BLE001 - reported below
                failures.append(exc)

        threads = [threading.Thread(target=pings) for _ in range(4)]
        for thread in threads:
            thread.start()
        echoed = [conn.call_tool("echo", {"message": big}).text for _ in range(3)]
        for thread in threads:
            thread.join(60)
        assert not failures
        assert echoed == [f"Echo: {big}"] * 3
        health = conn.health
        assert health.pings_sent == health.pings_answered == 160
        assert health.invalid_frames == 0 and conn.state == "ready"
        sent = [e for e in conn.trace.frames("out") if e.kind == "request"]
        assert len({e.id for e in sent}) == len(sent)
        assert [e.method for e in sent].count("ping") == 160 and [e.method for e in sent].count("tools/call") == 3


def test_a_request_added_from_another_thread_after_the_session_failed_its_requests_is_refused():
    # The window a caller's thread could race: past its `closed` check, the session fails what
    # is in flight. The request must be refused (and so launched on the loop, which settles it),
    # never left in a table nobody will settle.
    table = InFlight(HealthCounters())
    early = table.new("ping")
    assert table.add_unless_ended(early)
    table.fail_all(ConnectionClosed("gone"))
    assert early.settled and isinstance(early.failure, ConnectionClosed)
    late = table.new("ping")
    assert not table.add_unless_ended(late) and late.id not in table


def test_frames_written_together_are_split_into_atomic_writes_of_whole_frames():
    from mcp_notebook.transports.stdio import _writes

    small, big = "a" * 1000, "b" * 5000
    writes = list(_writes([small] * 5 + [big, small], 4096))
    assert b"".join(writes) == "".join(f"{t}\n" for t in [small] * 5 + [big, small]).encode()
    assert [len(w) for w in writes] == [4004, 1001, 5001, 1001]  # four frames fit, the big one alone
    assert list(_writes([small, small], None)) == [f"{small}\n{small}\n".encode()]  # the loop: one write
