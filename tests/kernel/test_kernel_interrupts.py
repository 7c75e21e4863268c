"""Errors in a real kernel read as one line: Ctrl-C during a call says the server was told,
and the package's own errors raised from the Python API show without a traceback through
our internals; `%tb` shows the whole traceback of either."""

from __future__ import annotations

import re
import sys

import pytest
from support.kernels import SDK_SERVER, Cell, Kernel, json_line, ok

pytestmark = [pytest.mark.kernel]

ANSI = re.compile(r"\x1b\[[0-9;]*m")

# A watcher thread prints SENT once the tools/call frame is on the wire, so the interrupt
# comes while the cell really waits for the answer.
SLOW_CALL = r"""
import threading, time
def _watch():
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if [e for e in conn.trace.frames("out") if e.method == "tools/call"]:
            print("SENT", flush=True)
            return
        time.sleep(0.01)
threading.Thread(target=_watch, daemon=True).start()
conn.call_tool("slow", {"seconds": 60})
print("RETURNED")
"""


def shown(lines: list[str]) -> list[str]:
    return [line for line in "\n".join(ANSI.sub("", x) for x in lines).splitlines() if line.strip()]


def full_traceback(kernel: Kernel) -> list[str]:
    """What `%tb` shows of the last error (IPython prints it, in the cell's error message)."""
    result = Cell(kernel.kc, "%tb").finish(30)
    return shown(result.traceback) + [line for line in result.stdout.splitlines() if line.strip()]


@pytest.mark.timeout(180)
def test_ctrl_c_during_a_call_is_one_line_saying_the_server_was_told(kernel: Kernel) -> None:
    ok(
        kernel.run(
            f"import mcp_notebook\nconn = mcp_notebook.connect([{sys.executable!r}, {str(SDK_SERVER)!r}], era='legacy', name='s')"
        )
    )
    cell = Cell(kernel.kc, SLOW_CALL)
    assert cell.wait_for_output("SENT", 30), cell._result("pending").describe()
    assert not cell.idle
    kernel.km.interrupt_kernel()
    result = cell.finish(30)
    assert result.status == "error" and result.error_name == "Interrupted", result.describe()
    assert shown(result.traceback) == ["Interrupted: cancelled; the server was sent notifications/cancelled"], result.describe()
    assert "RETURNED" not in result.stdout

    out = ok(
        kernel.run(
            "import json\n"
            "cancels = [e.message['params'] for e in conn.trace.frames('out') if e.method == 'notifications/cancelled']\n"
            "print('AFTER', json.dumps({'cancels': len(cancels), 'state': conn.state}))"
        )
    )
    assert json_line(out, "AFTER") == {"cancels": 1, "state": "ready"}
    whole = full_traceback(kernel)
    assert len(whole) > 5 and any("Traceback" in line for line in whole), whole
    assert any("KeyboardInterrupt" in line for line in whole), "the Ctrl-C it came from is in the chain"
    ok(kernel.run("conn.close()"))


@pytest.mark.timeout(180)
def test_the_packages_errors_from_the_python_api_are_one_line_with_the_traceback_one_tb_away(kernel: Kernel) -> None:
    code = (
        "import mcp_notebook\n"
        f"conn = mcp_notebook.connect([{sys.executable!r}, {str(SDK_SERVER)!r}], era='legacy', name='s')\n"
        "def helper():\n"
        "    return conn.request('no/such/method')\n"
        "helper()\n"
    )
    result = Cell(kernel.kc, code).finish(60)
    assert result.status == "error" and result.error_name == "McpError", result.describe()
    assert shown(result.traceback) == ["McpError: no/such/method: Method not found (code -32601)"], result.describe()
    whole = full_traceback(kernel)
    assert any("helper()" in line for line in whole) and any("_round_trip" in line or "outcome" in line for line in whole), whole
    ok(kernel.run("conn.close()"))
