"""`%mcp tool NAME` in a real kernel: the tool's view as HTML (with a text fallback) and, below
it, a form widget built from the input schema; the form's Call runs the tool."""

from __future__ import annotations

import pytest
from support.kernels import Cell, Kernel
from support.servers import server_everything_cmd

pytestmark = [pytest.mark.node, pytest.mark.kernel]

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.mark.timeout(180)
def test_tool_shows_its_view_and_a_form_that_calls_it(kernel: Kernel) -> None:
    argv = server_everything_cmd()
    setup = kernel.run(f"import mcp_notebook\nconn = mcp_notebook.connect({argv!r}, name='ev', era='legacy')\n")
    assert setup.status == "ok", setup.describe()
    cell = Cell(kernel.kc, "%mcp tool get-structured-content")
    result = cell.finish(60)
    assert result.status == "ok", result.describe()
    shown = [m["content"]["data"] for m in cell.messages if m["msg_type"] == "display_data"]
    assert len(shown) == 2, shown
    view, form = shown
    assert "location: &quot;New York&quot;|&quot;Chicago&quot;|&quot;Los Angeles&quot;*" in view["text/html"]
    assert "%mcp call get-structured-content location=&#x27;New York&#x27;" in view["text/html"]
    assert "example:\n  %mcp call get-structured-content location='New York'" in view["text/plain"]
    assert WIDGET in form
    called = kernel.run(
        "from mcp_notebook.notebook.widgets.tool_form import ToolForm\n"
        "form = ToolForm(conn, conn.tool('get-structured-content'))\n"
        "form.fields['location'].value = 'Chicago'\n"
        "print(form.call().structured['conditions'] != '', form.status.value)\n"
        "mcp_notebook.close_all()\n"
    )
    assert called.status == "ok" and called.stdout.startswith("True <i>done</i>"), called.describe()
