"""Bounded memory and bounded time at the API: the server-log store keeps clipped copies
within its bounds, and a call's log lines collapse into one line in its cell."""

from __future__ import annotations

import sys
from pathlib import Path

from conftest import sdk_server_cmd

import mcp_notebook
from mcp_notebook.api.feature_state import LOG_BYTES, LOG_DATA_CLIP
from mcp_notebook.api.progress import CELL_LOG_LINES

RAW = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_server.py")]


def test_huge_log_messages_are_kept_clipped_and_within_the_store_s_bytes():
    with mcp_notebook.connect(RAW, era="legacy", name="big") as conn:
        size = 1 << 20
        conn.request("tools/call", {"name": "log-flood", "arguments": {"count": 40, "size": size}}, timeout=120)
        logs = conn.logs
        assert logs[-1].data.startswith("000039")
        assert all(len(r.data) < LOG_DATA_CLIP + 100 and r.data.endswith(f"[clipped: {size:,} characters]") for r in logs)
        assert sum(len(r.data) for r in logs) <= LOG_BYTES
        assert [r["data"][:6] for r in conn.log_records(last=2)] == ["000038", "000039"]


def test_a_flood_of_log_lines_during_a_call_collapses_into_one_line_in_the_cell(shown_as, capsys):
    shown_as("ipython")
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="sdk") as conn:
        assert conn.call_tool("steps", {"count": 300, "seconds": 0}).text == "done after 300 steps"
        lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("[sdk")]
        assert len(lines) == CELL_LOG_LINES + 1
        assert lines[:2] == ["[sdk debug steps] debug 1/300", "[sdk info steps] step 1/300"]
        assert lines[-1].startswith(f"[sdk] … and {600 - CELL_LOG_LINES} more log messages")
        # Every one is in the store and the panel; those not shown in the cell count as such.
        records = conn.log_records()
        assert len(records) == 600 and records[-1]["data"] == "step 300/300"
        assert [r["in_cell"] for r in records] == [True] * CELL_LOG_LINES + [False] * (600 - CELL_LOG_LINES)
        assert conn.call_tool("steps", {"count": 1, "seconds": 0}).text == "done after 1 steps"
        assert len([line for line in capsys.readouterr().out.splitlines() if line.startswith("[sdk")]) == 2
