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
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from queue import Empty
from typing import Any

import pytest

jupyter_client = pytest.importorskip("jupyter_client")
pytest.importorskip("ipykernel")

from jupyter_client.blocking import BlockingKernelClient  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402
from kernels import KERNEL_NAME, VenvKernelSpecManager  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SERVERS = REPO / "tests" / "servers"
FASTMCP_SERVER = SERVERS / "fastmcp_server.py"
SDK_SERVER = SERVERS / "sdk_server.py"

STARTUP_TIMEOUT = 60.0

pytestmark = [pytest.mark.kernel]


# --------------------------------------------------------------------- the kernel


def _kernel_env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    old = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + old if old else "")
    # Keep IPython's history database and profile out of the user's home.
    env["IPYTHONDIR"] = str(tmp / "ipython")
    env.pop("JPY_PARENT_PID", None)
    return env


@dataclass
class Kernel:
    """A running kernel, its client, and the server pids its cells reported."""

    km: KernelManager
    kc: BlockingKernelClient
    tmp: Path
    server_pids: set[int] = field(default_factory=set)

    def run(self, code: str, timeout: float = 60.0) -> CellResult:
        return run_cell_full(self.kc, code, timeout)


def _start_kernel(tmp: Path) -> Kernel:
    km = KernelManager(
        kernel_name=KERNEL_NAME,
        kernel_spec_manager=VenvKernelSpecManager(),
        connection_file=str(tmp / "kernel.json"),
        transport="ipc",  # unix sockets in tmp: no TCP ports, no "unencrypted TCP" warning
        ip=str(tmp / "kernel-ipc"),
    )
    assert km.kernel_spec is not None and km.kernel_spec.argv[0] == sys.executable
    km.start_kernel(env=_kernel_env(tmp), cwd=str(tmp))
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=STARTUP_TIMEOUT)
    except BaseException:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        raise
    return Kernel(km, kc, tmp)


def _stop_kernel(kernel: Kernel) -> None:
    """Shut the kernel down (forcibly if a test has not already), then reap stray servers."""
    try:
        kernel.kc.stop_channels()
    finally:
        try:
            if kernel.km.has_kernel:
                kernel.km.shutdown_kernel(now=True)
        finally:
            kill_leftover_servers(kernel.server_pids)


@pytest.fixture
def kernel(tmp_path: Path) -> Iterator[Kernel]:
    k = _start_kernel(tmp_path)
    try:
        yield k
    finally:
        _stop_kernel(k)


# ------------------------------------------------------------------- running cells


@dataclass
class CellResult:
    status: str  # "ok", "error", "aborted", or "timeout"
    stdout: str
    error_name: str | None
    stderr: str = ""
    traceback: list[str] = field(default_factory=list)

    def __iter__(self) -> Iterator[Any]:  # (status, stdout, error_name)
        return iter((self.status, self.stdout, self.error_name))

    def describe(self) -> str:
        tb = "\n".join(_ANSI.sub("", line) for line in self.traceback)
        return (
            f"status={self.status} error={self.error_name}\n--- stdout\n{self.stdout}\n"
            f"--- stderr\n{self.stderr}\n--- traceback\n{tb}"
        )


_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Cell:
    """One execute request whose iopub output is collected as it arrives."""

    def __init__(self, kc: BlockingKernelClient, code: str) -> None:
        self.kc = kc
        self.msg_id = kc.execute(code, store_history=True, allow_stdin=False)
        self.stdout: list[str] = []
        self.stderr: list[str] = []
        self.error_name: str | None = None
        self.traceback: list[str] = []
        self.idle = False
        self.messages: list[dict[str, Any]] = []  # every iopub message of this cell, in order

    def pump(self, until: float, stop: Callable[[], bool] | None = None) -> bool:
        """Read this cell's iopub messages until it is idle, `stop()` holds, or `until` passes."""
        while not self.idle and not (stop is not None and stop()):
            remaining = until - time.monotonic()
            if remaining <= 0:
                return False
            try:
                msg = self.kc.get_iopub_msg(timeout=min(remaining, 0.2))
            except Empty:
                continue
            if msg.get("parent_header", {}).get("msg_id") != self.msg_id:
                continue
            self.messages.append(msg)
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                (self.stdout if content["name"] == "stdout" else self.stderr).append(content["text"])
            elif kind == "error":
                self.error_name = content["ename"]
                self.traceback = content.get("traceback", [])
            elif kind == "status" and content["execution_state"] == "idle":
                self.idle = True
        return True

    def wait_for_output(self, text: str, timeout: float) -> bool:
        """Wait until `text` shows up in this cell's stdout (False on timeout or if the cell ended)."""
        self.pump(time.monotonic() + timeout, stop=lambda: text in "".join(self.stdout))
        return text in "".join(self.stdout)

    def finish(self, timeout: float) -> CellResult:
        deadline = time.monotonic() + timeout
        self.pump(deadline)
        if not self.idle:
            return self._result("timeout")
        status = "error" if self.error_name else "ok"
        while True:  # the shell reply has the authoritative status
            remaining = deadline - time.monotonic()
            try:
                reply = self.kc.get_shell_msg(timeout=max(remaining, 1.0))
            except Empty:
                break
            if reply.get("parent_header", {}).get("msg_id") == self.msg_id:
                status = reply["content"]["status"]
                if status == "error" and self.error_name is None:
                    self.error_name = reply["content"].get("ename")
                break
        return self._result(status)

    def _result(self, status: str) -> CellResult:
        return CellResult(status, "".join(self.stdout), self.error_name, "".join(self.stderr), self.traceback)


def run_cell_full(kc: BlockingKernelClient, code: str, timeout: float = 60.0) -> CellResult:
    return Cell(kc, code).finish(timeout)


def run_cell(kc: BlockingKernelClient, code: str, timeout: float = 60.0) -> tuple[str, str, str | None]:
    """Execute `code`; (status, stdout, error_name) of that execute request only."""
    result = run_cell_full(kc, code, timeout)
    return result.status, result.stdout, result.error_name


def ok(result: CellResult) -> str:
    assert result.status == "ok", result.describe()
    return result.stdout


def json_line(stdout: str, tag: str) -> Any:
    """The JSON printed by a cell on the line `TAG {...}`."""
    for line in stdout.splitlines():
        if line.startswith(tag + " "):
            return json.loads(line[len(tag) + 1 :])
    raise AssertionError(f"no {tag!r} line in the cell output:\n{stdout}")


def widget_states(kernel: Kernel) -> Any:
    """The state of every widget the kernel holds, as the front end would sync it (JSON)."""
    code = (
        "import ipywidgets\n"
        "print('RESULT', json.dumps([w.get_state() for w in list(ipywidgets.Widget.widgets.values())], default=str))"
    )
    return json_line(ok(kernel.run(code)), "RESULT")


# --------------------------------------------------------------- processes by pid


def _proc_state(pid: int) -> str | None:
    """The /proc state letter of pid (e.g. 'S', 'Z'), or None if it does not exist."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return data[data.rfind(")") + 2 :].split()[0]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def pid_alive(pid: int) -> bool:
    """True if pid runs (a zombie counts as gone: it has exited, only its parent has not reaped it)."""
    if Path("/proc").is_dir():
        state = _proc_state(pid)
        return state is not None and state not in ("Z", "X")
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def wait_gone(pids: set[int], timeout: float) -> set[int]:
    """Poll until every pid is gone; the ones still alive after `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        alive = {pid for pid in pids if pid_alive(pid)}
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def kill_leftover_servers(pids: set[int]) -> None:
    """SIGKILL the test servers among `pids` that are still alive (checked by command line)."""
    for pid in pids:
        if pid_alive(pid) and str(SERVERS) in _cmdline(pid):
            try:
                os.killpg(pid, signal.SIGKILL)  # each server leads its own session/group
            except (ProcessLookupError, PermissionError):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    wait_gone(pids, 5.0)


# --------------------------------------------------------------------------- tests


PY = json.dumps(sys.executable)


@pytest.mark.timeout(180)
def test_server_pings_answered_while_cell_sleeps(kernel: Kernel) -> None:
    """Connect, ping with the magic, then block the cell in time.sleep while FastMCP pings us."""
    out = ok(
        kernel.run(
            "%load_ext mcp_notebook\n"
            f"%mcp connect k --era legacy -- {sys.executable} {FASTMCP_SERVER} --ping-interval-ms 100\n"
            "import mcp_notebook\n"
            "print('PID', mcp_notebook.get_connection('k').session.transport.pid)\n"
        )
    )
    assert "connected 'k'" in out, out
    kernel.server_pids.add(int(json_line(out, "PID")))

    out = ok(kernel.run("%mcp ping k -n 3 -i 0.05"))
    rtt_lines = re.findall(r"^ping k: \d+\.\d+ ms$", out, re.M)
    assert len(rtt_lines) == 3, out
    assert re.search(r"^--- k: 3 pings, 3 answered, 0 lost; min/median/max = [\d.]+/[\d.]+/[\d.]+ ms$", out, re.M), out

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
            "print('PID', conn.session.transport.pid)\n"
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
    "pid": conn.session.transport.pid,
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
            "print('PIDS ' + json.dumps([c.session.transport.pid for c in mcp_notebook.connections().values()]))\n"
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
            "exit_code": c.session.transport.exit_code,
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
