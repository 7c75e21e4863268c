"""A real JupyterHub for the tests, started by them: JupyterHub from PyPI, its proxy
(configurable-http-proxy, from npm with the other peers), the dummy authenticator, the local
process spawner with system users the fixture creates (and removes), and base_url /hub-test/.

* `hub` (fixture): the hub on 127.0.0.1, its API reached with a service token, two users whose
  servers it has started; everything it started is stopped with it.
* `Kernel`: a kernel in a user's server, driven over the server's websocket as a front end
  would (through the proxy, with the user's token), its messages read as they come.
* `login(page, hub, user)`: a browser page logged in to the hub as that user.

It skips, saying why, where jupyterhub, the proxy, useradd or root are missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2
import pytest

from mcp_notebook.demo_server import LineLog
from support.servers import PEERS_DIR, free_port, node_executable, stop

BASE = "/hub-test/"
CHP = PEERS_DIR / "node_modules" / "configurable-http-proxy" / "bin" / "configurable-http-proxy"
SINGLEUSER = Path(sys.executable).parent / "jupyterhub-singleuser"
VERSION = f"{sys.version_info.major}.{sys.version_info.minor}"


@dataclass
class User:
    name: str
    home: Path
    token: str = ""

    @property
    def data(self) -> Path:
        """Where mcp-notebook keeps this user's tokens, consent records and pins."""
        return self.home / ".local" / "share" / "mcp-notebook"

    @property
    def handoff(self) -> Path:
        return self.home / ".local" / "share" / "jupyter" / "runtime" / "mcp-notebook-oauth"


@dataclass
class Hub:
    url: str  # public, with the base_url: http://127.0.0.1:PORT/hub-test/
    api_token: str
    log: LineLog
    users: list[User] = field(default_factory=list)

    def api(self, method: str, path: str, **kwargs: Any) -> httpx2.Response:
        headers = {"Authorization": f"token {self.api_token}"}
        return httpx2.request(method, f"{self.url}hub/api/{path}", headers=headers, timeout=60, **kwargs)

    def server(self, user: User) -> str:
        return f"{self.url}user/{user.name}/"


def _requirements() -> str | None:
    if not all(shutil.which(tool) for tool in ("useradd", "userdel", "runuser")):
        return "useradd, userdel or runuser is not available to make the hub's system users"
    if os.geteuid() != 0:
        return "the local process spawner with two system users needs root (to create them and to spawn as them)"
    if not CHP.exists():
        return f"configurable-http-proxy is not installed ({CHP}; `make peers` installs it)"
    if not SINGLEUSER.exists():
        return "jupyterhub is not installed (the test extra has it)"
    return None


@contextlib.contextmanager
def system_users(count: int) -> Iterator[list[User]]:
    """`count` fresh system users with homes, removed (homes too) at the end."""
    made: list[User] = []
    try:
        for letter in "ab"[:count]:
            name = f"mcphub{letter}{secrets.token_hex(3)}"
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/sh", name], check=True, capture_output=True)
            entry = subprocess.run(["getent", "passwd", name], check=True, capture_output=True, text=True).stdout
            home = Path(entry.split(":")[5])
            made.append(User(name, home))
        yield made
    finally:
        for user in made:
            subprocess.run(["userdel", "--force", "--remove", user.name], capture_output=True)


def _runs_as(user: User, python: Path) -> bool:
    check = [python, "-c", "import jupyterhub.singleuser, mcp_notebook"]
    return subprocess.run(["runuser", "-u", user.name, "--", *check], capture_output=True).returncode == 0


@contextlib.contextmanager
def python_for(users: list[User]) -> Iterator[Path | None]:
    """An interpreter the users can run with this environment's packages: this one, or where it
    lives in a home they cannot enter (pyenv's in /root), the system's Python of the same
    version over this environment's site-packages and its etc/ (the installed Jupyter and
    IPython configuration files); None if neither works."""
    if all(_runs_as(user, Path(sys.executable)) for user in users):
        yield Path(sys.executable)
        return
    system = Path(f"/usr/bin/python{VERSION}")
    folder = Path(tempfile.mkdtemp(prefix="mcp-hub-python-", dir="/tmp"))
    try:
        folder.chmod(0o755)
        env = folder / "env"
        if not system.exists() or subprocess.run([system, "-m", "venv", "--without-pip", env], capture_output=True).returncode:
            yield None
            return
        site = sysconfig.get_paths()["purelib"]
        pth = env / "lib" / f"python{VERSION}" / "site-packages" / "test-env.pth"
        pth.write_text(f"import site; site.addsitedir({site!r})\n")
        (env / "etc").symlink_to(Path(sys.prefix) / "etc")
        python = env / "bin" / "python"
        yield python if all(_runs_as(user, python) for user in users) else None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _config(tmp_path: Path, port: int, api_token: str, users: list[User], python: Path) -> Path:
    url = f"http://127.0.0.1:{port}{BASE}"
    config = f"""
c.JupyterHub.bind_url = {url!r}
c.JupyterHub.public_url = {url!r}
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = {free_port()}
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:{free_port()}"
c.ConfigurableHTTPProxy.command = {[node_executable(), str(CHP)]!r}
c.ConfigurableHTTPProxy.pid_file = {str(tmp_path / "proxy.pid")!r}
c.JupyterHub.pid_file = {str(tmp_path / "hub.pid")!r}
c.JupyterHub.db_url = {"sqlite:///" + str(tmp_path / "hub.sqlite")!r}
c.JupyterHub.cookie_secret_file = {str(tmp_path / "cookie_secret")!r}
c.JupyterHub.authenticator_class = "dummy"
c.Authenticator.allowed_users = {set(u.name for u in users)!r}
c.JupyterHub.spawner_class = "localprocess"
c.Spawner.cmd = [{str(python)!r}, "-m", "jupyterhub.singleuser"]
c.Spawner.default_url = "/tree"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
c.JupyterHub.services = [{{"name": "tests", "api_token": {api_token!r}}}]
c.JupyterHub.load_roles = [{{"name": "tests", "services": ["tests"],
                             "scopes": ["admin:users", "admin:servers", "tokens", "read:users"]}}]
"""
    path = tmp_path / "jupyterhub_config.py"
    path.write_text(config)
    return path


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    problem = _requirements()
    if problem is not None:
        pytest.skip(problem)
    with system_users(2) as users, python_for(users) as python:
        if python is None:
            pytest.skip(f"no Python the hub's users can run: {sys.executable} is closed to them, and no /usr/bin/python{VERSION}")
        port, api_token = free_port(), secrets.token_hex(24)
        config = _config(tmp_path, port, api_token, users, python)
        process = subprocess.Popen(
            [sys.executable, "-m", "jupyterhub", "-f", str(config)],
            cwd=tmp_path,
            env={key: value for key, value in os.environ.items() if key != "MCP_NOTEBOOK_DATA_DIR"},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        log = LineLog(process.stderr)
        try:
            log.wait_for(r"JupyterHub is now running at", timeout=120)
            running = Hub(f"http://127.0.0.1:{port}{BASE}", api_token, log, users)
            for user in users:
                _start_server(running, user)
            yield running
        except BaseException:
            print("JupyterHub log:", *log.tail(80), sep="\n")
            raise
        finally:
            stop(process, timeout=60)  # it stops the proxy and the users' servers, and they their kernels
            log.join(5)


def _start_server(hub: Hub, user: User) -> None:
    assert hub.api("POST", "users", json={"usernames": [user.name]}).status_code in (201, 409)
    assert hub.api("POST", f"users/{user.name}/server").status_code in (201, 202)
    hub.log.wait_for(rf"User {user.name} took [\d.]+ seconds to start", timeout=120)
    answer = hub.api("POST", f"users/{user.name}/tokens", json={"note": "tests"})
    assert answer.status_code == 201, answer.text
    user.token = answer.json()["token"]


class Kernel:
    """A python3 kernel in `user`'s server, driven as a front end drives it (JSON over the
    server's websocket, through the hub's proxy); shut down on close."""

    def __init__(self, hub: Hub, user: User) -> None:
        import websocket  # websocket-client, which jupyter_server depends on

        self.base, self.headers = hub.server(user), {"Authorization": f"token {user.token}"}
        answer = httpx2.post(f"{self.base}api/kernels", json={"name": "python3"}, headers=self.headers, timeout=60)
        assert answer.status_code == 201, answer.text
        self.id = answer.json()["id"]
        channels = f"{self.base.replace('http', 'ws', 1)}api/kernels/{self.id}/channels"
        self.socket = websocket.create_connection(channels, header=[f"Authorization: token {user.token}"], timeout=120)
        self.session = uuid.uuid4().hex

    def send(self, code: str) -> str:
        """Start running `code`; the request's id, which its messages name as their parent."""
        msg_id = uuid.uuid4().hex
        header = {"msg_id": msg_id, "session": self.session, "username": "tests", "msg_type": "execute_request",
                  "version": "5.3", "date": ""}  # fmt: skip
        content = {"code": code, "silent": False, "store_history": False, "user_expressions": {}, "allow_stdin": False,
                   "stop_on_error": True}  # fmt: skip
        message = {"header": header, "parent_header": {}, "metadata": {}, "content": content, "channel": "shell"}
        self.socket.send(json.dumps(message))
        return msg_id

    def messages(self, msg_id: str) -> Iterator[dict[str, Any]]:
        """The messages `msg_id` caused, as they come, until its reply (a timeout raises)."""
        while True:
            raw = self.socket.recv()
            if not isinstance(raw, str):
                continue  # a message with binary buffers: no widget of ours sends one
            message = json.loads(raw)
            widget = message["msg_type"] in ("comm_open", "comm_msg")  # from the flow's thread: any parent
            if message.get("parent_header", {}).get("msg_id") != msg_id and not widget:
                continue
            yield message
            if message["msg_type"] == "execute_reply":
                return

    def run(self, code: str) -> str:
        """Run `code` to its end; what it printed (an error fails the test, with its traceback)."""
        printed = []
        for message in self.messages(self.send(code)):
            content = message["content"]
            if message["msg_type"] == "stream":
                printed.append(content["text"])
            elif message["msg_type"] == "error":
                pytest.fail("the cell failed:\n" + "\n".join(content["traceback"]))
        return "".join(printed)

    def close(self) -> None:
        self.socket.close()
        httpx2.delete(f"{self.base}api/kernels/{self.id}", headers=self.headers, timeout=60)


def login(page: Any, hub: Hub, user: User) -> None:
    """Log `page`'s browser context in to the hub as `user` (any password: the dummy authenticator)."""
    page.goto(f"{hub.url}hub/login?next={BASE}hub/home")
    page.fill("input[name=username]", user.name)
    page.fill("input[name=password]", "any")
    page.click("#login_submit")
    page.wait_for_url(f"{hub.url}hub/home*")
