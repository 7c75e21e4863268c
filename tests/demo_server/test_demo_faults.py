"""Each demo-server fault switch gives the health state and the trace the notebooks describe.

The connections come from `mcp_notebook.demo()`, as in the notebooks; waits are on events
(state changes, replies), never on fixed sleeps.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

import mcp_notebook
from mcp_notebook import ConnectionClosed, RequestTimeout
from mcp_notebook.session.renewal import Renewal


@pytest.fixture
def opened() -> Iterator[list[mcp_notebook.Connection]]:
    conns: list[mcp_notebook.Connection] = []
    yield conns
    for conn in conns:
        conn.close()


def demo(opened: list[mcp_notebook.Connection], name: str, **options: Any) -> mcp_notebook.Connection:
    conn = mcp_notebook.demo(name, load_magics=False, **options)
    opened.append(conn)
    return conn


def faults(conn: mcp_notebook.Connection, **switches: Any) -> dict[str, Any]:
    return conn.request("tools/call", {"name": "faults", "arguments": switches})


def unanswered(conn: mcp_notebook.Connection, method: str) -> list[Any]:
    answered = {request.seq for request, _ in conn.trace.pairs().values()}
    return [e for e in conn.trace.filter(method=method, direction="out", kind="request") if e.seq not in answered]


def states(conn: mcp_notebook.Connection) -> list[str]:
    return [e.detail["state"] for e in conn.trace.filter(direction="event", kind="state")]


def test_ignore_pings_goes_degraded_then_stale_with_unanswered_pings(opened):
    conn = demo(opened, "mute", ignore_pings=True, keepalive=None)
    conn.keepalive(interval=0.1, timeout=0.2, misses=3)
    assert conn.monitor.wait_state("stale", timeout=15), conn.health
    health = conn.health
    assert health.state == "stale" and health.ping_timeouts >= 3 and health.keepalive_misses >= 3
    assert states(conn)[-2:] == ["degraded", "stale"]
    assert len(unanswered(conn, "ping")) >= 3
    assert "not answering ping" in "\n".join(conn.stderr)  # the server's side of it


def test_pong_delay_degrades_and_lowering_it_brings_ready_back(opened):
    conn = demo(opened, "slow", pong_delay_ms=200, keepalive=None)
    assert conn.ping(timeout=5) >= 0.2  # the delay shows in the round trip
    conn.keepalive(interval=0.1, timeout=0.05, misses=100)
    assert conn.monitor.wait_state("degraded", timeout=15)
    conn.keepalive(enabled=False)
    faults(conn, pong_delay_ms=0)
    conn.keepalive(enabled=True, interval=0.1, timeout=2.0)
    assert conn.monitor.wait_state("ready", timeout=15)
    assert states(conn)[-2:] == ["degraded", "ready"]


def test_server_pings_are_answered_while_the_caller_blocks(opened):
    conn = demo(opened, "pinger", ping_interval=0.05, keepalive=None)
    arrived = threading.Event()
    seen: list[int] = []

    def count(params: Any) -> dict[str, Any]:
        seen.append(1)
        if len(seen) >= 5:
            arrived.set()
        return {}

    conn.on_request("ping", count)
    assert arrived.wait(timeout=15)
    conn.remove_handler("ping")
    health = conn.health
    assert health.server_pings >= 5 and health.pong_failures == 0
    pongs = conn.trace.filter(method="ping", direction="out", kind="response")
    assert len(pongs) >= 4
    assert all(conn.trace.pairs()[p.seq][0].direction == "in" for p in pongs)


def test_drop_percent_leaves_requests_unanswered(opened):
    conn = demo(opened, "lossy", drop_percent=100, keepalive=None)
    with pytest.raises(RequestTimeout):
        conn.request("tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}, timeout=0.5)
    assert len(unanswered(conn, "tools/call")) == 1
    assert conn.state == "ready"  # a dropped reply alone is not a dead connection


def test_crash_closes_the_connection_with_exit_code_3(opened):
    conn = demo(opened, "crashy", crash=True, keepalive=None)
    with pytest.raises(ConnectionClosed):
        conn.request("tools/call", {"name": "echo", "arguments": {"text": "hi"}}, timeout=10)
    assert conn.wait_closed(timeout=10)
    health = conn.health
    assert health.state == "closed" and health.exit_code == mcp_notebook.demo_server.CRASH_EXIT_CODE == 3
    assert [e.detail.get("code") for e in conn.trace.filter(direction="event", kind="exit")] == [3]
    assert health.stderr_tail


def test_malformed_frame_is_counted_and_the_call_still_answers(opened):
    conn = demo(opened, "garbled", keepalive=None)
    result = faults(conn, malformed=True)
    assert "faults" in result["content"][0]["text"]
    assert conn.health.invalid_frames == 1
    assert len(conn.trace.filter(kind="invalid")) == 1
    assert conn.state == "ready"


def test_flood_sends_log_notifications_before_the_reply(opened):
    conn = demo(opened, "chatty", keepalive=None)
    faults(conn, flood=25)
    reply = conn.trace.filter(method="tools/call", direction="in", kind="response")[-1]
    logs = conn.trace.filter(method="notifications/message", direction="in", until=reply.monotonic)
    assert len(logs) == 25


def test_expire_session_over_http_is_recovered_transparently(opened):
    conn = demo(opened, "web", transport="http", keepalive=None)
    first = conn._session.transport.session_id
    faults(conn, expire_session=True)
    result = conn.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})
    assert result["content"][0]["text"] == "5"
    assert conn.health.session_recoveries == 1 and conn.state == "ready"
    assert conn._session.transport.session_id not in (None, first)
    statuses = [e.detail["status"] for e in conn.trace.filter(direction="event", kind="http")]
    assert 404 in statuses
    assert states(conn)[-2:] == ["reconnecting", "ready"]
    assert len(conn.trace.filter(direction="event", kind="session-reset")) == 1


def test_renewals_with_the_server_speaking_between_them_go_at_once(opened, monkeypatch):
    """Only renewals in a row with nothing from the server between them wait (session/renewal.py)."""
    waits: list[float] = []

    async def pause(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(Renewal, "pause", staticmethod(pause))
    conn = demo(opened, "web", transport="http", keepalive=None)
    for _ in range(3):
        faults(conn, expire_session=True)
        assert conn.request("tools/call", {"name": "add", "arguments": {"a": 2, "b": 3}})["content"][0]["text"] == "5"
    assert conn.health.session_recoveries == 3 and conn.state == "ready"
    assert waits == []


def test_expire_session_on_stdio_has_nothing_to_expire(opened):
    conn = demo(opened, "local", keepalive=None)
    text = faults(conn, expire_session=True)["content"][0]["text"]
    assert "expire_session" in text
    conn.request("tools/list")
    assert conn.health.session_recoveries == 0


def test_http_demo_server_stops_with_its_connection(opened):
    conn = mcp_notebook.demo("web2", transport="http", load_magics=False, keepalive=None)
    process = mcp_notebook.api.connecting.demo.http_server("web2")
    assert process is not None and process.poll() is None
    conn.close()
    assert process.wait(timeout=10) == 0
    assert mcp_notebook.api.connecting.demo.http_server("web2") is None


def test_both_eras_on_one_server(opened):
    old = demo(opened, "old", era="both", client_era="legacy", keepalive=None)
    new = demo(opened, "new", era="both", keepalive=None)
    assert (old.era, new.era) == ("legacy", "modern")
    assert old.request("ping") == {}
    new.ping()  # a liveness probe: a fresh server/discover, no ping (2026-07-28 has none)
    assert new.trace.filter(method="ping", direction="out") == []
    assert len(new.trace.filter(method="server/discover", direction="out", kind="request")) == 2
