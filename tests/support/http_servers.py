"""HTTP servers on 127.0.0.1 for a block (a peer's HTTP modes, a scripted raw server), and readers of what went over HTTP."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import mcp_notebook
from support.servers import sdk_server_cmd, server_everything_cmd, stop, wait_for_port

RAW_HTTP = [sys.executable, str(Path(__file__).parents[1] / "servers" / "raw_http_server.py")]


@contextlib.contextmanager
def serving(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[str]:
    """Run an HTTP server on 127.0.0.1:port for the block; its base URL."""
    process = subprocess.Popen(
        argv,
        env={**os.environ, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        wait_for_port(port)
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


def sdk_http(port: int, *extra: str) -> contextlib.AbstractContextManager[str]:
    return serving(sdk_server_cmd("--transport", "streamable-http", "--port", str(port), *extra), port)


def everything(port: int, mode: str) -> contextlib.AbstractContextManager[str]:
    return serving(server_everything_cmd(mode), port, {"PORT": str(port)})


def text_of(result: dict) -> str:
    return "".join(part.get("text", "") for part in result["content"])


def http_events(conn: mcp_notebook.Connection) -> list[tuple[str, int]]:
    return [(e.detail["method"], e.detail["status"]) for e in conn.trace.entries() if e.kind == "http"]
