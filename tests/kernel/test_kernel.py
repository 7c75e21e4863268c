"""mcp-notebook inside a real IPython kernel (ipykernel + jupyter_client).

Every test starts its own kernel running this interpreter (``sys.executable``,
so the dev venv), with the repository root on the kernel's PYTHONPATH so
``import mcp_notebook`` works before the package is installed. Cells are sent
over a BlockingKernelClient and their iopub output is read back.

The peers are real servers (never mocks):

* tests/servers/fastmcp_server.py (FastMCP 4.1.6, pings its client), and
* tests/servers/sdk_server.py (official SDK mcp==2.3.0; ``slow`` tool).

Checks that need the kernel's own clock (``time.monotonic()`` in the trace)
are computed inside the cell, which prints a JSON verdict that the test reads.
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from support.kernels import (  # noqa: E402
    FASTMCP_SERVER,
    SDK_SERVER,
    Cell,
    Kernel,
    _cmdline,
    _proc_state,
    json_line,
    ok,
    pid_alive,
    wait_gone,
)

REPO = Path(__file__).resolve().parents[2]


pytestmark = [pytest.mark.kernel]


PY = json.dumps(sys.executable)


@pytest.mark.timeout(180)
def test_server_pings_answered_while_cell_sleeps(kernel: Kernel) -> None:
    """Connect, ping with the magic, then block the cell in time.sleep while FastMCP pings us."""
    ok(kernel.run("%load_ext mcp_notebook"))
    connected = kernel.run(f"%mcp connect k --era legacy -- {sys.executable} {FASTMCP_SERVER} --ping-interval-ms 100")
    assert ok(connected) == "" and len(connected.results) == 1, connected.describe()  # one output: the value's line
    assert connected.results[0].startswith("connected 'k': ") and "legacy server" in connected.results[0], connected.results
    out = ok(kernel.run("import mcp_notebook\nprint('PID', mcp_notebook.get_connection('k')._session.transport.pid)"))
    kernel.server_pids.add(int(json_line(out, "PID")))

    pinged = kernel.run("%mcp ping k -n 3 -i 0.05")
    out = ok(pinged)
    assert out == "" and len(pinged.results) == 1, (out, pinged.results)  # one output: the returned times' display
    *rtt_lines, summary = pinged.results[0].splitlines()
    assert len(rtt_lines) == 3 and all(re.fullmatch(r"ping k: \d+\.\d+ ms", line) for line in rtt_lines), rtt_lines
    assert re.fullmatch(r"--- k: 3 pings, 3 answered, 0 lost; min/median/max = [\d.]+/[\d.]+/[\d.]+ ms", summary)

    cell = r"""
import json, threading, time
import mcp_notebook

conn = mcp_notebook.get_connection("k")
assert threading.current_thread() is threading.main_thread()
conn.request("tools/list")          # FastMCP's PingMiddleware starts pinging now
baseline = conn.health.server_pings
windows = []                        # (start, end) of every time.sleep, kernel's monotonic clock
deadline = time.monotonic() + 20.0
while conn.health.server_pings < max(3, baseline + 3) and time.monotonic() < deadline:
    t0 = time.monotonic()
    time.sleep(0.2)
    windows.append((t0, time.monotonic()))

# The reader may sit between "ping counted" and "pong written" at any moment:
# take a snapshot where health and trace agree that every ping has its pong.
for attempt in range(100):
    h = conn.health
    frames = conn.trace.frames()
    pings = {e.id: e for e in frames if e.direction == "in" and e.kind == "request" and e.method == "ping"}
    pongs = {e.id: e for e in frames if e.direction == "out" and e.note == "pong"}
    if h.server_pings == h.pongs_sent and set(pings) <= set(pongs):
        break
    time.sleep(0.01)

in_sleep = [p for p in pongs.values() if any(a <= p.monotonic <= b for a, b in windows)]
delays = [pongs[i].monotonic - pings[i].monotonic for i in pings if i in pongs]
print("HEALTH " + json.dumps({
    "state": h.state,
    "server_pings": h.server_pings,
    "pongs_sent": h.pongs_sent,
    "pong_failures": h.pong_failures,
    "pings_sent": h.pings_sent,
    "last_rtt": h.last_rtt,
    "baseline_server_pings": baseline,
    "attempts": attempt + 1,
}))
print("VERDICT " + json.dumps({
    "sleeps": len(windows),
    "pings_in_trace": len(pings),
    "pongs_in_trace": len(pongs),
    "unanswered": sorted(set(pings) - set(pongs), key=str),
    "pongs_during_sleep": len(in_sleep),
    "pongs_in_loop_span": sum(1 for p in pongs.values() if windows and windows[0][0] <= p.monotonic <= windows[-1][1]),
    "max_pong_delay": max(delays) if delays else None,
    "pong_ids_are_ping_ids": all(pongs[i].message["id"] == pings[i].message["id"] for i in pings if i in pongs),
}))
"""
    out = ok(kernel.run(cell, timeout=90))
    health = json_line(out, "HEALTH")
    verdict = json_line(out, "VERDICT")

    assert health["state"] == "ready", health
    assert health["server_pings"] == health["pongs_sent"] >= 3, health
    assert health["pong_failures"] == 0, health
    assert health["pings_sent"] >= 3, health  # the three from %mcp ping
    assert health["server_pings"] >= health["baseline_server_pings"] + 3, health
    assert verdict["unanswered"] == [], verdict
    assert verdict["pongs_in_trace"] == verdict["pings_in_trace"] == health["server_pings"], (health, verdict)
    assert verdict["pong_ids_are_ping_ids"], verdict
    # The cell's main thread was inside time.sleep when the pongs went out.
    assert verdict["sleeps"] >= 1, verdict
    assert verdict["pongs_during_sleep"] >= 3, verdict
    # ...and they went out at once, not at the next moment the cell let go.
    assert verdict["max_pong_delay"] is not None and verdict["max_pong_delay"] < 0.25, verdict

    ok(kernel.run("%mcp disconnect --all"))
    assert wait_gone(kernel.server_pids, 10.0) == set()


@pytest.mark.timeout(180)
def test_interrupt_cancels_slow_request(kernel: Kernel) -> None:
    """Ctrl-C (a kernel interrupt) during tools/call slow(60): KeyboardInterrupt, cancelled, still usable."""
    out = ok(
        kernel.run(
            "import sys, mcp_notebook\n"
            f"conn = mcp_notebook.connect([{PY}, {json.dumps(str(SDK_SERVER))}], name='s', era='legacy')\n"
            "print('PID', conn._session.transport.pid)\n"
        )
    )
    pid = int(json_line(out, "PID"))
    kernel.server_pids.add(pid)

    # A watcher thread in the kernel prints SENT once the tools/call frame is on the wire,
    # so the test interrupts while the cell really waits for the response.
    cell = Cell(
        kernel.kc,
        r"""
import threading, time
def _watch():
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        sent = [e for e in conn.trace.frames("out") if e.method == "tools/call"]
        if sent:
            print("SENT", sent[-1].id, flush=True)
            return
        time.sleep(0.01)
_t0 = time.monotonic()
threading.Thread(target=_watch, daemon=True).start()
print("sending", flush=True)
conn.request("tools/call", {"name": "slow", "arguments": {"seconds": 60}})
print("RETURNED", time.monotonic() - _t0)
""",
    )
    assert cell.wait_for_output("sending", 30), cell._result("pending").describe()
    seen = cell.wait_for_output("SENT", 15)
    time.sleep(0.3)  # let the cell settle into waiting on the response
    assert not cell.idle, cell._result("ended early").describe()
    t_interrupt = time.monotonic()
    kernel.km.interrupt_kernel()
    result = cell.finish(30)
    elapsed = time.monotonic() - t_interrupt
    assert seen, f"the watcher never saw the tools/call frame:\n{result.describe()}"
    assert result.status == "error" and result.error_name == "Interrupted", result.describe()  # a KeyboardInterrupt
    assert "RETURNED" not in result.stdout, result.describe()
    assert elapsed < 10, f"the interrupt took {elapsed:.1f} s to end the cell"

    out = ok(
        kernel.run(
            r"""
import json, os
rtt = conn.ping(timeout=10)
answer = conn.request("tools/call", {"name": "echo", "arguments": {"text": "still here"}}, timeout=10)
calls = [e for e in conn.trace.frames("out") if e.kind == "request" and e.method == "tools/call"]
cancels = [e for e in conn.trace.frames("out") if e.method == "notifications/cancelled"]
h = conn.health
print("AFTER " + json.dumps({
    "state": conn.state,
    "rtt": rtt,
    "call_ids": [e.id for e in calls],
    "cancel_params": [e.message.get("params") for e in cancels],
    "cancel_kinds": [e.kind for e in cancels],
    "echo": answer,
    "in_flight": h.requests_in_flight,
    "pid": conn._session.transport.pid,
    "exit_code": h.exit_code,
}))
"""
        )
    )
    after = json_line(out, "AFTER")
    assert after["state"] == "ready", after
    assert after["rtt"] > 0, after
    assert after["in_flight"] == 0, after
    assert after["exit_code"] is None, after
    assert after["pid"] == pid, after
    assert len(after["call_ids"]) == 2, after  # slow, then echo
    slow_id = after["call_ids"][0]
    assert after["cancel_kinds"] == ["notification"], after
    assert after["cancel_params"][0]["requestId"] == slow_id, after
    texts = [c.get("text") for c in after["echo"].get("content", [])]
    assert "still here" in texts, after
    # The interrupt went to the kernel's process group only; the server runs on.
    assert pid_alive(pid), f"server pid {pid} died with the interrupt"

    ok(kernel.run("mcp_notebook.close_all()"))
    assert wait_gone(kernel.server_pids, 10.0) == set()


@pytest.mark.timeout(180)
def test_clean_kernel_shutdown_stops_servers(kernel: Kernel) -> None:
    """A clean shutdown request to the kernel leaves no server process behind.

    Our peers also exit on their own once the dead kernel's pipe gives them EOF, so the
    pids alone cannot tell whether mcp-notebook closed them. A runtime stop hook, added
    after the package's own (which closes every session), writes each session's final
    state to a file as the kernel exits: that shows the package closed them itself.
    """
    report = kernel.tmp / "exit-report.json"
    out = ok(
        kernel.run(
            "%load_ext mcp_notebook\n"
            f"%mcp connect f --era legacy -- {sys.executable} {FASTMCP_SERVER} --ping-interval-ms 100\n"
            "import json, mcp_notebook\n"
            f"s = mcp_notebook.connect([{PY}, {json.dumps(str(SDK_SERVER))}], name='s', era='legacy')\n"
            "mcp_notebook.get_connection('f').request('tools/list')\n"  # FastMCP pings from now on
            "print('PIDS ' + json.dumps([c._session.transport.pid for c in mcp_notebook.connections().values()]))\n"
        )
    )
    ok(
        kernel.run(
            f"REPORT = {json.dumps(str(report))}\n"
            + r"""
from mcp_notebook.runtime import get_runtime
_conns = list(mcp_notebook.connections().values())

async def _exit_report():
    with open(REPORT, "w") as f:
        json.dump([{
            "name": c.name,
            "state": c.state,
            "closed_reason": c.health.closed_reason,
            "exit_code": c._session.transport.exit_code,
            "events": [e.kind for e in c.trace.entries() if e.direction == "event"],
        } for c in _conns], f)

get_runtime().on_stop(_exit_report)
"""
        )
    )
    pids = set(json_line(out, "PIDS"))
    kernel.server_pids |= pids
    assert len(pids) == 2 and all(pid_alive(pid) for pid in pids), out
    kernel_pid = kernel.km.provisioner.process.pid  # type: ignore[union-attr]

    kernel.kc.stop_channels()
    t0 = time.monotonic()
    kernel.km.shutdown_kernel(now=False)
    took = time.monotonic() - t0

    alive = wait_gone(pids, 15.0)
    detail = {pid: (_proc_state(pid), _cmdline(pid)[:200]) for pid in alive}
    assert not pid_alive(kernel_pid)
    assert alive == set(), f"shutdown took {took:.1f} s; servers still alive after 15 s: {detail}"

    assert report.is_file(), "the kernel exited without running mcp-notebook's runtime stop hooks"
    sessions = {entry["name"]: entry for entry in json.loads(report.read_text())}
    assert set(sessions) == {"f", "s"}, sessions
    for entry in sessions.values():
        assert entry["state"] == "closed", entry
        assert entry["closed_reason"] == "closed by the client", entry
        assert entry["exit_code"] is not None, entry
        assert "exit" in entry["events"], entry
