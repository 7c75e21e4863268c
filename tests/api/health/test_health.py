"""The health monitor with real peers: pongs under a blocked main thread, keepalive, stale and back."""

from __future__ import annotations

import os
import signal
import time

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.servers import fastmcp_server_cmd

import mcp_notebook
from mcp_notebook.api.connecting.settings import defaults
from mcp_notebook.runtime import get_runtime
from mcp_notebook.session.health import SPARK_POINTS


def on_session_thread(conn: mcp_notebook.Connection):
    """A health snapshot and the trace, taken between two frames (on the session thread)."""
    return get_runtime().call_sync(lambda: (conn.health, conn.trace.entries(), conn.trace.pairs()))


def test_every_server_ping_is_answered_while_the_main_thread_is_blocked_for_3_s():
    with mcp_notebook.connect(fastmcp_server_cmd("--ping-interval-ms", "100"), era="legacy", name="pinger") as conn:
        conn.request("tools/list")  # FastMCP's PingMiddleware is running once a message went through
        before = conn.health.server_pings
        blocked_from = time.monotonic()
        time.sleep(3)  # the main thread is blocked: the scenario, not synchronisation
        blocked_until = time.monotonic()
        health, entries, pairs = on_session_thread(conn)

    assert health.server_pings - before >= 5, "the server should have pinged several times in 3 s"
    assert health.pongs_sent == health.server_pings and health.pong_failures == 0
    assert len(health.pong_latencies) == min(health.pongs_sent, SPARK_POINTS)
    assert health.last_pong_latency is not None and health.pong_latency_max is not None
    assert all(0 <= latency < 1 for latency in health.pong_latencies)

    pings = [e for e in entries if e.direction == "in" and e.method == "ping"]
    pongs = {req.seq: (seq, latency) for seq, (req, latency) in pairs.items() if req.method == "ping" and req.direction == "in"}
    assert len(pings) == health.server_pings
    assert all(ping.seq in pongs for ping in pings), "every server ping is paired with our pong"
    by_seq = {e.seq: e for e in entries}
    for ping in pings:
        pong = by_seq[pongs[ping.seq][0]]
        assert pong.direction == "out" and pong.note == "pong" and pong.id == ping.id
    during = [p for p in pings if blocked_from <= by_seq[pongs[p.seq][0]].monotonic <= blocked_until]
    assert len(during) >= 5, "pongs were written while the main thread was blocked"


def test_keepalive_goes_stale_against_a_stopped_server_and_ready_after_it_resumes(sdk):
    sdk.keepalive(interval=0.05, timeout=0.2, misses=3)
    pid = sdk._session.transport.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        assert sdk.monitor.wait_state("stale", timeout=60)
        stale = sdk.health
    finally:
        os.kill(pid, signal.SIGCONT)
    assert sdk.monitor.wait_state("ready", timeout=60)
    assert stale.state == "stale" and stale.keepalive_misses == 3 and stale.ping_timeouts >= 3
    assert "3 keepalive pings unanswered" in stale.state_reason
    transitions = [(e.detail["state"], e.note) for e in sdk.trace.filter(kind="state")]
    states = [state for state, _ in transitions]
    assert states[:4] == ["ready", "degraded", "stale", "ready"]
    assert transitions[3][1] == "keepalive ping answered after 3 missed"
    health = sdk.health
    assert health.state == "ready" and health.keepalive_misses == 0 and health.keepalive_pings >= 4
    assert [h.state for h in sdk.monitor.history if h.state != "ready"][:2] == ["degraded", "stale"]
    assert sdk.ping() > 0


def test_keepalive_waits_while_a_request_is_in_flight(sdk):
    sdk.keepalive(interval=0.02, timeout=5, misses=3)
    sdk.request("tools/call", {"name": "slow", "arguments": {"seconds": 1}})
    sdk.keepalive(enabled=False)
    frames = sdk.trace.frames("out")
    call = next(e for e in frames if e.method == "tools/call")
    reply = next(e for e in sdk.trace.frames("in") if e.id == call.id)
    pings_meanwhile = [e for e in frames if e.method == "ping" and call.monotonic < e.monotonic < reply.monotonic]
    assert pings_meanwhile == []
    assert sdk.health.keepalive_skips > 0


def test_keepalive_settings_follow_the_defaults_unless_set_per_connection(sdk):
    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    old = (defaults.keepalive_interval, defaults.keepalive_misses)
    try:
        shell.run_line_magic("config", "McpNotebook.keepalive_interval = 7.5")
        shell.run_line_magic("config", "McpNotebook.keepalive_misses = 5")
        assert (sdk.monitor.settings.interval, sdk.monitor.settings.misses) == (7.5, 5)
        sdk.keepalive(interval=2)
        assert (sdk.monitor.settings.interval, sdk.monitor.settings.misses) == (2, 5)
        assert sdk.keepalive(reset=True).interval == 7.5
        assert sdk.keepalive(enabled=False).enabled is False and sdk.health.keepalive is False
        with pytest.raises(ValueError):
            sdk.keepalive(interval=0)
    finally:
        defaults.keepalive_interval, defaults.keepalive_misses = old
        shell.run_line_magic("unload_ext", "mcp_notebook")
        InteractiveShell.clear_instance()


def test_health_is_an_immutable_snapshot_with_figures_and_history(sdk):
    rtts = [sdk.ping() for _ in range(5)]
    health = sdk.health
    with pytest.raises(AttributeError):
        health.state = "x"  # type: ignore[misc]
    assert health.rtt_history[-5:] == tuple(rtts)
    assert health.rtt_min == min(rtts) and health.rtt_median == sorted(rtts)[2] and health.rtt_p95 == max(rtts)
    assert health.pings_sent == health.pings_answered == 5 and health.ping_failures == 0
    assert health.since_frame_in is not None and health.since_frame_in >= 0
    assert health.keepalive and health.keepalive_interval == defaults.keepalive_interval
    assert health.trace_entries == len(sdk.trace)
    assert sdk.monitor.history and sdk.monitor.history[0].state == "ready"
    sdk.close()
    assert sdk.health.state == "closed" and sdk.health.exit_code is not None
