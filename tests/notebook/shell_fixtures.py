"""Fixtures some magics' tests share (imported by name, as `from shell_fixtures import ev as ev`):
legacy connections named `ev` (server-everything) and `fm` (the FastMCP peer), each closed after
its test. The shell with the extension loaded is tests/conftest.py's `shell`."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import fastmcp_server_cmd, server_everything_cmd

import mcp_notebook


@pytest.fixture
def ev() -> Iterator[mcp_notebook.Connection]:
    conn = mcp_notebook.connect(server_everything_cmd(), name="ev", era="legacy")
    yield conn
    conn.close()


@pytest.fixture
def fm() -> Iterator[mcp_notebook.Connection]:
    conn = mcp_notebook.connect(fastmcp_server_cmd("--ping-interval-ms", "60000"), name="fm", era="legacy")
    yield conn
    conn.close()
