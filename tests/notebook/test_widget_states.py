"""The live widgets end on the connection's final state, and leave a snapshot of it behind:
what a saved notebook or an nbconvert export shows where no widget can be drawn."""

from __future__ import annotations

import re

from test_live_panels import wait_until

import mcp_notebook
from mcp_notebook.notebook import widgets as _widgets


def headline(markup: str) -> str:
    """The state word after the connection's name in a health block."""
    found = re.search(r"</b> (\w+)", markup)
    assert found, markup
    return found.group(1)


def test_the_health_widget_ends_on_closed_not_closing(panels):
    conn = mcp_notebook.demo("ends")
    panel = _widgets.health_widget(conn)
    panels.append(panel)
    view = _widgets.views_of(panel)
    assert headline(view.main.value) == "ready"
    conn.close()
    wait_until(lambda: view.closed, "the pump to let go of the health view")
    assert conn.state == "closed"
    assert headline(view.main.value) == "closed"
