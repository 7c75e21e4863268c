"""`%mcp load` and the load test's live widget in a kernel, against the demo server over stdio."""

from __future__ import annotations

import sys
from typing import Any

import IPython.display
import pytest
from IPython.core.error import UsageError as IPythonUsageError
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.notebook.magics.mcp import run_line
from mcp_notebook.notebook.widgets.pump import pump

DEMO = f"{sys.executable} -m mcp_notebook.demo_server"


def test_the_magic_runs_a_load_and_returns_its_report():
    report = run_line(f"load add a=1 b=2 --sessions 2 --calls 10 -- {DEMO}")
    assert isinstance(report, mcp_notebook.LoadReport)
    assert len(report.calls) == 10 and all(c.ok and c.tool == "add" for c in report.calls)


def test_the_magic_says_what_it_needs():
    with pytest.raises(IPythonUsageError, match="load needs a server"):
        run_line("load")
    with pytest.raises(IPythonUsageError, match="--url URL or as a command after --, one of them"):
        run_line("load echo --calls 3")
    with pytest.raises(IPythonUsageError, match="a TOOL .* or --cassette PATH, one of them"):
        run_line(f"load --calls 3 -- {DEMO}")


def test_in_a_kernel_the_load_shows_a_widget_the_pump_redraws(shown_as, monkeypatch):
    shown_as("kernel")
    shown: list[Any] = []
    monkeypatch.setattr(IPython.display, "display", lambda obj, **kwargs: shown.append(obj))
    report = mcp_notebook.load(DEMO.split(), {"tool": "echo", "arguments": {"text": "x"}}, sessions=2, calls=20)
    (panel,) = shown
    view = panel._view
    wait_until(lambda: view.closed, "the pump to draw the load's last state")  # the pump's own clock
    html = view.table.value
    assert "done, 20 calls" in html and "tools/call echo" in html
    assert repr(panel) == view.text() and view.text().startswith(f"load {DEMO}: done, 20 calls")
    assert view not in pump.views
    assert report.text().splitlines()[0] == view.text().splitlines()[0]
    panel.close()
