"""MCP Apps (SEP-1865) host side, without a browser: negotiation, discovery, the view cache,
and the bridge played as a front end would (`AppView.receive`, replies through `send`).

Peers: @modelcontextprotocol/server-basic-vanillajs and server-system-monitor (the ext-apps
examples, over stdio and Streamable HTTP), and tests/servers/apps_server.py (the official
Python SDK, with a view that probes the host: tools of each visibility, the flat key).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest
from support.apps import PROBE, ext_apps, ext_apps_stdio
from support.http_servers import serving
from support.servers import LOOPBACK_PRELOAD, free_port, node_executable
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.api.apps import host as app_host
from mcp_notebook.api.apps.methods import model_tools
from mcp_notebook.api.apps.view import AppView
from mcp_notebook.api.client_side import logs as server_log
from mcp_notebook.api.results import app_meta
from mcp_notebook.notebook.magics import tools as magic_tools  # noqa: F401 - registers %mcp tools
from mcp_notebook.notebook.magics.commands import dispatch

pytestmark = [pytest.mark.node]

WAIT = 20.0  # a hang guard, not a timing claim
EXT = "io.modelcontextprotocol/ui"
INIT = {"appCapabilities": {}, "appInfo": {"name": "test", "version": "1"}, "protocolVersion": "2026-01-26"}


def ext_apps_http(package: str, port: int) -> AbstractContextManager[str]:
    return serving([node_executable(), "-r", str(LOOPBACK_PRELOAD), str(ext_apps(package))], port, {"PORT": str(port)})


class FrontEnd:
    """Plays the widget: collects what the view sends, and waits for a message by condition."""

    def __init__(self, view: AppView) -> None:
        self.view = view
        self.sent: list[dict[str, Any]] = []
        self.changed = threading.Condition()
        view.send = self._take

    def _take(self, message: dict[str, Any]) -> None:
        with self.changed:
            self.sent.append(message)
            self.changed.notify_all()

    def rpc(self) -> list[dict[str, Any]]:
        return [m["message"] for m in self.sent if m["kind"] == "rpc"]

    def wait_for(self, match: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        with self.changed:
            assert self.changed.wait_for(lambda: any(match(m) for m in self.rpc()), WAIT), self.sent
            return next(m for m in self.rpc() if match(m))

    def answer(self, request_id: Any) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("id") == request_id and "method" not in m)

    def start(self) -> dict[str, Any]:
        """ui/initialize, then initialized: the host's answer to initialize."""
        self.view.receive({"jsonrpc": "2.0", "id": "init", "method": "ui/initialize", "params": INIT})
        answer = self.answer("init")
        self.view.receive({"jsonrpc": "2.0", "method": "ui/notifications/initialized"})
        return answer


def app_frames(conn: mcp_notebook.Connection) -> list[Any]:
    return [e for e in conn.trace.frames() if e.detail.get("via") == "app"]


def wire_calls(conn: mcp_notebook.Connection, tool: str) -> list[Any]:
    return [
        e
        for e in conn.trace.frames()
        if e.direction == "out"
        and e.method == "tools/call"
        and e.detail.get("via") is None
        and e.message["params"]["name"] == tool
    ]


# ----- negotiation -----


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_apps_declare_the_ui_extension_in_both_eras(era: str) -> None:
    with mcp_notebook.connect(PROBE, era=era, apps=True) as conn:
        conn.list_tools()
        first = conn.trace.frames("out")[0].message["params"]
        declared = first["capabilities"] if era == "legacy" else first["_meta"]["io.modelcontextprotocol/clientCapabilities"]
        assert declared["extensions"] == {EXT: {"mimeTypes": ["text/html;profile=mcp-app"]}}
    with mcp_notebook.connect(PROBE, era=era, apps=False) as conn:
        conn.list_tools()
        assert "extensions" not in conn._session.client.capabilities


def test_apps_are_on_by_default_only_where_views_can_be_drawn(shown_as: Callable[..., None]) -> None:
    shown_as("script")
    with mcp_notebook.connect(PROBE, era="legacy") as conn:
        assert "extensions" not in conn._session.client.capabilities
        with pytest.raises(mcp_notebook.UsageError, match="apps=True"):
            conn.app("probe")
    shown_as("kernel")
    with mcp_notebook.connect(PROBE, era="legacy") as conn:
        assert EXT in conn._session.client.capabilities["extensions"]


# ----- discovery -----


def test_listing_marks_views_and_hides_app_only_tools_unless_asked() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        tools = conn.list_tools()
        shown = model_tools(tools)
        assert "app_only" not in shown.names() and "probe" in shown.names()
        assert "1 app-only hidden" in str(shown)
        assert "app_only" in model_tools(tools, everything=True).names()
        row = next(line for line in str(tools).splitlines() if line.startswith("app_only"))
        assert row.rstrip().endswith("app only")
        assert next(line for line in str(shown).splitlines() if line.startswith("probe ")).rstrip().endswith("app")
        assert dispatch(["tools", conn.name]).names() == shown.names()  # %mcp tools
        assert dispatch(["tools", conn.name, "--all"]).names() == tools.names()


@pytest.mark.parametrize("where", ["ipython", "script"])
def test_with_apps_off_the_listing_still_marks_views_and_results_are_text_alone(
    where: str, shown_as: Callable[..., None]
) -> None:
    shown_as(where)  # terminal IPython, a plain script: Apps off by default
    with mcp_notebook.connect(PROBE, era="legacy") as conn:
        listed = dispatch(["tools", conn.name])  # %mcp tools
        lines = str(listed).splitlines()
        assert next(line for line in lines if line.startswith("probe ")).rstrip().endswith("app (off here)")
        assert not next(line for line in lines if line.startswith("model_only")).rstrip().endswith("here)")
        assert lines[-1] == (
            "1 app-only hidden (--all lists them); "
            "MCP Apps are off on this connection: results show as text (connect with apps=True for views)"
        )
        assert "app (off here)" in listed._html() and "MCP Apps are off on this connection" in listed._html()
        result = dispatch(["call", "-c", conn.name, "probe", "label=x"])  # %mcp call
        assert result.app is None and set(result._repr_mimebundle_()) == {"text/html", "text/plain"}
        assert str(result) == "probe:\nprobe ready: x"
        assert app_host.of(conn).fetches == 0 and not app_frames(conn)  # no view fetched, no bridge
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        assert "off here" not in str(dispatch(["tools", conn.name]))


def test_the_deprecated_flat_key_names_a_view_and_is_reported_once() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        assert conn.call_tool("flat").app is not None
        conn.call_tool("flat")
        warnings = [e for e in conn.trace.entries() if e.kind == "warning" and "ui/resourceUri" in (e.note or "")]
        assert len(warnings) == 1 and warnings[0].detail == {"via": "app"}
        assert conn.call_tool("echo_app", {"text": "x"}).app is None


# ----- the view and its cache -----


def test_the_view_is_read_once_and_again_after_the_server_says_it_changed() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        first = conn.app("probe")
        assert conn.app("probe").html == first.html and app_host.of(conn).fetches == 1
        assert "v1" in first.html
        conn.call_tool("touch_view")
        wait_until(lambda: conn.subscriptions.updates("ui://probe/view") == 1, "notifications/resources/updated")
        assert "v2" in conn.app("probe").html and app_host.of(conn).fetches == 2
        reads = [e for e in conn.trace.frames("out") if e.method == "resources/read"]
        assert len(reads) == 2


def test_csp_is_the_restrictive_default_and_never_loosened() -> None:
    default = app_meta.csp(None)
    for directive in (
        "default-src 'none'",
        "script-src 'self' 'unsafe-inline'",
        "img-src 'self' data:",
        "connect-src 'none'",
        "frame-src 'none'",
        "object-src 'none'",
    ):
        assert directive in default
    declared = app_meta.csp(
        {
            "connectDomains": ["https://api.example.com", "https://x.com; script-src *", "*", "'unsafe-eval'"],
            "resourceDomains": ["https://*.cdn.example"],
        }
    )
    assert "connect-src https://api.example.com;" in declared
    assert "script-src 'self' 'unsafe-inline' https://*.cdn.example;" in declared
    assert "*;" not in declared.replace("https://*.", "") and "unsafe-eval" not in declared and "x.com" not in declared
    page = app_meta.with_csp("<!doctype html><html><head><script>1</script>", default)
    assert page.startswith('<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;')


# ----- the bridge, against servers we did not write -----

EXT_APPS = {
    "basic-vanillajs": ("server-basic-vanillajs", "get-time", "get-time"),
    "system-monitor": ("server-system-monitor", "get-system-info", "poll-system-stats"),
}


@pytest.fixture(params=[(name, transport) for name in EXT_APPS for transport in ("stdio", "http")], ids=lambda p: "-".join(p))
def ext_app(request: pytest.FixtureRequest) -> Iterator[tuple[mcp_notebook.Connection, str, str]]:
    name, transport = request.param
    package, tool, app_tool = EXT_APPS[name]
    if transport == "stdio":
        with mcp_notebook.connect(ext_apps_stdio(package), name=name, apps=True) as conn:
            yield conn, tool, app_tool
    else:
        with ext_apps_http(package, free_port()) as base, mcp_notebook.connect(base + "/mcp", name=name, apps=True) as conn:
            yield conn, tool, app_tool


def test_an_ext_apps_view_initializes_gets_input_and_result_and_calls_back(
    ext_app: tuple[mcp_notebook.Connection, str, str],
) -> None:
    conn, tool, app_tool = ext_app
    view = conn.app(tool)
    front = FrontEnd(view)
    view.page = {"theme": "dark", "locale": "de-DE", "timeZone": "Europe/Berlin", "width": 640}
    assert view.wait(WAIT) is not None and view.result is not None and not view.result.is_error
    assert "<script" in view.html and view.csp == app_meta.csp(None)
    answer = front.start()["result"]
    assert answer["hostInfo"]["name"] == "mcp-notebook" and answer["protocolVersion"] == "2026-01-26"
    context = answer["hostContext"]
    assert (context["theme"], context["locale"], context["timeZone"], context["displayMode"]) == (
        "dark",
        "de-DE",
        "Europe/Berlin",
        "inline",
    )
    assert context["containerDimensions"]["width"] == 640 and context["toolInfo"]["tool"]["name"] == tool
    assert {"serverTools", "serverResources", "openLinks", "logging"} <= set(answer["hostCapabilities"])
    result = front.wait_for(lambda m: m.get("method") == "ui/notifications/tool-result")
    methods = [m.get("method") for m in front.rpc()]
    assert methods.index("ui/notifications/tool-input") < methods.index("ui/notifications/tool-result")
    assert result["params"] == view.result.raw

    view.receive({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": app_tool, "arguments": {}}})
    called = front.answer(7)
    assert "result" in called and called["result"]["content"], called
    sent = wire_calls(conn, app_tool)
    assert sent and sent[-1].message["params"]["arguments"] == {}
    bridge = [(e.direction, e.method, e.id) for e in app_frames(conn)]
    assert ("in", "tools/call", 7) in bridge and ("out", None, 7) in bridge
    view.receive({"jsonrpc": "2.0", "id": 8, "method": "ping"})
    assert front.answer(8)["result"] == {}


def test_an_app_may_not_call_a_tool_without_app_visibility() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        view = conn.app("probe")
        front = FrontEnd(view)
        front.start()
        view.receive({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "model_only"}})
        view.receive({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "no_such_tool"}})
        view.receive({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "app_only"}})
        assert front.answer(1)["error"]["code"] == -32000 and "not callable by apps" in front.answer(1)["error"]["message"]
        assert front.answer(2)["error"]["code"] == -32602
        assert front.answer(3)["result"]["content"][0]["text"] == "app only"
        assert not wire_calls(conn, "model_only") and not wire_calls(conn, "no_such_tool")


def test_messages_context_links_and_logs_are_kept_and_links_wait_for_a_click() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        view = conn.app("probe")
        front = FrontEnd(view)
        front.start()
        said = {"role": "user", "content": {"type": "text", "text": "hi"}}
        view.receive({"jsonrpc": "2.0", "id": 1, "method": "ui/message", "params": said})
        view.receive({"jsonrpc": "2.0", "id": 2, "method": "ui/update-model-context", "params": {"structuredContent": {"n": 1}}})
        view.receive({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "log"}})
        view.receive({"jsonrpc": "2.0", "id": 3, "method": "ui/open-link", "params": {"url": "https://example.com/a?b=c"}})
        view.receive({"jsonrpc": "2.0", "id": 4, "method": "ui/open-link", "params": {"url": "javascript:alert(1)"}})
        view.receive({"jsonrpc": "2.0", "id": 5, "method": "ui/no-such-thing", "params": {}})
        view.receive({"jsonrpc": "2.0", "id": 6, "method": "ui/message", "params": ["not", "an", "object"]})
        view.receive({"jsonrpc": "2.0", "method": "notifications/message", "params": "nonsense"})
        view.receive("not JSON-RPC at all")
        assert front.answer(1)["result"] == {} and front.answer(2)["result"] == {}
        assert [m["content"]["text"] for m in view.messages] == ["hi"]
        assert view.model_context is not None and view.model_context["structuredContent"] == {"n": 1}
        assert view.logs[0]["data"] == "log"
        assert front.answer(4)["error"]["code"] == -32000 and front.answer(5)["error"]["code"] == -32601
        assert front.answer(6)["error"]["code"] == -32602 and len(view.logs) == 1
        link = next(m for m in front.sent if m["kind"] == "link")
        assert link["url"] == "https://example.com/a?b=c"
        assert not any(m.get("id") == 3 for m in front.rpc())  # no answer before the click
        view.link_clicked(link["id"])
        assert front.answer(3)["result"] == {}


def test_theme_and_width_changes_reach_the_app_as_host_context_changed() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        view = conn.app("probe")
        front = FrontEnd(view)
        view.page = {"theme": "light", "width": 500}
        context = front.start()["result"]["hostContext"]
        assert (context["theme"], context["containerDimensions"]["width"]) == ("light", 500)
        view.context_changed({"theme": "dark"})
        view.context_changed({"theme": "purple"})  # not a theme: nothing sent
        view.context_changed({"width": 820})  # the cell grew (the window or the panel resized)
        view.context_changed({"width": 820, "theme": "dark"})  # nothing new: nothing sent
        view.context_changed({"width": True})
        changes = [m["params"] for m in front.rpc() if m.get("method") == "ui/notifications/host-context-changed"]
        assert changes == [{"theme": "dark"}, {"containerDimensions": {"maxHeight": 2000, "width": 820}}]


def test_an_apps_tool_call_shows_its_progress_and_log_lines_under_the_view() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        view = conn.app("probe")
        front = FrontEnd(view)
        front.start()
        view.receive(
            {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "count_app", "arguments": {"steps": 2}}}
        )
        assert front.answer(7)["result"]["content"][0]["text"] == "counted to 2"
        lines = [line["text"] for line in view.call_lines]
        assert [line for line in lines if "counted" in line] == ["count_app: [info] counted 1", "count_app: [info] counted 2"]
        assert [line.split("] ", 1)[1] for line in lines if "step" in line] == ["1/2 step 1 of 2", "2/2 step 2 of 2"]
        sent = wire_calls(conn, "count_app")[0].message["params"]
        assert sent["_meta"]["progressToken"].startswith("mcp-notebook-")  # ours: the app gave none
        assert not server_log.of(conn).unrouted  # none of them lost to the log panel


def test_closing_the_connection_tears_the_view_down() -> None:
    conn = mcp_notebook.connect(PROBE, era="legacy", apps=True)
    view = conn.app("probe")
    front = FrontEnd(view)
    front.start()
    conn.close()
    teardown = front.wait_for(lambda m: m.get("method") == "ui/resource-teardown")
    assert teardown["params"]["reason"] == "the connection closed"
    view.receive({"jsonrpc": "2.0", "id": teardown["id"], "result": {}})
    assert view.state == "torn down" and front.sent[-1] == {"kind": "remove", "reason": "the connection closed"}


def test_a_view_closed_before_its_app_started_is_removed_at_once_and_stays_removed() -> None:
    conn = mcp_notebook.connect(PROBE, era="legacy", apps=True)
    view = conn.app("probe")
    front = FrontEnd(view)
    assert view.wait(WAIT) is not None  # the result came; the frame has not loaded the app yet
    conn.close()
    assert view.state == "torn down" and front.sent == [{"kind": "remove", "reason": "the connection closed"}]
    view.restart()  # the frame is drawn after all (hello): told it is gone, not started afresh
    view.receive({"jsonrpc": "2.0", "id": "init", "method": "ui/initialize", "params": INIT})
    assert view.state == "torn down" and front.sent[1:] == [{"kind": "remove", "reason": "the connection closed"}]


def test_a_failed_call_reaches_the_view_as_tool_cancelled() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        view = conn.app("broken")
        front = FrontEnd(view)
        assert view.wait(WAIT) is None and "broken on purpose" in (view.cancelled or "")
        front.start()
        cancelled = front.wait_for(lambda m: m.get("method") == "ui/notifications/tool-cancelled")
        assert "broken on purpose" in cancelled["params"]["reason"]
        assert not any(m.get("method") == "ui/notifications/tool-result" for m in front.rpc())


def test_conn_app_checks_the_arguments_before_showing_anything() -> None:
    with mcp_notebook.connect(PROBE, era="legacy", apps=True) as conn:
        with pytest.raises(mcp_notebook.ToolArgumentError):
            conn.app("probe", {"label": 3})
        with pytest.raises(mcp_notebook.UsageError, match="no view"):
            conn.app("echo_app", {"text": "x"})
        assert app_host.of(conn).fetches == 0
