"""Fixtures of tests/notebook: legacy connections named `ev` (server-everything) and `fm` (the
FastMCP peer), each closed after its test, and `kernel_cell`, a pretend Jupyter cell
(tests/support/widgets.py, shared with tests/api). The shell with the extension loaded is
tests/conftest.py's `shell`; `ev_shell` is one with `ev` open."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.servers import fastmcp_server_cmd, server_everything_cmd
from support.widgets import kernel_cell as kernel_cell

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


@pytest.fixture
def ev_shell() -> Iterator[Any]:
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    conn = mcp_notebook.connect(server_everything_cmd(), name="ev", era="legacy")
    yield ip
    conn.close()
