"""The demo server's MCP App: offered only to clients that declare the ui extension, in both
eras, over stdio and HTTP; its view is read with resources/read and its tools answer."""

from __future__ import annotations

import pytest

import mcp_notebook
from mcp_notebook.api.results import app_meta
from mcp_notebook.demo_server._ui_app import VIEW


@pytest.mark.parametrize(("era", "transport"), [("legacy", "stdio"), ("modern", "stdio"), ("legacy", "http"), ("modern", "http")])
def test_the_counters_view_is_offered_to_apps_clients_only(era: str, transport: str) -> None:
    with mcp_notebook.demo("plain", era=era, transport=transport, apps=False, load_magics=False) as plain:
        assert "counters" not in plain.list_tools().names()
        with pytest.raises(mcp_notebook.McpError, match="Resource not found"):  # it has resources, not this one
            plain.read_resource(VIEW)
    with mcp_notebook.demo("apps", era=era, transport=transport, apps=True, load_magics=False, keepalive=None) as conn:
        tools = conn.list_tools()
        assert app_meta.resource_uri(tools.get("counters") or {}) == VIEW
        assert app_meta.app_only(tools.get("counters-poll") or {})
        page = conn.read_resource(VIEW).contents[0]
        assert page["mimeType"] == app_meta.MIME and "ui/initialize" in page["text"]
        if era == "legacy":
            conn.ping()  # counted by the server: modern has no ping
        counted = conn.call_tool("counters")
        assert counted.structured["pings_received"] == (1 if era == "legacy" else 0)
        with pytest.raises(mcp_notebook.McpError, match="not found"):
            conn.read_resource("ui://demo/other")


def test_the_counters_say_whose_pings_and_the_view_keeps_24_hour_time() -> None:
    with mcp_notebook.demo("apps", apps=True, load_magics=False, keepalive=None) as conn:
        page = conn.read_resource(VIEW).contents[0]["text"]
        text = conn.call_tool("counters").text
    assert '"pings received" are the\npings this notebook\'s client sent the server' in page
    assert "toLocaleTimeString" not in page and "toTimeString().slice(0, 8)" in page  # HH:MM:SS, never 2:05:09 PM
    assert text.startswith("the demo server's counters at this call (pings received: from this client): pings received ")
