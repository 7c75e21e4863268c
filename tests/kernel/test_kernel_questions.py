"""Question widgets answered in a real kernel while the cell that asked is still running.

The test plays the frontend: it reads the widgets' comm_open messages from iopub and sends
the comm messages a browser would (a field update, a button click) on the shell channel.
The cell is blocked in `call_tool` the whole time; the answer must still arrive.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from conftest import server_everything_cmd
from test_kernel import Cell, Kernel, json_line, ok
from test_kernel import kernel as kernel  # the `kernel` fixture, for this module too

pytestmark = [pytest.mark.kernel]

WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class Frontend:
    """The widget side of a browser, for one cell: models by comm id, and the messages to send."""

    def __init__(self, kernel: Kernel, cell: Cell) -> None:
        self.kernel, self.cell = kernel, cell

    def models(self) -> dict[str, dict[str, Any]]:
        """comm id -> widget state, from the cell's comm_open messages so far."""
        return {
            m["content"]["comm_id"]: m["content"]["data"]["state"] for m in self.cell.messages if m["msg_type"] == "comm_open"
        }

    def wait_for_display(self, timeout: float = 30.0) -> None:
        """Read the cell's output until a widget is displayed (the question form)."""

        def shown() -> bool:
            return any(m["msg_type"] == "display_data" and WIDGET_MIME in m["content"]["data"] for m in self.cell.messages)

        self.cell.pump(time.monotonic() + timeout, stop=shown)
        assert shown(), f"no widget displayed; cell output so far:\n{''.join(self.cell.stdout + self.cell.stderr)}"

    def find(self, model: str, **state: Any) -> str:
        """The comm id of the one widget of this model whose state has these values."""
        found = [
            cid
            for cid, s in self.models().items()
            if s.get("_model_name") == model and all(s.get(k) == v for k, v in state.items())
        ]
        assert len(found) == 1, f"{model} {state}: {found}"
        return found[0]

    def field_after(self, label: str) -> str:
        """The input widget beside the HTML label matching the `label` regex (a form row)."""
        models = self.models()
        labels = [
            cid for cid, s in models.items() if s.get("_model_name") == "HTMLModel" and re.search(label, s.get("value", ""))
        ]
        assert len(labels) == 1, labels
        row = next(
            s for s in models.values() if s.get("_model_name") == "HBoxModel" and s["children"][0] == f"IPY_MODEL_{labels[0]}"
        )
        return row["children"][1].removeprefix("IPY_MODEL_")

    def send(self, comm_id: str, data: dict[str, Any]) -> None:
        kc = self.kernel.kc
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def type_into(self, comm_id: str, value: Any) -> None:
        self.send(comm_id, {"method": "update", "state": {"value": value}, "buffer_paths": []})

    def click(self, comm_id: str) -> None:
        self.send(comm_id, {"method": "custom", "content": {"event": "click"}})


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
