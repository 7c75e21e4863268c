"""Real IPython kernels for tests: a kernelspec of this interpreter (the venv's) running ipykernel,
no kernel.json needed; a kernel started per test with the repository on its PYTHONPATH; cells run
over a BlockingKernelClient with their iopub output read back; the test servers it started, found
and stopped.

The peers are real servers (never mocks):

* tests/servers/fastmcp_server.py (FastMCP 4.1.6, pings its client), and
* tests/servers/sdk_server.py (official SDK mcp==2.3.0; ``slow`` tool).
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
from jupyter_client.blocking import BlockingKernelClient
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager

REPO = Path(__file__).resolve().parents[2]
KERNEL_NAME = "mcp-notebook-test"


class VenvKernelSpecManager(KernelSpecManager):
    """One kernelspec, built here: this interpreter running ipykernel, no kernel.json needed."""

    def _spec(self) -> KernelSpec:
        return KernelSpec(
            argv=[sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="mcp-notebook tests",
            language="python",
            interrupt_mode="signal",
            resource_dir=str(REPO),
        )

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:  # type: ignore[override]
        if kernel_name == KERNEL_NAME:
            return self._spec()
        return super().get_kernel_spec(kernel_name)

    def find_kernel_specs(self) -> dict[str, str]:  # type: ignore[override]
        return {KERNEL_NAME: str(REPO)}


SERVERS = REPO / "tests" / "servers"


FASTMCP_SERVER = SERVERS / "fastmcp_server.py"


SDK_SERVER = SERVERS / "sdk_server.py"


STARTUP_TIMEOUT = 60.0


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


@dataclass
class CellResult:
    status: str  # "ok", "error", "aborted", or "timeout"
    stdout: str
    error_name: str | None
    stderr: str = ""
    traceback: list[str] = field(default_factory=list)
    results: list[str] = field(default_factory=list)  # the cell's value as shown (execute_result's text/plain)

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
        self.results: list[str] = []
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
            elif kind == "execute_result":
                self.results.append(content["data"].get("text/plain", ""))
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
        return CellResult(status, "".join(self.stdout), self.error_name, "".join(self.stderr), self.traceback, self.results)


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
