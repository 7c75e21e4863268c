"""No stdio server outlives its client: the orphan matrix.

The server ignores stdin EOF (raw_server.py --linger) and has a child of its own in its
process group (--child), as npx, uvx and shell wrappers do. However the client ends
(`close()`, interpreter exit, SIGTERM, SIGKILL; in a kernel: shutdown, restart,
`shutdown_kernel(now=True)`, SIGTERM), nothing it started is still running a few seconds
later: not the server, not its child, not the watchdog that reaps them.

Every process of a case carries a tag in its environment: the client (or kernel) starts
with it and everything it starts inherits it. So "nothing left" is a scan of /proc for
the tag, not a list of pids someone has to keep complete.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Collection, Iterator
from pathlib import Path

import pytest
from support.kernels import Kernel, json_line, ok, pid_alive
from support.servers import REPO, SERVERS_DIR

import mcp_notebook
from mcp_notebook.transports import stdio
from mcp_notebook.transports.reaper import Reaper

TAG_VAR = "MCP_NOTEBOOK_ORPHAN_TAG"
LINGERING_SERVER = [sys.executable, str(SERVERS_DIR / "raw_server.py"), "--linger", "--child"]
GONE_WITHIN = 15.0

pytestmark = [pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc")]


@pytest.fixture(autouse=True)
def tag(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A tag in the environment of everything the test starts; what still runs is killed after."""
    value = uuid.uuid4().hex
    monkeypatch.setenv(TAG_VAR, value)
    yield value
    for pid in tagged(value):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def tagged(tag: str) -> dict[int, str]:
    """{pid: command line} of the running processes (not zombies) with the tag, this one aside."""
    needle = f"{TAG_VAR}={tag}".encode()
    found: dict[int, str] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = Path(f"/proc/{entry.name}/environ").read_bytes()
            cmdline = Path(f"/proc/{entry.name}/cmdline").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and pid_alive(int(entry.name)):
            found[int(entry.name)] = cmdline.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def left_running(tag: str, *, spare: Collection[int] = (), within: float = GONE_WITHIN) -> dict[int, str]:
    """Wait until nothing with the tag runs but the `spare` pids; what still runs at the deadline."""
    deadline = time.monotonic() + within
    while True:
        left = {pid: cmd for pid, cmd in tagged(tag).items() if pid not in spare}
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def assert_server_and_child_run(tag: str, server: int) -> None:
    """The case starts from what it claims: the server and its child run, carrying the tag."""
    running = tagged(tag)
    assert server in running, running
    assert any(cmd.endswith("raw-server-child") for cmd in running.values()), running


# ----- a client process


CLIENT = """
import json, os, signal, sys
import mcp_notebook
command, conns = json.loads(sys.argv[1]), []
for line in sys.stdin:  # one command a line; at EOF, the interpreter exits
    if line == "connect\\n":
        conns.append(mcp_notebook.connect(command, name=f"orphan{len(conns)}"))
        print(json.dumps(conns[-1]._session.transport.pid), flush=True)
    elif line == "close\\n":
        for conn in conns:
            conn.close()
        print("closed", flush=True)
    elif line == "fork\\n":  # a forked child that runs on, as a multiprocessing worker may
        child = os.fork()
        if child == 0:
            signal.pause()
            os._exit(0)
        print(json.dumps(child), flush=True)
"""


class Client:
    """A Python process that connects to lingering servers when told to."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", CLIENT, json.dumps(LINGERING_SERVER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            cwd=REPO,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )
        self.pid = self.process.pid

    def do(self, command: str) -> str:
        """Send one command and read its answer."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        answer = self.process.stdout.readline()
        assert answer, f"the client exited ({self.process.wait(30)}) instead of answering {command!r}"
        return answer.strip()

    def connect(self) -> int:
        """Connect to a new lingering server; its pid."""
        return int(self.do("connect"))

    def watchdog(self, tag: str) -> int:
        """The pid of the client's watchdog, once it runs (its launcher, a session leader, is gone)."""
        deadline = time.monotonic() + GONE_WITHIN
        while True:
            found = [pid for pid, cmd in tagged(tag).items() if f"watchdog.py {self.pid} " in cmd and os.getsid(pid) != pid]
            if len(found) == 1 or time.monotonic() > deadline:
                assert len(found) == 1, tagged(tag)
                return found[0]
            time.sleep(0.05)

    def finish(self) -> int:
        """Close the client's stdin (it exits at EOF, if it still runs); its exit code."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        code = self.process.wait(60)
        self.process.stdout.close()
        return code


@pytest.fixture
def client() -> Iterator[Client]:
    made = Client()
    yield made
    if made.process.poll() is None:
        made.finish()


@pytest.mark.slow
def test_close_leaves_nothing(tag: str, client: Client) -> None:
    assert_server_and_child_run(tag, client.connect())
    assert client.do("close") == "closed"
    # The client runs on, and so does its watchdog (it ends with the client).
    assert left_running(tag, spare={client.pid, client.watchdog(tag)}) == {}
    assert client.finish() == 0
    assert left_running(tag) == {}


@pytest.mark.slow
def test_interpreter_exit_leaves_nothing(tag: str, client: Client) -> None:
    assert_server_and_child_run(tag, client.connect())
    assert client.finish() == 0
    assert left_running(tag) == {}


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=lambda sig: sig.name)
def test_a_killed_client_leaves_nothing(tag: str, client: Client, sig: signal.Signals) -> None:
    """No atexit runs here: only the tie between the client and its servers can act."""
    assert_server_and_child_run(tag, client.connect())
    client.process.send_signal(sig)
    assert client.finish() == -sig
    assert left_running(tag) == {}


@pytest.mark.slow
def test_a_forked_child_does_not_keep_the_servers_alive(tag: str, client: Client) -> None:
    """A fork of the client (a multiprocessing worker) that outlives it does not hold the tie."""
    assert_server_and_child_run(tag, client.connect())
    forked = int(client.do("fork"))
    client.process.send_signal(signal.SIGKILL)
    assert client.finish() == -signal.SIGKILL
    assert left_running(tag, spare={forked}) == {}
    assert pid_alive(forked)  # it was there all along; the tag fixture ends it


@pytest.mark.slow
def test_a_killed_watchdog_is_replaced_and_told_every_server(tag: str, client: Client) -> None:
    first = client.connect()
    watchdog = client.watchdog(tag)
    os.kill(watchdog, signal.SIGKILL)
    assert left_running(tag, spare=set(tagged(tag)) - {watchdog}) == {}
    second = client.connect()
    assert {first, second} <= set(tagged(tag))
    client.process.send_signal(signal.SIGKILL)
    assert client.finish() == -signal.SIGKILL
    assert left_running(tag) == {}


def test_a_server_without_a_watchdog_still_runs_and_the_trace_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stdio, "_REAPER", Reaper(stdio.EXIT_GRACE, stdio.TERM_GRACE, stdio.KILL_WAIT))
    monkeypatch.setattr(sys, "executable", "")  # what the watchdog would run on
    conn = mcp_notebook.connect(LINGERING_SERVER[:2], name="unwatched")
    assert conn.request("ping") == {}
    conn.close()
    notes = [entry.note for entry in conn.trace.entries() if entry.kind == "unwatched"]
    assert notes == ["no watchdog, so the server may outlive this process if it is killed: no Python interpreter to run it"]


# ----- a kernel


KERNEL_CONNECT = f"""
import json, mcp_notebook
conn = mcp_notebook.connect({LINGERING_SERVER!r}, name="orphan")
print("PID " + json.dumps(conn._session.transport.pid))
"""


@pytest.mark.kernel
@pytest.mark.timeout(180)
@pytest.mark.parametrize("ending", ["shutdown", "restart", "shutdown now", "SIGTERM"])
def test_a_kernel_leaves_nothing_however_it_ends(tag: str, kernel: Kernel, ending: str) -> None:
    server = json_line(ok(kernel.run(KERNEL_CONNECT)), "PID")
    kernel.server_pids.add(server)
    assert_server_and_child_run(tag, server)
    kernel_process = kernel.km.provisioner.process  # type: ignore[union-attr]
    spare: set[int] = set()
    if ending == "SIGTERM":
        os.kill(kernel_process.pid, signal.SIGTERM)
        kernel_process.wait(30)
    elif ending == "restart":
        kernel.km.restart_kernel()
        spare = {kernel.km.provisioner.process.pid}  # type: ignore[union-attr]
        assert spare != {kernel_process.pid}
    else:
        kernel.kc.stop_channels()
        kernel.km.shutdown_kernel(now=ending == "shutdown now")
    assert left_running(tag, spare=spare) == {}
