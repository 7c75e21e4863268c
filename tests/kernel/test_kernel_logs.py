"""A flood of log lines during one call, in a real kernel: the cell shows the first few and
one "... and N more" line that is updated in place (display_data, then update_display_data
with the same display id), never a line per message."""

from __future__ import annotations

import sys

import pytest
from support.kernels import SDK_SERVER, Cell, Kernel

from mcp_notebook.api.calls.progress import CELL_LOG_LINES

pytestmark = [pytest.mark.kernel]


@pytest.mark.timeout(180)
def test_a_log_flood_in_a_cell_is_a_few_lines_and_one_updating_line(kernel: Kernel) -> None:
    code = (
        "import mcp_notebook\n"
        f"conn = mcp_notebook.connect([{sys.executable!r}, {str(SDK_SERVER)!r}], era='legacy', name='sdk')\n"
        "print(conn.call_tool('steps', {'count': 2000, 'seconds': 0}).text)\n"
        "conn.close()\n"
    )
    cell = Cell(kernel.kc, code)
    result = cell.finish(120)
    assert result.status == "ok", result.describe()
    log_lines = [line for line in result.stdout.splitlines() if line.startswith("[sdk ")]
    assert len(log_lines) == CELL_LOG_LINES
    assert result.stdout.splitlines()[-1] == "done after 2000 steps"
    shown = [m for m in cell.messages if m["msg_type"] == "display_data" and "more log messages" in str(m["content"])]
    updates = [m for m in cell.messages if m["msg_type"] == "update_display_data" and "more log messages" in str(m["content"])]
    assert len(shown) == 1 and updates, [m["msg_type"] for m in cell.messages]
    display_id = shown[0]["content"]["transient"]["display_id"]
    assert {m["content"]["transient"]["display_id"] for m in updates} == {display_id}
    last = updates[-1]["content"]["data"]["text/plain"]
    assert last.startswith(f"[sdk] … and {4000 - CELL_LOG_LINES:,} more log messages")
