"""`conn.map` in a real IPython kernel against the demo server: its progress is one output of the
cell, updated in place while the cell blocks and left as the batch's summary line; a kernel
interrupt mid-batch ends the cell normally with the rows that finished."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from support.kernels import Cell, Kernel, json_line, ok, wait_gone

pytestmark = [pytest.mark.kernel]

DEMO = json.dumps([sys.executable, "-m", "mcp_notebook.demo_server"])


def _connect(kernel: Kernel) -> None:
    code = f"import mcp_notebook\nconn = mcp_notebook.connect({DEMO}, name='demo')\nprint('PID', conn._session.transport.pid)"
    out = ok(kernel.run(code))
    kernel.server_pids.add(int(json_line(out, "PID")))


@pytest.mark.timeout(180)
def test_the_batch_shows_one_output_updated_while_the_cell_blocks(kernel: Kernel) -> None:
    _connect(kernel)
    cell = Cell(kernel.kc, "r = conn.map('slow', [{'seconds': 0.3, 'steps': 1}] * 8, concurrency=2)\nprint('DONE', len(r.ok))")
    result = cell.finish(60)
    assert ok(result).strip() == "DONE 8" and result.stderr == "", result.describe()
    kinds = [m["msg_type"] for m in cell.messages]
    assert kinds.count("display_data") == 1 and kinds.count("execute_result") == 0, kinds
    [shown] = [m for m in cell.messages if m["msg_type"] == "display_data"]
    handle = shown["content"]["transient"]["display_id"]
    updates = [m for m in cell.messages if m["msg_type"] == "update_display_data"]
    assert {m["content"]["transient"]["display_id"] for m in updates} == {handle}
    last = updates[-1]["content"]["data"]["text/plain"]
    assert last.startswith("map slow: 8 rows in ") and "8 ok" in last and "calls/s" in last
    # The bar moved while the cell was still waiting: updates between empty and full went out.
    values = [
        m["content"]["data"]["state"]["value"]
        for m in cell.messages
        if m["msg_type"] == "comm_msg" and "value" in m["content"]["data"].get("state", {})
    ]
    assert any(0 < v < 1 for v in values if isinstance(v, float)), values
    ok(kernel.run("mcp_notebook.close_all()"))
    assert wait_gone(kernel.server_pids, 10.0) == set()


@pytest.mark.timeout(180)
def test_an_interrupt_mid_batch_returns_the_rows_that_finished(kernel: Kernel) -> None:
    _connect(kernel)
    cell = Cell(
        kernel.kc,
        r"""
import threading, time, json
def _watch():
    while True:
        calls = {e.id for e in conn.trace.frames("out") if e.method == "tools/call"}
        answered = [e for e in conn.trace.frames("in") if e.kind == "response" and e.id in calls]
        if len(conn.in_flight()) == 3 and len(answered) == 2:
            print("HALFWAY", flush=True)
            return
        time.sleep(0.01)
threading.Thread(target=_watch, daemon=True).start()
r = conn.map("slow", [{"seconds": 0, "steps": 1}] * 2 + [{"seconds": 600, "steps": 1}] * 3, concurrency=5)
print("RESULT", json.dumps([o.status for o in r]))
""",
    )
    assert cell.wait_for_output("HALFWAY", 30), cell._result("pending").describe()
    kernel.km.interrupt_kernel()
    result = cell.finish(30)
    assert json_line(ok(result), "RESULT") == ["ok", "ok", "cancelled", "cancelled", "cancelled"], result.describe()
    out = ok(
        kernel.run(
            "out = conn.trace.frames('out')\n"
            "calls = [e.id for e in out if e.method == 'tools/call']\n"
            "told = [e.message['params']['requestId'] for e in out if e.method == 'notifications/cancelled']\n"
            "echo = conn.call_tool('echo', text='here').text\n"
            "print('AFTER', json.dumps({'told': sorted(told), 'late': calls[2:], 'echo': echo}))"
        )
    )
    after = json_line(out, "AFTER")
    assert after["told"] == sorted(after["late"]) and after["echo"] == "here", after
    ok(kernel.run("mcp_notebook.close_all()"))
    assert wait_gone(kernel.server_pids, 10.0) == set()
