"""Commands that start the test peers, and the ports they listen on.

Peers (servers we did not write the protocol for):

* ``server_everything_cmd()``: @modelcontextprotocol/server-everything (Node),
  installed by ``make peers`` into tests/peers/node_modules, run with the
  tests/peers/loopback.cjs preload so its HTTP modes bind 127.0.0.1 only.
* ``sdk_server_cmd(*extra)``: tests/servers/sdk_server.py (mcp==2.3.0).
* ``fastmcp_server_cmd(*extra)``: tests/servers/fastmcp_server.py (FastMCP 4.1.6).
* ``batch_server_cmd()``: tests/servers/batch_server.py (FastMCP 4.1.6), what a batch did to it.

Every server is bound to 127.0.0.1, and every one a helper starts is stopped and reaped.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
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


def slowing_server_cmd(*extra: str) -> list[str]:
    """argv for the FastMCP server that slows down (or exits) after N calls; extra e.g. ``--slow-after 20``."""
    return [sys.executable, str(SERVERS_DIR / "slowing_server.py"), *extra]


def fastmcp_server_cmd(*extra: str) -> list[str]:
    """argv for the FastMCP test server; extra e.g. ``--ping-interval-ms 50``."""
    return [sys.executable, str(SERVERS_DIR / "fastmcp_server.py"), *extra]


def batch_server_cmd() -> list[str]:
    """argv for the FastMCP server `conn.map`'s tests call over rows (calls met in flight, failures by row)."""
    return [sys.executable, str(SERVERS_DIR / "batch_server.py")]


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


# A FastMCP server file a test edits (its one tool's description), for reconnect and reload.
EDITABLE_SERVER = """
from fastmcp import FastMCP

mcp = FastMCP("edited")


@mcp.tool(description={description!r})
def greet(name: str) -> str:
    return "hello " + name


if __name__ == "__main__":
    mcp.run(show_banner=False)
"""


def write_editable_server(path: Path, description: str) -> Path:
    """Write (or rewrite) the editable FastMCP server at `path`, its tool `greet` described as `description`."""
    path.write_text(EDITABLE_SERVER.format(description=description))
    return path
