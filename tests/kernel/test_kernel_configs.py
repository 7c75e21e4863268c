"""`%mcp connect NAME` for a configured stdio server, in a real kernel: the cell shows what will
run and waits on Run / Cancel; the test plays the front end over the comm (as a browser would)
and clicks. Run starts the server; the same entry is not asked about again; a changed entry is;
Cancel starts nothing.

The kernel runs with a fresh HOME, and a project `mcp.json` in its working directory, shaped as
https://code.visualstudio.com/docs/copilot/reference/mcp-configuration shows the `mcpServers` form.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.kernels import Cell, Kernel, _start_kernel, _stop_kernel, ok
from support.processes import descendants
from support.servers import SERVERS_DIR
from support.waiting import wait_until
from support.widgets import WIDGET_MIME, Frontend

pytestmark = [pytest.mark.kernel]

SDK_SERVER = str(SERVERS_DIR / "sdk_server.py")


@pytest.fixture
def configured_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "MCP_NOTEBOOK_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("SDK_SECRET_TOKEN", "value-never-shown-4711")
    k = _start_kernel(tmp_path)  # its working directory is tmp_path: the project
    try:
        yield k
    finally:
        _stop_kernel(k)


def write_entry(project: Path, *extra: str) -> None:
    entry = {"command": sys.executable, "args": [SDK_SERVER, *extra], "env": {"SDK_TOKEN": "${env:SDK_SECRET_TOKEN}"}}
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"sdk": entry}}))


def sdk_running() -> bool:
    return any("sdk_server.py" in cmd for cmd in descendants().values())


def widgets_shown(cell: Cell) -> int:
    return sum(1 for m in cell.messages if m["msg_type"] == "display_data" and WIDGET_MIME in m["content"]["data"])


@pytest.mark.timeout(240)
def test_a_configured_command_waits_for_run_and_cancel_starts_nothing(configured_kernel: Kernel) -> None:
    kernel = configured_kernel
    write_entry(kernel.tmp)
    ok(kernel.run("%load_ext mcp_notebook"))

    cell = Cell(kernel.kc, "%mcp connect sdk")
    frontend = Frontend(kernel, cell)
    frontend.wait_for_display()
    shown = " ".join(s.get("value", "") for s in frontend.models().values() if s.get("_model_name") == "HTMLModel")
    assert "sdk_server.py" in shown and "SDK_TOKEN" in shown and "value-never-shown-4711" not in shown
    assert not sdk_running()  # nothing runs before Run
    frontend.click(frontend.find("ButtonModel", description="Run"))
    connected = cell.finish(90)
    assert ok(connected) == "" and connected.results[0].startswith("connected 'sdk': sdk-test-server"), connected.describe()
    assert sdk_running()

    ok(kernel.run("%mcp disconnect sdk"))
    cell = Cell(kernel.kc, "%mcp connect sdk")  # the same entry: remembered, not asked again
    connected = cell.finish(90)
    assert ok(connected) == "" and connected.results[0].startswith("connected 'sdk'") and widgets_shown(cell) == 0
    ok(kernel.run("%mcp disconnect sdk"))
    wait_until(lambda: not sdk_running())  # disconnect reaps the server; /proc may lag a moment

    write_entry(kernel.tmp, "--slow-start", "0")  # the entry changed: asked again
    cell = Cell(kernel.kc, "%mcp connect sdk")
    frontend = Frontend(kernel, cell)
    frontend.wait_for_display()
    frontend.click(frontend.find("ButtonModel", description="Cancel"))
    result = cell.finish(60)
    assert result.status == "error" and result.error_name == "UsageError", result.describe()
    assert "sdk: cancelled; nothing was started" in "".join(result.traceback + [result.stderr])
    assert not sdk_running()
    assert "[]" in ok(kernel.run("import mcp_notebook; print(sorted(mcp_notebook.connections()))"))


@pytest.mark.timeout(240)
def test_a_vs_code_input_is_asked_in_a_password_field_while_the_cell_waits(configured_kernel: Kernel) -> None:
    kernel = configured_kernel
    # https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (inputs; ${input:id})
    (kernel.tmp / ".vscode").mkdir()
    (kernel.tmp / ".vscode/mcp.json").write_text(
        json.dumps(
            {
                "inputs": [{"type": "promptString", "id": "token", "description": "SDK token", "password": True}],
                "servers": {
                    "vs": {"type": "stdio", "command": sys.executable, "args": [SDK_SERVER], "env": {"T": "${input:token}"}}
                },
            }
        )
    )
    ok(kernel.run("%load_ext mcp_notebook"))
    cell = Cell(
        kernel.kc, "conn = %mcp connect vs --consent\nprint('SECRET SEEN' if 'pw-8472' in str(conn.trace.filter()) else 'ok')"
    )
    frontend = Frontend(kernel, cell)
    frontend.wait_for_display()
    frontend.type_into(frontend.find("PasswordModel"), "pw-8472")
    frontend.click(frontend.find("ButtonModel", description="OK"))
    out = ok(cell.finish(90))
    assert out == "ok\n", out  # connected, and the secret is in no frame of the trace
    kernel_state = ok(kernel.run("import json; print(json.dumps(sorted(conn._session.transport._env.items())))"))
    assert '["T", "pw-8472"]' in kernel_state  # the server got it; nothing stored it
    assert all("pw-8472" not in p.read_text() for p in (kernel.tmp / "home").rglob("*.json"))
