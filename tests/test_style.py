"""The code is clean by the project's own tools: ruff finds nothing (lint and format), and mypy,
strict over the whole package, finds no error."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
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
