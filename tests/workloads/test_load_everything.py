"""`mcp_notebook.load` in the kernel against server-everything (Node), over stdio (a server process
per session) and Streamable HTTP (one server on 127.0.0.1): every call recorded once, no server left."""

from __future__ import annotations

import pytest
from support.processes import descendants
from support.servers import server_everything_cmd
from support.waiting import wait_until

import mcp_notebook

pytestmark = [pytest.mark.node]


def everything_processes() -> set[int]:
    return {pid for pid, cmd in descendants().items() if "server-everything" in cmd}


def test_server_everything_over_stdio_and_http(url):
    before = everything_processes()
    stdio = mcp_notebook.load(server_everything_cmd(), {"tool": "echo", "arguments": {"message": "m"}}, sessions=2, calls=20)
    http = mcp_notebook.load(url, {"tool": "echo", "arguments": {"message": "m"}}, sessions=4, calls=40)
    assert [len(stdio.calls), len(http.calls)] == [20, 40]
    assert all(c.ok for c in stdio.calls + http.calls)
    assert http.health.sessions == 4
    wait_until(lambda: not everything_processes() - before, "the stdio servers to exit")
