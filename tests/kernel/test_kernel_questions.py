"""Question widgets answered in a real kernel while the cell that asked is still running.

The test plays the frontend: it reads the widgets' comm_open messages from iopub and sends
the comm messages a browser would (a field update, a button click) on the shell channel.
The cell is blocked in `call_tool` the whole time; the answer must still arrive.
"""

from __future__ import annotations

import json

import pytest
from support.kernels import Cell, Kernel, json_line, ok
from support.servers import server_everything_cmd
from support.widgets import Frontend

pytestmark = [pytest.mark.node, pytest.mark.kernel]


@pytest.mark.timeout(180)
def test_forms_take_clicks_while_their_cell_waits(kernel: Kernel) -> None:
    command = json.dumps(server_everything_cmd())
    ok(
        kernel.run(
            f"import json, mcp_notebook\n"
            f"conn = mcp_notebook.connect({command}, name='asks', era='legacy', elicitation=True, sampling=True)"
        )
    )

    cell = Cell(kernel.kc, "r = conn.call_tool('trigger-elicitation-request')\nprint('RESULT', json.dumps(r.text))")
    frontend = Frontend(kernel, cell)
    frontend.wait_for_display()
    frontend.type_into(frontend.field_after(r">String <b"), "Ada")  # the required "name"
    frontend.click(frontend.find("ButtonModel", description="Accept"))
    text = json_line(ok(cell.finish(60)), "RESULT")
    assert "Name: Ada" in text
    assert frontend.find("ButtonModel", description="Accept")  # the same form, now answered

    cell = Cell(
        kernel.kc,
        "r = conn.call_tool('trigger-sampling-request', {'prompt': 'six times seven?'})\nprint('RESULT', json.dumps(r.text))",
    )
    frontend = Frontend(kernel, cell)
    frontend.wait_for_display()
    frontend.type_into(frontend.find("TextareaModel"), "forty-two")
    frontend.click(frontend.find("ButtonModel", description="Send"))
    assert "forty-two" in json_line(ok(cell.finish(60)), "RESULT")
    ok(kernel.run("conn.close()"))
