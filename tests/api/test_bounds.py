"""Bounded memory and bounded time at the API: the server-log store keeps clipped copies
within its bounds, a call's log lines collapse into one line in its cell, and a server
that cannot be reached shows in the health state."""

from __future__ import annotations

import gc
import itertools
import sys
import tracemalloc
from pathlib import Path

import pytest
from support.http_servers import sdk_http, text_of
from support.servers import sdk_server_cmd

import mcp_notebook
from mcp_notebook.api.calls.core import LOG_DATA_CLIP
from mcp_notebook.api.calls.progress import CELL_LOG_LINES
from mcp_notebook.api.client_side.logs import LOG_BYTES

RAW = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_server.py")]


def test_huge_log_messages_are_kept_clipped_and_within_the_store_s_bytes():
    with mcp_notebook.connect(RAW, era="legacy", name="big") as conn:
        size = 1 << 20
        conn.request("tools/call", {"name": "log-flood", "arguments": {"count": 40, "size": size}}, timeout=120)
        logs = conn.logs
        assert logs[-1].data.startswith("000039")
        assert all(len(r.data) < LOG_DATA_CLIP + 100 and r.data.endswith(f"[clipped: {size:,} characters]") for r in logs)
        assert sum(len(r.data) for r in logs) <= LOG_BYTES
        assert [r["data"][:6] for r in conn.logs.records(last=2)] == ["000038", "000039"]


def test_after_a_flood_of_big_messages_clear_and_close_leave_only_the_clipped_log_behind():
    tracemalloc.start()
    try:
        conn = mcp_notebook.connect(RAW, era="legacy", name="big")
        before = tracemalloc.get_traced_memory()[0]
        conn.request("tools/call", {"name": "log-flood", "arguments": {"count": 30, "size": 1 << 20}}, timeout=120)
        conn.trace.clear()
        conn.close()
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(conn.logs) == 30
    assert kept < 30 * (LOG_DATA_CLIP + 1024) + (1 << 20)  # 30 MB went through


def test_a_flood_of_log_lines_during_a_call_collapses_into_one_line_in_the_cell(shown_as, capsys):
    shown_as("ipython")
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="sdk") as conn:
        assert conn.call_tool("steps", {"count": 300, "seconds": 0}).text == "done after 300 steps"
        lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[sdk")]
        assert len(lines) == CELL_LOG_LINES + 1
        assert lines[:2] == ["[sdk debug steps] debug 1/300", "[sdk info steps] step 1/300"]
        assert lines[-1].startswith(f"[sdk] … and {600 - CELL_LOG_LINES} more log messages")
        # Every one is in the store and the panel; those not shown in the cell count as such.
        records = conn.logs.records()
        assert len(records) == 600 and records[-1]["data"] == "step 300/300"
        assert [r["in_cell"] for r in records] == [True] * CELL_LOG_LINES + [False] * (600 - CELL_LOG_LINES)
        assert conn.call_tool("steps", {"count": 1, "seconds": 0}).text == "done after 1 steps"
        assert len([line for line in capsys.readouterr().out.splitlines() if line.startswith("[sdk")]) == 2


def test_a_server_out_of_reach_makes_the_connection_degraded_then_stale_and_back(port):
    echo = {"name": "echo", "arguments": {"text": "hi"}}
    with sdk_http(port) as base:
        conn = mcp_notebook.connect(base + "/mcp", era="legacy", name="mortal")
        assert conn.state == "ready"
    try:  # the server is gone; the first to notice is its listening stream, which cannot be reopened
        assert conn.monitor.wait_state(("degraded", "stale"), timeout=20) and conn.state == "degraded"
        assert conn.health.state_reason.startswith("transport failure: cannot connect to")
        for _ in range(2):
            with pytest.raises(mcp_notebook.TransportError, match="cannot connect"):
                conn.request("tools/call", echo)
        assert conn.state == "stale" and conn.health.state_reason.startswith("3 transport failures in a row")
        with sdk_http(port):  # a new server on the same port: the session is renewed, and all is well
            assert text_of(conn.request("tools/call", echo, timeout=30)) == "hi"
            assert conn.state == "ready"
        states = [e.detail["state"] for e in conn.trace.filter(kind="state")]
        assert states[-4:] == ["degraded", "stale", "reconnecting", "ready"]
        history = [state for state, _ in itertools.groupby(h.state for h in conn.monitor.history)]
        assert history[-4:] == ["degraded", "stale", "reconnecting", "ready"]
    finally:
        conn.close()
