"""`close_all()` racing a `connect()`: a connection being opened is closed too, its server
stopped, and it is never listed; the connect raises ConnectionClosed.

The servers hold their `initialize` answer until the test says so (a scripted stdio server,
tests/servers/held_server.py, and a scripted HTTP one here): the test calls `close_all()`
while the handshake is in flight, then lets the answer go. The other windows of the race
(`close_all` while the user is asked for consent; after the handshake, before the
connection is registered) are driven through the code that runs in them.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from support.processes import descendants
from support.servers import SERVERS_DIR, sdk_server_cmd

import mcp_notebook
from mcp_notebook import ConnectionClosed
from mcp_notebook.api.connecting import connect as connecting
from mcp_notebook.api.display import frontend

WAIT = 30.0  # seconds any step of the test waits for the other side at most


class Attempt:
    """A connect in a thread of its own: what it returned, or raised."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.result: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, args=args, kwargs=kwargs, name="test-connect", daemon=True)
        self.thread.start()

    def _run(self, *args: Any, **kwargs: Any) -> None:
        try:
            self.result = mcp_notebook.connect(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - the test reads it
            self.error = exc

    def outcome(self) -> Any:
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        if self.result is not None:
            self.result.close()
        return self.error if self.error is not None else self.result


def test_close_all_during_a_stdio_handshake_stops_the_server_and_lists_nothing() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:
        listener.settimeout(WAIT)
        command = [sys.executable, str(SERVERS_DIR / "held_server.py"), str(listener.getsockname()[1])]
        attempt = Attempt(command, name="held", era="legacy")
        server, _ = listener.accept()  # the server has read initialize, and holds its answer
        with server:
            server.settimeout(WAIT)
            pid = int(server.makefile().readline())
            mcp_notebook.close_all()
            try:
                server.sendall(b"go")  # the answer goes out, if the server is still there to send it
            except OSError:
                pass
    outcome = attempt.outcome()
    assert isinstance(outcome, ConnectionClosed), outcome
    assert "held" not in mcp_notebook.connections()
    assert pid not in descendants()
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # reaped, not a zombie


class HeldHttp(BaseHTTPRequestHandler):
    """Streamable HTTP, just enough: `initialize` answered once the test releases it."""

    asked = threading.Event()
    release = threading.Event()

    def do_POST(self) -> None:
        message = json.loads(self.rfile.read(int(self.headers["content-length"])))
        if "id" not in message:
            self._answer(202, b"")
            return
        if message["method"] == "initialize":
            self.asked.set()
            self.release.wait(WAIT)
            result = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {},
                "serverInfo": {"name": "h", "version": "0"},
            }
        else:
            result = {}
        self._answer(200, json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}).encode())

    def do_GET(self) -> None:
        self._answer(405, b"")

    def do_DELETE(self) -> None:
        self._answer(200, b"")

    def _answer(self, status: int, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", "application/json")
        self.send_header("mcp-session-id", "s-1")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass  # the client is gone

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def held_http() -> Iterator[str]:
    HeldHttp.asked.clear()
    HeldHttp.release.clear()
    server = ThreadingHTTPServer(("127.0.0.1", 0), HeldHttp)
    thread = threading.Thread(target=server.serve_forever, name="held-http")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        HeldHttp.release.set()
        server.shutdown()
        server.server_close()
        thread.join(WAIT)


def test_close_all_during_an_http_handshake_closes_it_and_lists_nothing(held_http: str) -> None:
    attempt = Attempt(held_http, name="held-http", era="legacy", transport="http", auth=None)
    assert HeldHttp.asked.wait(WAIT)
    mcp_notebook.close_all()
    HeldHttp.release.set()
    outcome = attempt.outcome()
    assert isinstance(outcome, ConnectionClosed), outcome
    assert "held-http" not in mcp_notebook.connections()


def test_a_connection_that_came_up_as_close_all_ran_is_closed_not_listed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The handshake is done, the connection not yet registered: close_all() then takes it."""
    opened: list[Any] = []

    def close_all_first(target: Any, session: Any) -> None:
        opened.append(session)
        mcp_notebook.close_all()

    monkeypatch.setattr(connecting, "remember_era", close_all_first)
    with pytest.raises(ConnectionClosed, match="close_all"):
        mcp_notebook.connect(sdk_server_cmd(), name="late", era="legacy")
    assert "late" not in mcp_notebook.connections()
    [session] = opened
    assert session.closed and not [pid for pid, cmd in descendants().items() if "sdk_server.py" in cmd]


def test_close_all_while_the_user_is_asked_for_consent_starts_nothing(config_home: Any) -> None:
    _, project = config_home
    entry = {"command": sys.executable, "args": [str(SERVERS_DIR / "sdk_server.py")]}
    (project / "mcp.json").write_text(json.dumps({"mcpServers": {"sdk": entry}}))

    class ClosesAll(frontend.FrontEnd):
        def ask_consent(self, request: Any) -> bool:
            mcp_notebook.close_all()  # another cell, say, while the form waits
            return True

    previous = frontend.current()
    frontend.use(ClosesAll())
    try:
        with pytest.raises(ConnectionClosed, match="close_all"):
            mcp_notebook.connect(config="sdk")
    finally:
        frontend.use(previous)
    assert "sdk" not in mcp_notebook.connections()
    assert not [pid for pid, cmd in descendants().items() if "sdk_server.py" in cmd]
