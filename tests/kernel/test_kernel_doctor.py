"""The doctor's checklist in a real kernel: one widget redrawn as each step completes (comm
updates while the cell runs), then replaced by the diagnosis itself (update_display_data with
its HTML and text, which a saved notebook keeps)."""

from __future__ import annotations

import sys

import pytest
from support.kernels import Cell, Kernel

pytestmark = [pytest.mark.kernel]


@pytest.mark.timeout(120)
def test_the_doctor_checklist_fills_in_live_then_stays_as_the_diagnosis(kernel: Kernel) -> None:
    code = f"%load_ext mcp_notebook\n%mcp doctor -- {sys.executable} -c 'import sys; sys.exit(3)'\n"
    cell = Cell(kernel.kc, code)
    result = cell.finish(60)
    assert result.status == "ok", result.describe()
    shown = [m for m in cell.messages if m["msg_type"] == "display_data"]
    assert len(shown) == 1 and "application/vnd.jupyter.widget-view+json" in shown[0]["content"]["data"]
    drawn = [
        m["content"]["data"]["state"]["value"]
        for m in cell.messages
        if m["msg_type"] == "comm_msg" and "value" in m["content"]["data"].get("state", {})
    ]
    assert any("✘" in value and "process" in value for value in drawn), drawn
    updates = [m for m in cell.messages if m["msg_type"] == "update_display_data"]
    assert len(updates) == 1
    assert updates[0]["content"]["transient"]["display_id"] == shown[0]["content"]["transient"]["display_id"]
    final = updates[0]["content"]["data"]
    assert "failed at process" in final["text/plain"] and "mcp-doctor" in final["text/html"]
