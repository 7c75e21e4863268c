"""Fixtures some magics' tests share (imported by name, as `from shell_fixtures import ev as ev`):
an IPython shell with the extension loaded, and legacy connections named `ev` (server-everything)
and `fm` (the FastMCP peer), each closed after its test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import fastmcp_server_cmd, server_everything_cmd
from IPython.core.interactiveshell import InteractiveShell

import mcp_notebook


@pytest.fixture
def shell() -> InteractiveShell:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    return ip


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
