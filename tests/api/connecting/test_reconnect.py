"""`conn.reconnect()` and `connect(reload=True)`: the server restarts under the same Connection.

Against real peers: the official SDK's test server, and a small FastMCP server written into
tmp_path (its file is what the test edits). What carries on: the Connection object, its trace
(with a "reconnect" event), its health monitor (history kept, restarts counted); what is new:
the server process (one at a time). The tools' change is reported as a pin's difference.
"""

from __future__ import annotations

import asyncio
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from support.processes import descendants
from support.servers import sdk_server_cmd, write_editable_server

import mcp_notebook
from mcp_notebook import UsageError
from mcp_notebook.api.connecting import restart

WAIT = 60.0


def servers_of(marker: str) -> list[int]:
    return [pid for pid, cmd in descendants().items() if marker in cmd]


@pytest.fixture
def restarts(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every restart's result, as it returns (`done` is set at each)."""
    seen: list[Any] = []
    done = threading.Event()
    real = restart.Restarter.__call__

    def recorded(self: restart.Restarter, conn: Any, **kwargs: Any) -> Any:
        result = real(self, conn, **kwargs)
        seen.append(result)
        done.set()
        return result

    monkeypatch.setattr(restart.Restarter, "__call__", recorded)
    seen.append(done)
    return seen


def test_reconnect_restarts_the_server_under_the_same_connection() -> None:
    conn = mcp_notebook.connect(sdk_server_cmd(), name="again")
    try:
        trace, monitor = conn.trace, conn.monitor
        seen: list[dict[str, Any]] = []
        conn.on_notification("notifications/message", seen.append)
        first = servers_of("sdk_server.py")
        assert len(first) == 1
        result = conn.reconnect(why="testing")
        assert mcp_notebook.connections()["again"] is conn
        assert conn.trace is trace and conn.monitor is monitor
        assert conn.health.restarts == 1 and conn.state == "ready"
        assert [e.note for e in trace.entries() if e.direction == "event" and e.kind == "reconnect"] == ["testing"]
        now = servers_of("sdk_server.py")
        assert len(now) == 1 and now != first  # a new process, and never two
        assert "echo" in result.tools and not result.diff
        assert "reconnected (testing)" in result.summary()
        assert conn.call_tool("echo", text="x").text == "x"
        assert conn.health.restarts == 1 and any(h.state == "reconnecting" for h in monitor.history)
        from mcp_notebook.api.connection import session_of

        assert session_of(conn).notification_handlers.get("notifications/message") == seen.append
    finally:
        conn.close()


def test_reconnect_reports_the_changed_tool(tmp_path: Path) -> None:
    server = tmp_path / "edited_server.py"
    write_editable_server(server, "says hello")
    conn = mcp_notebook.connect([sys.executable, str(server)], name="edited")
    try:
        assert conn.tool("greet")["description"] == "says hello"
        write_editable_server(server, "says hello, edited")
        result = conn.reconnect()
        assert [c.name for c in result.diff.changed] == ["greet"]
        assert result.diff.changed[0].fields == ("description",)
        assert "; 1 tool, 1 changed (greet: description)" in result.summary()
        assert conn.tool("greet")["description"] == "says hello, edited"
    finally:
        conn.close()


def test_the_awaitable_reconnect() -> None:
    async def use() -> None:
        conn = await mcp_notebook.aconnect(sdk_server_cmd(), name="awaited")
        try:
            result = await conn.aio.reconnect()
            assert result.name == "awaited" and conn.health.restarts == 1
            assert await conn.aio.ping() >= 0
        finally:
            await conn.aio.close()

    asyncio.run(use())


def test_reload_restarts_once_when_the_server_file_changes(tmp_path: Path, restarts: list[Any]) -> None:
    done = restarts.pop()
    server = tmp_path / "watched_server.py"
    write_editable_server(server, "v1")
    conn = mcp_notebook.connect([sys.executable, str(server)], name="watched", reload=True)
    try:
        monitor = conn.monitor
        assert conn.tool("greet")["description"] == "v1"
        write_editable_server(server, "v2")
        assert done.wait(WAIT)
        assert len(restarts) == 1 and restarts[0].why == "reload: watched_server.py changed"
        assert [c.name for c in restarts[0].diff.changed] == ["greet"]
        assert conn.monitor is monitor and conn.health.restarts == 1
        assert conn.tool("greet")["description"] == "v2"
        assert len(servers_of("watched_server.py")) == 1
    finally:
        conn.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("mcp-reload-")]  # the watcher is reaped


def test_reload_needs_a_file_to_watch() -> None:
    with pytest.raises(UsageError, match="names no file or directory"):
        mcp_notebook.connect([sys.executable, "-c", "pass"], reload=True)
    with pytest.raises(UsageError, match="stdio server's files"):
        mcp_notebook.connect("http://127.0.0.1:9/mcp", reload=True)
