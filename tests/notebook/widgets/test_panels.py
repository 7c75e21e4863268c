"""Widget state without a browser: live updates from the session thread, the throttle,
escaping of server-controlled text, pause and row selection, and the text fallbacks."""

from __future__ import annotations

import dataclasses
import html
import re
import shlex
import sys
import time

import pytest
from support.servers import SERVERS_DIR, fastmcp_server_cmd, sdk_server_cmd
from support.widgets import XSS, assert_inert

import mcp_notebook
from mcp_notebook.api.connecting.settings import defaults
from mcp_notebook.notebook.magics import show as _show
from mcp_notebook.notebook.render import dashboard as _dashboard
from mcp_notebook.notebook.render import trace as _render
from mcp_notebook.notebook.widgets import health as _health_widgets
from mcp_notebook.notebook.widgets import pump as _widgets
from mcp_notebook.notebook.widgets import trace as _trace_widget
from mcp_notebook.session import health_view

RAW = [sys.executable, str(SERVERS_DIR / "raw_server.py")]


def listed(view: _trace_widget.TraceView) -> list[str]:
    """The rows the live trace offers in its "JSON of" picker (not the "pick a row" choice)."""
    return [label for label, seq in view.rows.options if seq]


def renders_between(view: _widgets.View, start: float, end: float) -> int:
    return sum(1 for t in view.render_times if start <= t <= end)


def test_the_health_widget_changes_while_the_test_thread_is_blocked(panels):
    with mcp_notebook.connect(fastmcp_server_cmd("--ping-interval-ms", "100"), era="legacy", name="pinger") as conn:
        conn.request("tools/list")
        panel = _health_widgets.health_widget(conn)
        panels.append(panel)
        view = _widgets.views_of(panel)
        before = view.main.value
        start = time.monotonic()
        time.sleep(1.5)  # the test thread is blocked: the scenario, not synchronisation
        end = time.monotonic()
        after = view.main.value
        pongs = conn.health.pongs_sent
    assert renders_between(view, start, end) >= 2, "the pump rendered while the test thread was blocked"
    assert after != before
    shown = [int(n) for n in re.findall(r"(\d+) received, (?:\d+) answered", after)]
    assert shown and 0 < shown[0] <= pongs
    assert renders_between(view, start, end) <= (end - start) * defaults.render_rate + 2


def test_a_burst_of_10000_frames_renders_under_the_throttle(sdk, panels):
    health = _health_widgets.health_widget(sdk)
    trace = _trace_widget.trace_widget(sdk, live=True)
    panels += [health, trace]
    start = time.monotonic()
    result = sdk.request("tools/call", {"name": "ping_client", "arguments": {"count": 5000}})
    end = time.monotonic()
    assert result["content"][0]["text"] == "5000"
    assert sdk.health.server_pings == sdk.health.pongs_sent == 5000  # 10,000 frames
    for panel in (health, trace):
        view = _widgets.views_of(panel)
        assert renders_between(view, start, end) <= (end - start) * defaults.render_rate + 2
    # The views did follow the burst (the pump re-renders once after it, too).
    assert _widgets.pump.ticks > 0


def test_server_controlled_text_is_escaped_in_every_widget_and_export(panels):
    with mcp_notebook.connect(RAW, era="legacy", name="raw") as conn:
        with pytest.raises(mcp_notebook.McpError) as caught:
            conn.request("tools/call", {"name": XSS})
        assert XSS in str(caught.value)
        conn.trace.event("stderr", line=XSS)
        health = dataclasses.replace(
            conn.health,
            name=XSS,
            state_reason=XSS,
            endpoint=XSS,
            closed_reason=XSS,
            server_info={"name": XSS, "version": XSS},
            stderr_tail=(XSS,),
        )
        view = _trace_widget.TraceView(conn, live=False)  # not handed to the pump: driven here
        panels.append(view.widget)
        error = conn.trace.filter(kind="error")[0]
        view.rows.value = error.seq
        view.tick(time.monotonic())
        assert "unknown scenario <script>alert(1)</script><img" in html.unescape(view.detail.value)
        health_panel = _health_widgets.health_widget(conn, show_stderr=True)
        dashboard = _health_widgets.dashboard_widget(mcp_notebook.connections)
        panels += [health_panel, dashboard]

        rendered = [
            view.detail.value,
            view.html(),
            health_view.html(health),
            _dashboard.stderr_html(health.stderr_tail),
            _dashboard.dashboard_html([health]),
            _render.trace_html(conn.trace.entries()),
            _widgets.views_of(health_panel).html(),
            _widgets.views_of(dashboard).html(),
            health_panel._repr_mimebundle_()["text/html"],
            view.widget._repr_mimebundle_()["text/html"],
        ]
    for markup in rendered:
        assert_inert(markup)
    assert "&lt;script&gt;" in view.html() and "&lt;script&gt;" in health_view.html(health)
    # Select options are drawn with textContent by ipywidgets: plain text, never markup.
    assert any("tools/call" in label for label in listed(view))


def test_a_connection_closed_under_the_dashboard_stays_in_it_closed_until_its_name_opens_again(panels):
    opened: dict[str, mcp_notebook.Connection] = {}
    dashboard = _health_widgets.dashboard_widget(lambda: opened)
    panels.append(dashboard)
    view = _widgets.views_of(dashboard)

    def rows() -> list[list[str]]:
        return [line.split()[:2] for line in view.text().splitlines()[1:]]

    try:
        for name in ("one", "two"):
            opened[name] = mcp_notebook.demo(f"dash-{name}", keepalive=None)
        assert rows() == [["dash-one", "ready"], ["dash-two", "ready"]]
        leaving = opened.pop("one")  # gone from the registry before it has closed, as close() does
        assert rows() == [["dash-one", "ready"], ["dash-two", "ready"]]
        leaving.close()
        assert rows() == [["dash-one", "closed"], ["dash-two", "ready"]]  # read again, not kept from then
        assert "closed" in view.html() and "dash-one" in view.html()
        opened["one"] = mcp_notebook.demo("dash-one", keepalive=None)  # the same name again: the open one shows
        assert rows() == [["dash-one", "ready"], ["dash-two", "ready"]]
    finally:
        for conn in opened.values():
            conn.close()
    assert rows() == [["dash-one", "closed"], ["dash-two", "closed"]]


def test_pause_freezes_the_live_table_and_resume_catches_up(sdk, panels):
    view = _trace_widget.TraceView(sdk, live=True, method="ping")  # driven here, not by the pump
    panels.append(view.widget)
    sdk.ping()
    view.tick(time.monotonic())
    shown = len(listed(view))
    assert shown == 2 and view.status.value.startswith("live")
    view.pause.value = True
    sdk.ping()
    assert view.tick(time.monotonic()) and len(listed(view)) == shown
    assert not view.tick(time.monotonic()), "nothing to render while paused"
    assert view.status.value.startswith("paused")
    view.pause.value = False
    view.tick(time.monotonic())
    assert len(listed(view)) == 4
    ping = sdk.trace.filter(method="ping", direction="out")[-1]
    view.rows.value = ping.seq
    view.tick(time.monotonic())
    assert view.detail.value.startswith("<pre>{\n  ") and "&quot;method&quot;: &quot;ping&quot;" in view.detail.value
    kinds = {label.split()[3] for label in listed(view)}
    assert kinds == {"request", "response"}
    assert all(("♡" in label) != ("♥" in label) for label in listed(view))


def test_without_a_widget_frontend_the_magics_print_text_tables(shell, capsys, tmp_path):
    command = " ".join(shlex.quote(part) for part in sdk_server_cmd())
    shell.run_line_magic("mcp", f"connect sdk --era legacy -- {command}")
    shell.run_line_magic("mcp", "ping -n 2 -i 0")
    capsys.readouterr()
    shell.run_line_magic("mcp", "health --stderr")
    shell.run_line_magic("mcp", "trace --last 4 --method ping")
    shell.run_line_magic("mcp", "trace --live --kind event --last 2")
    shell.run_line_magic("mcp", "dashboard")
    shell.run_line_magic("mcp", "keepalive --interval 5 --timeout 1 --misses 2")
    out = capsys.readouterr().out
    assert "sdk: ready" in out and "2 sent, 2 answered" in out and "stderr" in out
    assert re.search(r"→\s+request ♡\s+ping", out) and re.search(r"←\s+response ♥\s+ping\s+\S+\s+\d+\s+[\d.]+ ms", out)
    assert "needs a Jupyter widget frontend" in out and "state" in out
    assert re.search(r"^sdk\s+ready\s+legacy", out, re.MULTILINE)
    assert "a ping every 5 s, timeout 1 s, stale after 2 missed" in out
    path = tmp_path / "t.jsonl"
    shell.run_line_magic("mcp", f"trace --save {path} --method ping")
    assert "saved 4 trace entries" in capsys.readouterr().out
    assert len(mcp_notebook.load_trace(path)) == 4


def test_with_a_widget_frontend_the_magics_display_widgets_and_html(shell, capsys, monkeypatch, panels):
    shown: list = []
    monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
    monkeypatch.setattr(_show, "display", shown.append)
    command = " ".join(shlex.quote(part) for part in sdk_server_cmd())
    shell.run_line_magic("mcp", f"connect sdk --era legacy -- {command}")
    shell.run_line_magic("mcp", "health")
    shell.run_line_magic("mcp", "trace --live")
    shell.run_line_magic("mcp", "dashboard")
    shell.run_line_magic("mcp", "trace --last 3")
    health, live, dashboard, static = shown
    panels += [health, live, dashboard]
    assert all(isinstance(w, _widgets.Panel) for w in (health, live, dashboard))
    bundle = health._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "sdk" in bundle["text/html"]
    static_bundle = static._repr_mimebundle_()
    assert set(static_bundle) == {"text/html", "text/plain"} and "<details>" in static_bundle["text/html"]
    assert "Traceback" not in capsys.readouterr().err


def test_the_subscriptions_panels_columns_stand_apart():
    from mcp_notebook.api.display.panels import SubscriptionRow, subscriptions_html

    page = subscriptions_html([SubscriptionRow("demo://counter", "subscribed", 3, 1_700_000_000.0)], now=1_700_000_002.0)
    heads = re.findall(r"<th style=\"([^\"]*)\">([^<]*)</th>", page)
    assert [h for _, h in heads] == ["uri", "state", "updates", "last update"]
    assert all("padding:2px 1.2em 2px 0" in style and "white-space:nowrap" in style for style, _ in heads)
    assert page.count("padding:2px 1.2em 2px 0") == 8  # each header and each cell
