"""A notebook run by nbclient and exported by nbconvert shows the widgets' last state: each
live panel leaves a text/html snapshot beside its widget view, brought up to date after
every cell (the health widget's ends on "closed"), and the widget state nbclient saves is
the last one too. The sequence diagram is an SVG in the saved outputs and the HTML."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")
nbconvert = pytest.importorskip("nbconvert")

from jupyter_client.manager import KernelManager  # noqa: E402
from support.kernels import KERNEL_NAME, VenvKernelSpecManager  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"

pytestmark = [pytest.mark.kernel]

CELLS = [
    "import mcp_notebook\nconn = mcp_notebook.demo('saved')\n%mcp health saved",
    "%mcp dashboard",
    "%mcp trace saved --live",
    "conn.call_tool('echo', {'text': 'hello'})\nconn.diagram()",
    "%mcp disconnect saved",
]


def headline(markup: str) -> str:
    found = re.search(r"<b>saved</b> (\w+)", markup)
    assert found, markup[:500]
    return found.group(1)


@pytest.mark.timeout(300)
def test_saved_and_exported_notebooks_show_the_last_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source) for source in CELLS],
        metadata={"kernelspec": {"name": KERNEL_NAME, "display_name": "Python 3", "language": "python"}},
    )
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=VenvKernelSpecManager())
    client = nbclient.NotebookClient(nb, km=km, timeout=120, resources={"metadata": {"path": str(tmp_path)}})
    try:
        client.execute()
    finally:
        if km.has_kernel:
            km.shutdown_kernel(now=False)

    health_out = nb.cells[0].outputs
    assert [WIDGET_VIEW in o.get("data", {}) for o in health_out] == [True, False]
    widget, snapshot = health_out
    assert "text/html" not in widget.data  # the snapshot below carries it: nothing shown twice
    assert headline(snapshot.data["text/html"]) == "closed"  # brought up to date by the last cell
    assert "mcp-snapshot" in snapshot.data["text/html"] and "saved: closed" in snapshot.data["text/plain"]

    state = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]["state"]
    health_html = [m["state"]["value"] for m in state.values() if "mcp-health" in str(m["state"].get("value", ""))]
    assert health_html and headline(health_html[-1]) == "closed"  # the widget state is the last one too

    dashboard = nb.cells[1].outputs[1].data["text/html"]
    assert "mcp-dashboard" in dashboard or "no open connections" in dashboard
    trace = nb.cells[2].outputs[1].data["text/html"]
    assert "tools/call" in trace and "mcp-trace" in trace  # the live trace's snapshot followed later frames
    (diagram,) = nb.cells[3].outputs
    assert diagram.data["image/svg+xml"].startswith("<svg") and "tools/call" in diagram.data["text/html"]

    html, _ = nbconvert.HTMLExporter().from_notebook_node(nb)
    assert re.search(r"<b>saved</b> closed", html)
    assert 'class="mcp-diagram"' in html
