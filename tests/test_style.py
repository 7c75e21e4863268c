"""The code is clean by the project's own tools: ruff finds nothing (lint and format), and mypy
(strict) and pyright (standard, `[tool.pyright]` in pyproject.toml) find no error in the package.

pyright is the npm package, pinned and locked with the Node test peers (`make peers`, which
`make test` runs, installs it with `npm ci`): once installed it runs offline, where PyPI's
`pyright` downloads its Node code at first run."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PYRIGHT = REPO / "tests" / "peers" / "node_modules" / "pyright" / "index.js"
SOURCES = ["mcp_notebook", "tests", "bench"]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent)) or shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed (it comes with the test extra)")
    return found


def test_ruff_finds_nothing():
    run = subprocess.run([_tool("ruff"), "check", *SOURCES], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_the_code_is_formatted():
    run = subprocess.run([_tool("ruff"), "format", "--check", *SOURCES], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_mypy_finds_no_error():
    run = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


@pytest.mark.node
def test_pyright_finds_no_error():
    node = shutil.which("node")
    if node is None or not PYRIGHT.is_file():
        pytest.skip("pyright is not installed (`make peers` installs it with the Node test peers)")
    # The interpreter running the tests is the one whose packages pyright resolves imports in.
    run = subprocess.run(
        [node, str(PYRIGHT), "--outputjson", "--pythonpath", sys.executable], cwd=REPO, capture_output=True, text=True
    )
    report = json.loads(run.stdout)
    found = [
        f"{d['file']}:{d['range']['start']['line'] + 1}: {d['severity']}: {d['message']} ({d.get('rule', '')})"
        for d in report["generalDiagnostics"]
        if d["severity"] in ("error", "warning")
    ]
    assert not found and run.returncode == 0, "\n".join(found) or run.stderr
    assert report["summary"]["filesAnalyzed"] > 100, report["summary"]  # the whole package, not a corner of it
