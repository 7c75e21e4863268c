"""MCP Apps peers: the scripted apps server and the ext-apps example servers."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcp_notebook.notebook.magics import tools as magic_tools  # noqa: F401 - registers %mcp tools
from support.servers import PEERS_DIR, SERVERS_DIR, node_executable

PROBE = [sys.executable, str(SERVERS_DIR / "apps_server.py")]


def ext_apps(package: str) -> Path:
    entry = PEERS_DIR / "node_modules" / "@modelcontextprotocol" / package / "dist" / "index.js"
    if not entry.is_file():
        pytest.skip(f"{package} is not installed ({entry} missing): run `make peers`")
    return entry


def ext_apps_stdio(package: str) -> list[str]:
    return [node_executable(), str(ext_apps(package)), "--stdio"]
