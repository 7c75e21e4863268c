"""Shared fixtures and helpers for the mcp-notebook tests.

Peers (servers we did not write the protocol for):

* ``server_everything_cmd()``: @modelcontextprotocol/server-everything (Node),
  installed by ``make peers`` into tests/peers/node_modules, run with the
  tests/peers/loopback.cjs preload so its HTTP modes bind 127.0.0.1 only.
* ``sdk_server_cmd(*extra)``: tests/servers/sdk_server.py (mcp==2.3.0).
* ``fastmcp_server_cmd(*extra)``: tests/servers/fastmcp_server.py (FastMCP 4.1.6).

A session-wide check fails the run if any child process of pytest is still
alive at the end.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
TESTS_DIR = REPO / "tests"
PEERS_DIR = TESTS_DIR / "peers"
SERVERS_DIR = TESTS_DIR / "servers"
LOOPBACK_PRELOAD = PEERS_DIR / "loopback.cjs"
SERVER_EVERYTHING_DIR = PEERS_DIR / "node_modules" / "@modelcontextprotocol" / "server-everything"
SERVER_EVERYTHING_ENTRY = SERVER_EVERYTHING_DIR / "dist" / "index.js"

HOST = "127.0.0.1"


# --------------------------------------------------------------------------- peers


def node_executable() -> str:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not on PATH (needed for @modelcontextprotocol/server-everything)")
    return node


def server_everything_cmd(mode: str = "stdio") -> list[str]:
    """argv for server-everything: ``[node, -r, loopback.cjs, .../dist/index.js, mode]``.

    ``mode`` is ``stdio`` (default), ``streamableHttp`` or ``sse``; the HTTP
    modes take their port from the ``PORT`` environment variable (default 3001)
    and serve ``/mcp`` (streamableHttp) or ``/sse`` + ``/message`` (sse).
    """
    if mode not in ("stdio", "streamableHttp", "sse"):
        raise ValueError(f"unknown server-everything mode {mode!r}")
    if not SERVER_EVERYTHING_ENTRY.is_file():
        pytest.skip(f"server-everything is not installed ({SERVER_EVERYTHING_ENTRY} missing): run `make peers`")
    return [node_executable(), "-r", str(LOOPBACK_PRELOAD), str(SERVER_EVERYTHING_ENTRY), mode]


def sdk_server_cmd(*extra: str) -> list[str]:
    """argv for the official-SDK test server; extra e.g. ``--transport streamable-http --port N``."""
    return [sys.executable, str(SERVERS_DIR / "sdk_server.py"), *extra]


def fastmcp_server_cmd(*extra: str) -> list[str]:
    """argv for the FastMCP test server; extra e.g. ``--ping-interval-ms 50``."""
    return [sys.executable, str(SERVERS_DIR / "fastmcp_server.py"), *extra]


@contextlib.contextmanager
def fastmcp_oauth_server(*extra: str) -> Iterator[str]:
    """FastMCP's OAuth-protected test server (its own in-memory authorization server) on a free
    port; its MCP endpoint's URL. extra e.g. ``--require-write``."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVERS_DIR / "fastmcp_oauth_server.py"), "--port", str(port), *extra],
        env=os.environ.copy(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port, timeout=90.0)  # FastMCP with its auth routes starts slowly on a busy machine
        yield f"http://{HOST}:{port}/mcp"
    finally:
        stop(process)


def stop(process: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Terminate `process`, kill it if it outlives `timeout`, and reap it."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, timeout: float = 15.0, host: str = HOST) -> None:
    """Block until something accepts TCP connections on host:port."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, port), timeout=0.5):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"nothing listening on {host}:{port} after {timeout}s") from None
            time.sleep(0.05)


@pytest.fixture
def panels() -> Iterator[list]:
    """Live widgets and panels made by a test; closed afterwards so the render pump lets go of them."""
    made: list = []
    yield made
    for panel in made:
        panel.close()


@pytest.fixture
def shown_as() -> Iterator[Callable[..., Any]]:
    """`shown_as("ipython")`: calls show what they show in that environment ("kernel",
    "ipython", "script"), through the front end given (the notebook's by default); the
    front end in use before comes back after the test."""
    from mcp_notebook.api.display import frontend
    from mcp_notebook.notebook.display import NotebookFrontEnd

    previous = frontend.current()

    def use(where: str, front_end: Any = None) -> None:
        frontend.use(front_end if front_end is not None else NotebookFrontEnd(where))

    yield use
    frontend.use(previous)


@pytest.fixture
def port() -> int:
    return free_port()


@contextlib.contextmanager
def magics_shell() -> Iterator[Any]:
    """IPython's InteractiveShell with the %mcp magics loaded; unloaded and the shell cleared
    after. The `shell` and `module_shell` fixtures below, for a test or a whole module."""
    from IPython.core.interactiveshell import InteractiveShell

    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    yield ip
    ip.run_line_magic("unload_ext", "mcp_notebook")
    InteractiveShell.clear_instance()


@pytest.fixture
def shell() -> Iterator[Any]:
    """`magics_shell()` for one test."""
    with magics_shell() as ip:
        yield ip


@pytest.fixture(scope="module")
def module_shell() -> Iterator[Any]:
    """`magics_shell()` shared by a module's tests."""
    with magics_shell() as ip:
        yield ip


# ------------------------------------------------------ connections to the peers


@pytest.fixture
def sdk() -> Iterator[Any]:
    """A legacy connection named `sdk` to the official-SDK test server."""
    import mcp_notebook

    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="sdk") as conn:
        yield conn


@pytest.fixture
def conn() -> Iterator[Any]:
    """A legacy connection named `everything` to server-everything over stdio."""
    import mcp_notebook

    with mcp_notebook.connect(server_everything_cmd(), name="everything", era="legacy") as c:
        yield c


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """server-everything in streamableHttp mode on 127.0.0.1, shared by the module: its MCP URL."""
    from test_http import everything  # tests/transports: the peer's HTTP modes, started and stopped

    with everything(free_port(), "streamableHttp") as base:
        yield base + "/mcp"


# ------------------------------------------------------ the user's own files


@pytest.fixture(scope="session", autouse=True)
def session_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """What a module-scoped fixture remembers (an era verdict when it connects) goes to a directory
    of the test session's too, never the user's; each test then gets its own (`private_data_dir`)."""
    folder = tmp_path_factory.mktemp("mcp-notebook-session-data")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_NOTEBOOK_DATA_DIR", str(folder))
        yield folder


@pytest.fixture(autouse=True)
def private_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Consent records, pinned tool definitions, tokens and era verdicts go to a fresh directory,
    never the user's, so each test probes from scratch as a new machine would; and no token to
    the user's keyring: keyring's `fail` backend, which we take for no
    keyring (kernels started by the test inherit both)."""
    folder = tmp_path_factory.mktemp("mcp-notebook-data")
    monkeypatch.setenv("MCP_NOTEBOOK_DATA_DIR", str(folder))
    monkeypatch.setenv("PYTHON_KEYRING_BACKEND", "keyring.backends.fail.Keyring")
    return folder


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(home, project): a fresh HOME with no client's configuration in it, and an empty
    project folder made the working directory; the user data directory left to platformdirs,
    which now finds it under the fresh HOME. No real configuration file is read."""
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for var in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "APPDATA", "MCP_NOTEBOOK_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.chdir(project)
    return home, project


# ------------------------------------------------------------ leftover children


def _read_stat(pid: int) -> tuple[int, str, str] | None:
    """(ppid, state, comm) of pid from /proc, or None if it is gone."""
    try:
        data = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError, OSError):
        return None
    # comm is in parentheses and may itself contain spaces or ')'.
    lparen, rparen = data.find("("), data.rfind(")")
    if lparen < 0 or rparen < 0:
        return None
    comm = data[lparen + 1 : rparen]
    fields = data[rparen + 2 :].split()
    try:
        return int(fields[1]), fields[0], comm
    except (IndexError, ValueError):
        return None


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip() or "?"


def descendants(root: int | None = None) -> dict[int, str]:
    """Live (non-zombie) descendants of ``root`` (default: this process): {pid: cmdline}."""
    root = os.getpid() if root is None else root
    if not Path("/proc").is_dir():
        return {}
    parents: dict[int, int] = {}
    states: dict[int, str] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        stat = _read_stat(int(entry.name))
        if stat is not None:
            parents[int(entry.name)], states[int(entry.name)] = stat[0], stat[1]
    found: dict[int, str] = {}
    for pid in parents:
        seen: set[int] = set()
        cur = pid
        while cur not in seen and cur > 1:
            seen.add(cur)
            cur = parents.get(cur, 0)
            if cur == root:
                if states.get(pid) != "Z":
                    found[pid] = _cmdline(pid)
                break
    return found


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


@pytest.fixture(scope="session", autouse=True)
def no_leftover_child_processes():
    """Fail the session if child processes of pytest are still alive at its end.

    Children present before the first test (none, normally) are ignored. A
    short grace period lets processes that are already exiting go away; the
    ones still alive after it are listed, then killed (SIGKILL).
    """
    before = set(descendants())
    yield
    deadline = time.monotonic() + 5.0
    while True:
        _reap_zombies()
        left = {pid: cmd for pid, cmd in descendants().items() if pid not in before}
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    if left:
        listing = "\n".join(f"  pid {pid}: {cmd[:300]}" for pid, cmd in sorted(left.items()))
        # Report first, then do not leave them running after the session.
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        _reap_zombies()
        pytest.fail(
            f"{len(left)} child process(es) of the test session are still alive:\n{listing}",
            pytrace=False,
        )


# ------------------------------------------------------ every frame we send is valid


@pytest.fixture(autouse=True)
def client_frames_follow_the_schema(monkeypatch):
    """Validate every frame each connection of the test sent against its negotiated schema.

    Replies to server requests are checked against the result type of the request
    they answer (a pong against EmptyResult). Connections the test left open or listed are
    closed afterwards, so no test leaks a server, or a dead one's name, into the next.
    """
    from schema import validate_client_frame

    import mcp_notebook.api.connecting.registry as api

    made: list = []
    remember = api.remember

    def remember_and_collect(conn):
        made.append(conn)
        return remember(conn)

    monkeypatch.setattr(api, "remember", remember_and_collect)
    yield
    for conn in made:  # open, or closed by its server and still listed (as a user would read it)
        if not conn.closed or api.connections().get(conn.name) is conn:
            conn.close()
    for conn in made:
        version = conn.protocol_version
        server_requests: dict = {}
        for entry in conn.trace.frames():
            if entry.detail.get("via") == "app":
                continue  # an MCP App's postMessage JSON-RPC (its own protocol), not a frame to the server
            if entry.direction == "in" and entry.kind == "request":
                params = entry.message.get("params")
                server_requests[entry.id] = (entry.method, isinstance(params, dict) and isinstance(params.get("task"), dict))
            elif entry.direction == "out":
                answers, as_task = (
                    server_requests.get(entry.id, (None, False)) if entry.kind in ("response", "error") else (None, False)
                )
                validate_client_frame(
                    entry.message, _sent_at(entry.message, version), answers_method=answers, task_augmented=as_task
                )


def _sent_at(frame: object, negotiated: str | None) -> str | None:
    """The version a frame was sent under: its own `_meta` says so for modern frames (an era
    probe that preceded a legacy handshake included), `initialize` names the version it offers
    (one offered beside a slow probe, on a connection that then went modern, included), else
    the negotiated version."""
    params = frame.get("params") if isinstance(frame, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get("io.modelcontextprotocol/protocolVersion") if isinstance(meta, dict) else None
    if isinstance(frame, dict) and frame.get("method") == "initialize" and isinstance(params, dict):
        version = params.get("protocolVersion")
    return version if isinstance(version, str) else negotiated
