"""Live panels of a connection's server log and resource subscriptions, against
server-everything over stdio: they follow the server while no cell runs, re-read a
subscribed resource off the frame path, stop at unsubscribe and say so, keep what the
server wrote inert, fall back to text, and the `%mcp logs` / `subscribe` / `unsubscribe`
magics with and without a widget frontend."""

from __future__ import annotations

import json
import re

import pytest
from IPython.core.error import UsageError as IPythonUsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.lib.pretty import pretty
from support.servers import server_everything_cmd
from support.waiting import wait_until
from support.widgets import XSS, assert_inert

import mcp_notebook
from mcp_notebook.api.display.panels import clock, logs_snapshot
from mcp_notebook.base.text import esc
from mcp_notebook.notebook.magics import show as _show
from mcp_notebook.notebook.widgets import pump as _widgets
from mcp_notebook.notebook.widgets.live import LivePanel

pytestmark = [pytest.mark.node]

URI = "demo://resource/dynamic/text/1"
# server-everything sends its simulated log messages and resource updates every 5 s
WAIT = 20.0


def log_row(markup: str, record: dict) -> str:
    """The table row that shows `record` (by its time and text)."""
    rows = [row for row in markup.split("<tr") if esc(clock(record["wall"])) in row and esc(record["data"]) in row]
    assert len(rows) == 1, markup
    return rows[0]


def shown_updates(markup: str, uri: str) -> int | None:
    match = re.search(re.escape(esc(uri)) + r"</code></td><td[^>]*><span[^>]*>subscribed</span></td><td[^>]*>(\d+)</td>", markup)
    return int(match.group(1)) if match else None


def reads_sent(conn) -> int:
    return len([e for e in conn.trace.frames("out") if e.method == "resources/read"])


def test_the_panels_follow_the_server_while_no_cell_runs(conn, panels):
    conn.set_log_level("debug")
    logs, subs = conn.logs.panel(), conn.subscriptions.panel()
    panels += [logs, subs]
    log_view, sub_view = _widgets.views_of(logs), _widgets.views_of(subs)
    conn.subscribe(URI)  # server-everything acknowledges with a log message while this call waits
    ack = conn.logs.records()[-1]
    assert "Received Subscribe Resource request" in ack["data"] and ack["in_cell"]
    conn.call_tool("toggle-subscriber-updates")  # one update at once, then one every 5 s
    conn.call_tool("toggle-simulated-logging")  # one message at once, then one every 5 s
    try:
        # No call of ours waits from here on: what arrives now is no cell's.
        wait_until(
            lambda: conn.subscriptions.updates(URI) >= 2 and any(not r["in_cell"] for r in conn.logs.records()),
            "a second resource update and a log message no cell was waiting for",
        )
        late = next(r for r in conn.logs.records() if not r["in_cell"])
        wait_until(
            lambda: esc(late["data"]) in log_view.table.value and (shown_updates(sub_view.table.value, URI) or 0) >= 2,
            "the pump to render both panels",
        )
    finally:
        conn.call_tool("toggle-simulated-logging")
        conn.call_tool("toggle-subscriber-updates")
    assert "↳ cell" in log_row(log_view.table.value, ack) and "↳ cell" not in log_row(log_view.table.value, late)
    assert log_view.status.value.startswith("live:") and "newest at the bottom" in log_view.status.value
    assert sub_view.status.value.startswith("live: 1 subscription,")
    # the newest row is the last one
    assert log_view.table.value.rindex(esc(clock(conn.logs.records()[-1]["wall"]))) > log_view.table.value.rindex(
        esc(clock(ack["wall"]))
    )
    records = conn.subscriptions.records()
    assert records[0]["uri"] == URI and records[0]["subscribed"] and records[0]["updates"] == conn.subscriptions.updates(URI)

    conn.unsubscribe(URI)
    wait_until(lambda: "unsubscribed</span>" in sub_view.table.value, "the panel to show the unsubscription")
    assert sub_view.status.value.startswith("live: 0 subscriptions") and not sub_view.closed
    assert conn.subscriptions.records()[0]["subscribed"] is False


def test_a_subscription_view_re_reads_on_each_update_and_stops_at_unsubscribe(conn, panels):
    conn.subscribe(URI)
    panel = conn.subscriptions.panel(URI, read=True)
    panels.append(panel)
    view = _widgets.views_of(panel)
    wait_until(lambda: "Resource 1: This is a plaintext resource" in view.table.value, "the first read")
    assert reads_sent(conn) == 1 and shown_updates(view.table.value, URI) == 0
    conn.call_tool("toggle-subscriber-updates")  # one update at once
    try:
        wait_until(
            lambda: view.reading[URI].reads == 2 and shown_updates(view.table.value, URI) == 1, "a re-read after the update"
        )
    finally:
        conn.call_tool("toggle-subscriber-updates")
    # The reads were requests of their own, answered while nothing of ours waited on them.
    answered = {e.id for e in conn.trace.frames("in") if e.kind == "response"}
    reads = [e for e in conn.trace.frames("out") if e.method == "resources/read"]
    assert len(reads) == view.reading[URI].reads and all(e.id in answered for e in reads)
    assert view.status.value == f"live: subscribed, {conn.subscriptions.updates(URI)} update" + (
        "s" if conn.subscriptions.updates(URI) != 1 else ""
    )

    conn.unsubscribe(URI)
    wait_until(lambda: view.closed and view not in _widgets.pump.views, "the view to stop")
    assert view.status.value.startswith("unsubscribed at ") and view.status.value.endswith("no longer updated")
    assert "unsubscribed</span>" in view.table.value and "unsubscribed at" in repr(panel)
    frozen, renders, updates = view.table.value, view.renders, conn.subscriptions.updates(URI)
    conn.subscribe(URI)
    conn.call_tool("toggle-subscriber-updates")  # another update at once: the stopped view ignores it
    try:
        wait_until(lambda: conn.subscriptions.updates(URI) > updates, "another update")
    finally:
        conn.call_tool("toggle-subscriber-updates")
    assert view.table.value == frozen and view.renders == renders


def test_server_text_stays_inert_in_both_panels_and_their_exports(conn, panels):
    hostile = "demo://x/" + XSS + "-" * 400  # long: its log line unfolds from a <details>
    conn.subscribe(hostile)  # server-everything echoes the URI in its acknowledging log message
    logs, subs = conn.logs.panel(), conn.subscriptions.panel(read=True)
    panels += [logs, subs]
    log_view, sub_view = _widgets.views_of(logs), _widgets.views_of(subs)
    wait_until(
        lambda: hostile in sub_view.reading and sub_view.reading[hostile].reads == 1 and "read failed" in sub_view.table.value,
        "the read of the hostile URI to be shown",
    )
    assert "&lt;script&gt;" in log_view.table.value and "<details>" in log_view.table.value
    rendered = [
        log_view.table.value,
        log_view.html(),
        logs._repr_mimebundle_()["text/html"],
        logs_snapshot(conn)[1],
        sub_view.table.value,
        sub_view.html(),
        subs._repr_mimebundle_()["text/html"],
    ]
    for markup in rendered:
        assert_inert(markup)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in markup
    assert XSS[:40] in repr(logs)  # text is text: nothing to escape


def test_the_subscriptions_of_a_closed_connection_show_as_ended(panels):
    conn = mcp_notebook.demo("subs-end", keepalive=None)
    try:
        conn.subscribe("demo://counter")
        panel = conn.subscriptions.panel()
        panels.append(panel)
        assert re.search(r"^demo://counter\s+subscribed\s", repr(panel), re.MULTILINE), repr(panel)
    finally:
        conn.close()
    assert re.search(r"^demo://counter\s+ended\s", repr(panel), re.MULTILINE), repr(panel)
    assert ">subscribed</span>" not in _widgets.views_of(panel).html()


def test_text_fallbacks_and_records(conn, panels):
    conn.subscribe(URI)
    logs, subs = conn.logs.panel(level="info"), conn.subscriptions.panel()
    panels += [logs, subs]
    assert isinstance(logs, LivePanel) and isinstance(subs, LivePanel)
    for text in (repr(logs), pretty(logs), logs._repr_mimebundle_()["text/plain"]):
        assert text.startswith("everything: live: 1 of 1 server log messages shown")
        assert re.search(r"^time\s+level\s+logger\s+message\s+where$", text, re.MULTILINE)
        assert re.search(
            r"^\d\d:\d\d:\d\d\.\d{3}\s+info\s+Received Subscribe Resource request for URI: \S+\s+cell$", text, re.MULTILINE
        )
    for text in (repr(subs), pretty(subs), subs._repr_mimebundle_()["text/plain"]):
        assert re.search(rf"^{re.escape(URI)}\s+subscribed\s+0\s+-$", text, re.MULTILINE)
    assert "none of the 1 server log messages match" in repr(conn.logs.panel(level="error", unrouted_only=True))
    panels.append(conn.logs.panel())  # (closed by the fixture)
    assert [r["level"] for r in conn.logs.records(level="info")] == ["info"] and conn.logs.records(unrouted_only=True) == []
    with pytest.raises(mcp_notebook.UsageError, match="unknown log level 'loud'"):
        conn.logs.panel(level="loud")


@pytest.fixture
def panels_shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    mcp_notebook.connect(server_everything_cmd(), name="ev", era="legacy")
    yield ip
    ip.run_line_magic("unload_ext", "mcp_notebook")
    InteractiveShell.clear_instance()


def test_the_magics_print_text_without_a_widget_frontend(panels_shell, capsys, tmp_path):
    panels_shell.run_line_magic("mcp", f"subscribe {URI}")
    assert f"subscribed to {URI} on 'ev'" in capsys.readouterr().out
    panels_shell.run_line_magic("mcp", "subscribe --read")
    out = capsys.readouterr().out
    assert re.search(rf"^{re.escape(URI)}\s+subscribed\s+0\s+-$", out, re.MULTILINE)
    panels_shell.run_line_magic("mcp", "logs")
    assert re.search(r"info\s+Received Subscribe Resource request.*\bcell$", capsys.readouterr().out, re.MULTILINE)
    panels_shell.run_line_magic("mcp", "logs --unrouted --live")
    out = capsys.readouterr().out
    assert "needs a Jupyter widget frontend" in out and "none of the 1 server log messages match" in out
    path = tmp_path / "logs.jsonl"
    panels_shell.run_line_magic("mcp", f"logs --save {path}")
    assert f"saved 1 log message to {path}" in capsys.readouterr().out
    saved = [json.loads(line) for line in path.read_text().splitlines()]
    assert saved[0]["level"] == "info" and saved[0]["in_cell"] is True and URI in saved[0]["data"]
    panels_shell.run_line_magic("mcp", f"unsubscribe {URI}")
    assert f"unsubscribed from {URI} on 'ev' after 0 updates" in capsys.readouterr().out
    for line, words in [
        ("logs --level loud", "invalid choice"),
        ("unsubscribe", "required: uri"),
        ("logs --save /nonexistent/dir/x.jsonl", "cannot write"),
    ]:
        with pytest.raises(IPythonUsageError) as info:
            panels_shell.run_line_magic("mcp", line)
        assert words in str(info.value) and "\n" not in str(info.value)


def test_the_magics_display_live_panels_with_a_widget_frontend(panels_shell, capsys, monkeypatch, panels):
    shown: list = []
    monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
    monkeypatch.setattr(_show, "display", shown.append)
    panels_shell.run_line_magic("mcp", f"subscribe {URI} --read")
    panels_shell.run_line_magic("mcp", "subscribe")
    panels_shell.run_line_magic("mcp", "logs --live --unrouted --level warning --last 7")
    panels_shell.run_line_magic("mcp", "logs")
    one, every, live, static = shown
    panels += [one, every, live]
    assert all(isinstance(p, LivePanel) for p in (one, every, live))
    one_view, every_view, log_view = (_widgets.views_of(p) for p in (one, every, live))
    assert one_view.uri == URI and one_view.read and every_view.uri is None and not every_view.read
    assert log_view.level.value == "warning" and log_view.unrouted.value and log_view.rows == 7
    bundle = live._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle and "server log messages" in bundle["text/plain"]
    static_bundle = static._repr_mimebundle_()
    assert set(static_bundle) == {"text/html", "text/plain"} and "↳ cell" in static_bundle["text/html"]
    wait_until(lambda: "Resource 1: This is a plaintext resource" in one_view.table.value, "the first read")
    panels_shell.run_line_magic("mcp", f"unsubscribe {URI}")
    wait_until(lambda: one_view.closed, "the one-resource view to stop")
    assert one_view.status.value.startswith("unsubscribed at ")
    wait_until(lambda: "unsubscribed</span>" in every_view.table.value, "the all-subscriptions view to say so")
    assert not every_view.closed
    assert "Traceback" not in capsys.readouterr().err
