"""`%mcp reconnect NAME` and `%mcp connect ... --reload`: the server restarts under the same
connection, and the live health widget made before it follows (the same monitor), showing the
restart; the magic's value displays the summary of the tools' change."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from IPython.lib.pretty import pretty
from support.servers import write_editable_server

import mcp_notebook
from mcp_notebook.api.connecting import restart
from mcp_notebook.notebook.widgets.health import HealthView


def test_reconnect_magic_says_what_changed(shell: Any, tmp_path: Path) -> None:
    server = tmp_path / "magic_server.py"
    write_editable_server(server, "one")
    shell.run_line_magic("mcp", f"connect magic -- {sys.executable} {server}")
    conn = mcp_notebook.connections()["magic"]
    try:
        view = HealthView(conn)
        conn.tool("greet")
        write_editable_server(server, "two")
        result = shell.run_line_magic("mcp", "reconnect magic")
        assert "magic: reconnected (%mcp reconnect)" in pretty(result)
        assert "1 changed (greet: description)" in pretty(result)
        assert mcp_notebook.connections()["magic"] is conn and view.connection is conn
        assert "1 server restart" in view.text()
    finally:
        conn.close()


def test_connect_reload_restarts_on_an_edit_and_the_widget_follows(
    shell: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = threading.Event()
    seen: list[Any] = []
    real = restart.Restarter.__call__

    def recorded(self: restart.Restarter, conn: Any, **kwargs: Any) -> Any:
        seen.append(real(self, conn, **kwargs))
        done.set()
        return seen[-1]

    monkeypatch.setattr(restart.Restarter, "__call__", recorded)
    server = tmp_path / "reload_server.py"
    write_editable_server(server, "one")
    shell.run_line_magic("mcp", f"connect reloading --reload -- {sys.executable} {server}")
    conn = mcp_notebook.connections()["reloading"]
    try:
        view, monitor = HealthView(conn), conn.monitor
        conn.tool("greet")
        write_editable_server(server, "two")
        assert done.wait(60)
        [result] = seen
        assert result.why == "reload: reload_server.py changed" and [c.name for c in result.diff.changed] == ["greet"]
        assert conn.monitor is monitor and "1 server restart" in view.text()
        assert conn.tool("greet")["description"] == "two"
    finally:
        conn.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("mcp-reload-")]
