"""Reading what happened: a server's colours shown as colours in HTML and never in text,
and the health snapshot's own displays."""

from __future__ import annotations

import re

from conftest import fastmcp_server_cmd
from test_live_panels import wait_until

import mcp_notebook
from mcp_notebook.notebook import render as _render
from mcp_notebook.notebook import widgets as _widgets
from mcp_notebook.notebook.magic_session import format_health

# FastMCP logs through rich; FORCE_COLOR makes it colour a pipe too, as it does in a terminal.
COLOURED = {"FORCE_COLOR": "1", "FASTMCP_LOG_LEVEL": "INFO"}
ANSI_TRACES = re.compile(r"\x1b|\[\d+(;\d+)*m")


def test_a_coloured_stderr_shows_colours_in_html_and_none_in_text(panels):
    with mcp_notebook.connect(fastmcp_server_cmd(), era="legacy", name="coloured", env=COLOURED) as conn:
        wait_until(lambda: any("Starting MCP server" in line for line in conn.stderr), "FastMCP's start-up log line")
        assert any("\x1b[" in line for line in conn.stderr), "the peer coloured its stderr"
        panel = _widgets.health_widget(conn, show_stderr=True)
        panels.append(panel)
        view = _widgets.views_of(panel)
        wait_until(lambda: "Starting MCP server" in view.stderr.value, "the stderr tail in the widget")
        html, health = view.stderr.value, conn.health
    assert re.search(r'<span style="[^"]*color: #[0-9a-f]{6}[^"]*">', html), html
    assert "\x1b" not in html and not ANSI_TRACES.search(re.sub(r"<[^>]*>", "", html))
    assert "file://" not in html, "rich's OSC 8 links are dropped, not made links"
    for text in (format_health(health), _render.health_text(health, stderr=True)):
        assert "Starting MCP server" in text or "stderr" in text
        assert not ANSI_TRACES.search(text), text
