"""The GET listening stream against a scripted server (tests/servers/listening_server.py) that
refuses, flaps and floods it: reopened with a bounded backoff for the connection's life, shown
down meanwhile, and read no faster than the session keeps up."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import anyio
import anyio.lowlevel
from support.servers import stop, wait_for_port

import mcp_notebook
from mcp_notebook.api.connecting.settings import defaults
from mcp_notebook.runtime import get_runtime
from mcp_notebook.session import violations
from mcp_notebook.session.renewal import MAX_IN_ROW, Renewal
from mcp_notebook.session.violations import FrameChecker
from mcp_notebook.transports.backoff import CAP, FLOOR, backoff
from mcp_notebook.transports.http_streams import Streams

SERVER = [sys.executable, str(Path(__file__).parents[1] / "servers" / "listening_server.py")]
WAIT = 30  # seconds: only a broken client waits this long


@contextlib.contextmanager
def serving(port: int) -> Iterator[str]:
    process = subprocess.Popen([*SERVER, str(port)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


class Pauses:
    """Stands in for the waits between reopens: records the seconds asked for, and holds the
    listener in each wait until the test lets it go (`release`), or for good after `hold_after`."""

    def __init__(self, hold_after: int | None = None) -> None:
        self.asked: list[float] = []
        self.changed = threading.Condition()
        self._hold_after = hold_after
        self._gates: list[anyio.Event] = []

    async def __call__(self, seconds: float) -> None:
        gate = anyio.Event()
        with self.changed:
            self.asked.append(seconds)
            self._gates.append(gate)
            self.changed.notify_all()
        if self._hold_after is not None and len(self.asked) > self._hold_after:
            await anyio.sleep_forever()
        if self._hold_after is None:
            await gate.wait()

    def wait_for(self, count: int) -> list[float]:
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.asked) >= count, WAIT), f"asked only {self.asked}"
            return list(self.asked)

    def release(self) -> None:
        with self.changed:
            gate = self._gates[-1]
        get_runtime().call_soon(gate.set)


class Asked:
    """Stands in for a wait that is over at once: records the seconds asked for."""

    def __init__(self) -> None:
        self.asked: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await anyio.lowlevel.checkpoint()


def tool_text(conn: mcp_notebook.Connection, name: str) -> str:
    return conn.request("tools/call", {"name": name})["content"][0]["text"]


def test_the_wait_before_a_reopen_has_a_floor_doubles_and_has_a_cap():
    assert [backoff(0, n) for n in range(8)] == [FLOOR, 1, 2, 4, 8, 16, CAP, CAP]  # retry: 0 is floored
    assert [backoff(None, n) for n in range(3)] == [FLOOR, 1, 2]
    assert [backoff(5000, n) for n in range(4)] == [5, 10, 20, CAP]  # the server's retry, honoured
    assert backoff(3_600_000, 0) == CAP and backoff(0, 10_000) == CAP


def test_a_stream_that_says_retry_0_and_closes_at_once_is_reopened_ever_more_slowly_and_shown_down(port, monkeypatch):
    pauses = Pauses(hold_after=9)
    monkeypatch.setattr(Streams, "pause", pauses)
    with serving(port) as base, mcp_notebook.connect(base + "/flap", era="legacy", name="flap") as conn:
        assert pauses.wait_for(10) == [FLOOR, 1, 2, 4, 8, 16, CAP, CAP, CAP, CAP]
        assert tool_text(conn, "gets") == "10"  # no reopen without its wait: one GET a wait, the first included
        assert conn.state == "degraded"
        assert conn.health.listening.startswith("down since ")
        assert "closed as soon as it opened" in conn.health.listening
        assert "listening stream is down since" in conn.health.state_reason


def test_a_refused_reopen_shows_the_stream_down_and_the_next_reopen_brings_its_messages(port, monkeypatch):
    pauses = Pauses()
    monkeypatch.setattr(Streams, "pause", pauses)
    arrived = threading.Event()
    with serving(port) as base, mcp_notebook.connect(base + "/refuse-once", era="legacy", name="refused") as conn:
        conn.on_notification("notifications/message", lambda p: arrived.set() if p.get("data") == "after the reopen" else None)
        assert conn.state == "ready" and conn.health.listening == "open"
        assert tool_text(conn, "drop") == "dropped"  # the server ends the stream
        pauses.wait_for(1)
        pauses.release()  # the reopen the server refuses (503)
        pauses.wait_for(2)
        health = conn.health
        assert health.state == "degraded" and health.listening.startswith("down since ")
        assert health.listening.endswith("(1 reopen attempt): HTTP 503")
        assert conn.ping() > 0  # the server still answers: only its way to us is down
        assert conn.state == "degraded"
        pauses.release()
        assert arrived.wait(WAIT), "the notification sent on the reopened stream never arrived"
        assert conn.monitor.wait_state("ready", WAIT) and conn.health.listening == "open"
        states = [e.detail["state"] for e in conn.trace.filter(kind="state")]
        assert states[-2:] == ["degraded", "ready"]


def test_a_get_the_server_never_answers_is_a_failed_reopen_after_the_read_timeout(port, monkeypatch):
    """/mute takes each GET and sends no status line: each wait for it ends after the read timeout
    and counts as a failed (re)open, so the stream is shown down and reopened with the backoff."""
    pauses = Pauses()
    monkeypatch.setattr(Streams, "pause", pauses)
    monkeypatch.setattr(defaults, "http_read_timeout", 0.5)
    with serving(port) as base, mcp_notebook.connect(base + "/mute", era="legacy", name="mute") as conn:
        assert pauses.wait_for(1) == [FLOOR]
        health = conn.health
        assert health.state == "degraded" and health.listening.startswith("down since ")
        why = f"{base}/mute sent nothing for 0.5 s in answer to a GET for its event stream; gave up on it"
        assert health.listening.endswith(
            f"(1 reopen attempt): {why} (McpNotebook.http_read_timeout sets how long a server may pause)"
        )
        pauses.release()  # the reopen, given up on in the same way
        assert pauses.wait_for(2) == [FLOOR, 1]
        assert conn.health.listening.startswith("down since ") and "(2 reopen attempts)" in conn.health.listening
        assert conn.ping() > 0 and conn.state == "degraded"  # the server still answers POSTs; only its way to us is down
        assert tool_text(conn, "gets") == "2"


def test_a_flood_on_the_listening_stream_waits_on_the_wire_while_the_checker_is_behind(port, monkeypatch):
    """The frame checker is held: the reader takes no more than its backlog holds and waits;
    our own pings still go and come back; once the checker goes on, every frame arrives."""
    held, waiting = threading.Event(), threading.Event()
    check, when_room = FrameChecker._check, FrameChecker.when_room

    def held_check(self: FrameChecker, seen: object) -> object:
        held.wait(WAIT)
        return check(self, seen)  # type: ignore[arg-type]

    def noted_when_room(self: FrameChecker, callback: object) -> None:
        if self.behind():  # the reader is made to wait (held, the checker never catches up)
            waiting.set()
        when_room(self, callback)  # type: ignore[arg-type]

    count = 5 * violations.BACKLOG
    monkeypatch.setattr(FrameChecker, "_check", held_check)  # from the start: the flood begins as the stream opens
    monkeypatch.setattr(FrameChecker, "when_room", noted_when_room)
    with serving(port) as base, mcp_notebook.connect(base + f"/flood?count={count}", era="legacy", name="flood") as conn:
        try:
            assert waiting.wait(WAIT), "the reader never waited for the checker"
            checker = conn._session.checker
            assert checker.behind() and checker._submitted - checker._checked <= violations.BACKLOG + 1
            frames = checker._submitted
            assert conn.ping() > 0  # the loop is free: only the flooded stream waits
            assert checker._submitted == frames + 1  # our ping's answer; nothing more of the flood was read
        finally:
            held.set()
        assert checker.settled(WAIT)
        assert tool_text(conn, "flood-answered") == f"{count} sent, ping answered"  # the flood's last frame
        assert checker._submitted >= count + 1 and conn.health.pongs_sent == 1 and conn.state == "ready"


def test_a_server_that_forgets_every_new_session_is_renewed_ever_more_slowly_then_given_up(port, monkeypatch):
    """Each session's listening stream closes at once and its reopen meets a 404: the first
    renewal goes at once, each next one (nothing came between) waits longer, and the eighth in
    a row is the last: the connection ends saying why."""
    renewals = Asked()
    monkeypatch.setattr(Renewal, "pause", renewals)
    monkeypatch.setattr(Streams, "pause", Asked())  # the reopens between: at once
    with serving(port) as base:
        conn = mcp_notebook.connect(base + "/forget", era="legacy", name="forget")
        try:
            assert conn.monitor.wait_state("closed", WAIT), f"still {conn.state}: {conn.health.state_reason}"
            health = conn.health
        finally:
            conn.close()
    assert renewals.asked == [FLOOR, 1, 2, 4, 8, 16, CAP]  # the first renewal waited for nothing
    assert health.session_recoveries == MAX_IN_ROW
    assert health.closed_reason == (
        "the server forgot 8 new sessions in a row before it sent anything in them (HTTP 404); gave up renewing"
    )
    reasons = [e.note for e in conn.trace.filter(kind="state") if e.detail["state"] == "reconnecting"]
    assert reasons[:2] == [
        "HTTP 404: the server no longer knows our session",
        "HTTP 404: the server no longer knows our session; renewing in 0.5 s (1 renewal in a row brought nothing)",
    ]
