"""`%mcp health` shows a connection's health as `conn.health` shows it: one rendering of a health
snapshot (`session.health_view`), in a terminal and as a notebook's snapshot alike."""

from __future__ import annotations

import re

from IPython.lib.pretty import pretty

import mcp_notebook
from mcp_notebook.notebook.magics import show as _show
from mcp_notebook.notebook.widgets import pump as _widgets


def steady(shown: str) -> str:
    """The rendering without its ages ("received 12 ms ago"): two snapshots a moment apart differ there."""
    return re.sub(r"\d+(\.\d+)? m?s ago", "N ago", shown)


def test_mcp_health_prints_what_conn_health_shows(shell, capsys):
    with mcp_notebook.demo("same", load_magics=False, keepalive=None) as conn:
        conn.ping()
        capsys.readouterr()
        shell.run_line_magic("mcp", "health same")
        printed = capsys.readouterr().out
        assert steady(printed.rstrip("\n")) == steady(pretty(conn.health))
    assert "round trip" in printed and "pong latency" in printed  # the rows the notebook's own rendering had


def test_mcp_health_snapshot_displays_what_conn_health_shows(shell, monkeypatch):
    displayed: list = []
    monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
    monkeypatch.setattr(_show, "display", displayed.append)
    with mcp_notebook.demo("same", load_magics=False, keepalive=None) as conn:
        conn.ping()
        shell.run_line_magic("mcp", "health same --snapshot")
        [shown] = displayed
        bundle = shown._repr_mimebundle_()
        assert steady(bundle["text/html"]) == steady(conn.health._repr_html_())
        assert steady(bundle["text/plain"]) == steady(pretty(conn.health))
