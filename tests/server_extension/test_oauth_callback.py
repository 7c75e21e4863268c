"""The server extension under a real Jupyter server: the callback at
`{base_url}mcp-notebook/oauth/callback` hands an authorization response to the flow waiting
with its `state`, once, only to an authenticated user, through private files."""

from __future__ import annotations

import os
import secrets
import stat
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from support.servers import free_port, stop

from mcp_notebook.auth import handoff
from mcp_notebook.auth.handoff import Pending, announced
from mcp_notebook.demo_server import LineLog

pytest.importorskip("jupyter_server")


@dataclass(frozen=True)
class Server:
    url: str  # with the base_url
    token: str
    pid: int
    runtime: Path


@pytest.fixture
def jupyter_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Server]:
    """`jupyter server` with base_url /base/, enabled by the installed config file alone."""
    port, token = free_port(), secrets.token_hex(16)
    runtime = tmp_path / "runtime"
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(tmp_path / "config"), "JUPYTER_RUNTIME_DIR": str(runtime)}
    argv = [
        sys.executable, "-m", "jupyter_server", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", "--ServerApp.base_url=/base/",
        f"--ServerApp.root_dir={tmp_path}",
    ]  # fmt: skip
    if os.geteuid() == 0:
        argv.append("--allow-root")
    process = subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    log = LineLog(process.stderr)
    try:
        log.wait_for(r"mcp-notebook: the OAuth callback is at /base/mcp-notebook/oauth/callback", timeout=60)
        log.wait_for(rf"http://127\.0\.0\.1:{port}/base/", timeout=60)
        monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(runtime))  # the kernel's side shares it, as a kernel would
        yield Server(f"http://127.0.0.1:{port}/base/", token, process.pid, runtime)
    finally:
        stop(process, timeout=30)
        log.join(5)


def callback(server: Server, query: dict[str, str], *, authenticated: bool = True) -> httpx2.Response:
    headers = {"Authorization": f"token {server.token}"} if authenticated else {}
    return httpx2.get(f"{server.url}mcp-notebook/oauth/callback", params=query, headers=headers, follow_redirects=False)


def test_the_callback_hands_the_response_to_the_flow_waiting_with_its_state_once(jupyter_server: Server) -> None:
    redirect = f"{jupyter_server.url}mcp-notebook/oauth/callback"
    state, other = secrets.token_urlsafe(16), secrets.token_urlsafe(16)
    with Pending(state, redirect) as pending:
        directory = jupyter_server.runtime / handoff.SUBDIRECTORY
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        files = list(directory.glob("*.pending"))
        assert [stat.S_IMODE(f.stat().st_mode) for f in files] == [0o600]
        assert state not in files[0].name  # named by a hash of the state, never the state

        anonymous = callback(jupyter_server, {"code": "c-1", "state": state}, authenticated=False)
        assert anonymous.status_code in (302, 403)  # to the login page, not to the flow
        assert not pending.arrived.is_set()

        stranger = callback(jupyter_server, {"code": "c-evil", "state": other})
        assert stranger.status_code == 400 and "No notebook of yours is waiting" in stranger.text

        answered = callback(jupyter_server, {"code": "c-1", "state": state, "iss": "https://as.example"})
        assert answered.status_code == 200 and "Authorization is complete" in answered.text
        assert "c-1" not in answered.text
        assert pending.wait(30) == f"{redirect}?code=c-1&state={state}&iss=https%3A%2F%2Fas.example"

        again = callback(jupyter_server, {"code": "c-2", "state": state})
        assert again.status_code == 400  # single use: the pending flow was taken by the first answer
        assert list(directory.glob("*.response")) == []  # taken: deleted
    assert list(directory.glob("*.pending")) == []


def test_a_flow_that_ended_is_not_answered(jupyter_server: Server) -> None:
    state = secrets.token_urlsafe(16)
    Pending(state, f"{jupyter_server.url}mcp-notebook/oauth/callback").close()
    assert callback(jupyter_server, {"code": "c-1", "state": state}).status_code == 400
    assert list((jupyter_server.runtime / handoff.SUBDIRECTORY).glob(f"{handoff.key(state)}*")) == []


def test_the_server_announces_its_callback_to_its_kernels(jupyter_server: Server) -> None:
    record = announced([jupyter_server.pid])
    assert record is not None and record["base_url"] == "/base/" and record["url"].startswith("http://127.0.0.1:")
    server_file = jupyter_server.runtime / handoff.SUBDIRECTORY / "servers" / f"{jupyter_server.pid}.json"
    assert stat.S_IMODE(server_file.stat().st_mode) == 0o600
    assert announced([os.getpid()]) is None  # this process is no Jupyter server
