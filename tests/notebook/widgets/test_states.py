"""The live widgets end on the connection's final state, and leave a snapshot of it behind:
what a saved notebook or an nbconvert export shows where no widget can be drawn."""

from __future__ import annotations

import re

from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.notebook.widgets import health as _health_widgets
from mcp_notebook.notebook.widgets import pump as _widgets
from mcp_notebook.notebook.widgets import snapshot_display
from mcp_notebook.notebook.widgets import snapshots as snapshot_registry
from mcp_notebook.session import health_view


def headline(markup: str) -> str:
    """The state word after the connection's name in a health block."""
    found = re.search(r"</b> (\w+)", markup)
    assert found, markup
    return found.group(1)


def test_the_health_widget_ends_on_closed_not_closing(panels):
    conn = mcp_notebook.demo("ends")
    panel = _health_widgets.health_widget(conn)
    panels.append(panel)
    view = _widgets.views_of(panel)
    assert headline(view.main.value) == "ready"
    conn.close()
    wait_until(lambda: view.closed, "the pump to let go of the health view")
    assert conn.state == "closed"
    assert headline(view.main.value) == "closed"


def test_a_displayed_panel_leaves_a_snapshot_that_follows_it_to_its_final_state(panels, monkeypatch):
    import IPython.display

    shown: list[tuple[dict, str | None]] = []
    updates: list[tuple[dict, str]] = []
    monkeypatch.setattr(IPython.display, "display", lambda data, raw=False, display_id=None: shown.append((data, display_id)))
    monkeypatch.setattr(
        IPython.display, "update_display", lambda data, raw=False, display_id=None: updates.append((data, display_id))
    )
    conn = mcp_notebook.demo("snap")
    panel = _health_widgets.health_widget(conn)
    panels.append(panel)
    panel._ipython_display_()
    (widget, no_id), (snapshot, snapshot_id) = shown
    assert no_id is None and "application/vnd.jupyter.widget-view+json" in widget and "text/html" not in widget
    assert snapshot_id == panel.snapshot_id and headline(snapshot["text/html"]) == "ready"
    assert f".{snapshot_id}{{display:none}}" in panel.children[0].value  # the widget hides its own snapshot
    assert snapshot_id in snapshot_registry.PENDING

    conn.close()
    wait_until(lambda: _widgets.views_of(panel).closed, "the pump to render the final state")
    snapshot_display.refresh()  # what the end of each cell runs
    ours = [data for data, display_id in updates if display_id == snapshot_id]
    assert ours and headline(ours[-1]["text/html"]) == "closed" and "snap: closed" in ours[-1]["text/plain"]
    assert snapshot_id not in snapshot_registry.PENDING  # the final state is out: no longer followed
    snapshot_display.refresh()
    assert len([1 for _, display_id in updates if display_id == snapshot_id]) == len(ours)


def test_the_end_of_a_cell_updates_only_the_snapshots_that_changed(panels):
    """In a real IPython shell, after each cell: the snapshot of a panel whose connection moved
    is updated, the snapshot of a panel nothing happened to is not (it stays followed)."""
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output

    from mcp_notebook.notebook.widgets.trace import trace_widget

    shell = InteractiveShell.instance()
    busy = mcp_notebook.demo("busy", load_magics=False, keepalive=None)
    quiet = mcp_notebook.demo("quiet", load_magics=False, keepalive=None)
    try:
        for conn in (busy, quiet):
            conn.keepalive(enabled=False)  # no frames but the ones this test asks for
        panels += [trace_widget(busy), trace_widget(quiet)]
        busy_id, quiet_id = (panel.snapshot_id for panel in panels)
        shell.user_ns.update(busy=busy, panels=panels)

        def cell(code: str) -> tuple[list, list]:
            """Run `code` as a cell; what it displayed, and the snapshot updates its end sent."""
            with capture_output() as captured:
                assert shell.run_cell(code).success
            outputs = captured.outputs
            return [o for o in outputs if not o.update], [o for o in outputs if o.update]

        shown, updated = cell("display(*panels)")
        assert [o.transient.get("display_id") for o in shown] == [None, busy_id, None, quiet_id]
        assert updated == []  # both just shown as they are

        _, updated = cell("busy.ping()")
        assert [o.transient["display_id"] for o in updated] == [busy_id]
        assert "ping" in updated[0].data["text/html"]
        assert quiet_id in snapshot_registry.PENDING  # left alone, still followed

        _, updated = cell("x = 1")
        assert updated == []
    finally:
        busy.close()
        quiet.close()
        InteractiveShell.clear_instance()


def test_the_magics_draw_the_diagram_and_a_health_snapshot(monkeypatch, capsys, panels):
    from IPython.core.interactiveshell import InteractiveShell

    from mcp_notebook.notebook.magics import show as _show

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    try:
        conn = mcp_notebook.demo("magic")
        conn.call_tool("echo", {"text": "hi"})
        shell.run_line_magic("mcp", "trace magic --diagram --last 6")
        text = capsys.readouterr().out
        assert "magic: " in text and "tools/call" in text and "◀──────────" in text  # no widget frontend: text

        displayed: list = []
        monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
        monkeypatch.setattr(_show, "display", displayed.append)
        shell.run_line_magic("mcp", "trace magic --diagram --last 6")
        shell.run_line_magic("mcp", "health magic --snapshot")
        diagram, health = displayed
        assert isinstance(diagram, mcp_notebook.Diagram) and len(diagram.steps) == 6
        assert diagram._repr_svg_().startswith("<svg") and "tools/call" in diagram._repr_html_()
        bundle = health._repr_mimebundle_()
        assert set(bundle) == {"text/html", "text/plain"} and headline(bundle["text/html"]) == "ready"
    finally:
        shell.run_line_magic("unload_ext", "mcp_notebook")
        InteractiveShell.clear_instance()


def test_the_filters_say_all_rather_than_nothing(panels):
    from mcp_notebook.notebook.widgets.live import LogView
    from mcp_notebook.notebook.widgets.trace import TraceView

    with mcp_notebook.demo("filters") as conn:
        trace = TraceView(conn, live=False)
        logs = LogView(conn)
        panels += [trace.widget, logs.widget]
        assert (trace.kind.label, trace.direction.label, logs.level.label) == ("all", "all", "all")
        assert trace.filters()["kind"] is None and trace.filters()["direction"] is None
        assert TraceView(conn, live=False, kind="error", direction="in").filters() | {"last": 1} == {
            "method": None,
            "kind": "error",
            "direction": "in",
            "last": 1,
        }


def test_a_modern_connections_health_widget_calls_its_liveness_probes_probes():
    with mcp_notebook.demo("probed", era="modern", load_magics=False, keepalive=None) as conn:
        conn.ping()  # a liveness probe: modern servers have no ping
        text = health_view.text(conn.health)
    assert "our probes   1 sent, 1 answered" in text and "our pings" not in text
