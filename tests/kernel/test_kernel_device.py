"""The device grant's widget in a real kernel: a cell connects to the demo server's OAuth mode
with `OAuth(grant="device")` and the widget shows the user code and a link to the page with
the code in it; the demo approves by itself and the cell carries on. With a code never
approved, Cancel in the widget ends the wait with one line. No device code or token is in the
cell's outputs or any widget's state.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.kernels import Cell, Kernel, json_line, ok, widget_states
from support.widgets import Frontend

from mcp_notebook import demo_server
from mcp_notebook.demo_server import OAuthSettings

pytestmark = [pytest.mark.kernel]


def widget_text(frontend: Frontend) -> str:
    return " ".join(str(s.get("value", "")) for s in frontend.models().values())


@pytest.mark.timeout(240)
def test_the_device_widget_shows_the_code_and_cancel_ends_the_wait(kernel: Kernel, tmp_path: Path) -> None:
    issued = tmp_path / "issued.txt"
    process, url = demo_server.start_http(oauth=OAuthSettings(device_interval=1, issued_log=str(issued)))
    with process:
        cell = Cell(
            kernel.kc,
            "import json, mcp_notebook\n"
            f"conn = mcp_notebook.connect({url!r}, name='dev', auth=mcp_notebook.OAuth(grant='device', remember=False))\n"
            "print('RESULT', json.dumps(conn.call_tool('add', {'a': 1, 'b': 2}).structured))",
        )
        frontend = Frontend(kernel, cell)
        frontend.wait_for_display(timeout=90)
        shown = widget_text(frontend)
        origin = url.removesuffix("/mcp")
        assert f"{origin}/device?user_code=" in shown and "on any device" in shown and "registration" in shown
        user_code = shown.split("user_code=", 1)[1][:9]
        assert user_code in shown.replace(f"user_code={user_code}", "")  # the code itself, in large type
        assert json_line(ok(cell.finish(90)), "RESULT") == {"sum": 3}
        saved = [m["content"]["data"].get("text/plain", "") for m in cell.messages if m["msg_type"] == "update_display_data"]
        assert saved and saved[-1].startswith("Authorized at 127.0.0.1:"), saved
        states = widget_states(kernel)
        ok(kernel.run("conn.close()"))
        outputs = json.dumps([m["content"] for m in cell.messages]) + json.dumps(states)
        for secret in issued.read_text().split():
            assert secret not in outputs

    process, url = demo_server.start_http(oauth=OAuthSettings(device_interval=1, device_fault="pending"))
    with process:
        cell = Cell(
            kernel.kc, f"mcp_notebook.connect({url!r}, name='never', auth=mcp_notebook.OAuth(grant='device', remember=False))"
        )
        frontend = Frontend(kernel, cell)
        frontend.wait_for_display(timeout=90)
        frontend.click(frontend.find("ButtonModel", description="Cancel"))
        cancelled = cell.finish(90)
    assert cancelled.status == "error", cancelled.describe()
    assert "authorization cancelled" in "".join(cancelled.traceback), cancelled.traceback
