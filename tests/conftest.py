"""Fixtures every test folder shares: shells, connections to the peers, the user's own files in
a private directory per test, and two checks around every test (every frame sent follows the
schema; no child process of the session outlives it). Helpers live in tests/support.
"""

from __future__ import annotations

import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.processes import _reap_zombies, descendants
from support.servers import free_port, sdk_server_cmd, server_everything_cmd
from support.shells import magics_shell


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
    from mcp_notebook.notebook.frontend import NotebookFrontEnd

    previous = frontend.current()

    def use(where: str, front_end: Any = None) -> None:
        frontend.use(front_end if front_end is not None else NotebookFrontEnd(where))

    yield use
    frontend.use(previous)


@pytest.fixture
def port() -> int:
    return free_port()


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
    from support.http_servers import everything  # the peer's HTTP modes, started and stopped

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


@pytest.fixture(scope="session", autouse=True)
def session_tap_dir() -> Iterator[Path]:
    """Taps listen and record in a directory of the test session's, never the user's runtime
    directory: two runs at once (or a user's own tap of the same name) never meet. Short, under
    the temp dir: pytest's tmp paths are too long for a Unix socket's path."""
    with tempfile.TemporaryDirectory(prefix="tap-") as parent, pytest.MonkeyPatch.context() as patch:
        patch.setenv("MCP_NOTEBOOK_TAP_DIR", str(Path(parent) / "t"))
        yield Path(parent) / "t"


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
    from support.schema import validate_client_frame

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
