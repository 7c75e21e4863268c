"""Every notebook in notebooks/ runs top to bottom on a real kernel with only what `make lab` installs.

`make lab` installs the package with its `lab` extra and no Node peers, and every lesson must
run there. Making a fresh virtualenv per test session would cost minutes here, so the kernel
runs on this interpreter held to that set instead:

* `lab_only/sitecustomize.py` (on the kernel's PYTHONPATH, inherited by the servers it starts)
  refuses to import any installed distribution outside the requirement closure of
  `mcp-notebook[lab]` (as this checkout's pyproject.toml states it): the test extra's
  `fastmcp`, `pytest`, `playwright`, ... are gone (its `mcp` is in the lab extra too: lesson 10);
* PATH has no folder with `node`, `npm` or `npx` in it;
* the notebooks run from a copy in tmp_path, so `../tests` (the test servers, the npm peers
  in tests/peers) is not beside them.

`test_the_kernel_sees_only_the_lab_install` checks that those fences stand.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

from jupyter_client.manager import KernelManager  # noqa: E402
from support.kernels import KERNEL_NAME, VenvKernelSpecManager  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
LAB_ONLY = Path(__file__).resolve().parent / "lab_only"
NODE_TOOLS = ("node", "npm", "npx")

pytestmark = [
    pytest.mark.node,
    pytest.mark.kernel,
    pytest.mark.skipif(sys.version_info < (3, 11), reason="lab_only/sitecustomize.py reads pyproject.toml with tomllib"),
]
# What the demo server's authorization server issues (access and refresh tokens, codes, client secrets).
ISSUED_SECRET = re.compile(r"demo-(?:at|rt|code|cs)-[A-Za-z0-9_-]{8,}")


def _path_without_node() -> str:
    folders = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(f for f in folders if f and not any(Path(f, tool).exists() for tool in NODE_TOOLS))


@pytest.fixture
def lab_only_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment kernels start in: lab install only, no Node; the notebooks' copy to run in."""
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # `%mcp servers` finds no real client's configuration
    monkeypatch.setenv("PATH", _path_without_node())
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(LAB_ONLY), str(REPO)]))
    monkeypatch.setenv("MCP_NOTEBOOK_PYPROJECT", str(REPO / "pyproject.toml"))
    monkeypatch.delenv("MCP_SPEC_DIR", raising=False)
    folder = tmp_path / "notebooks"
    shutil.copytree(REPO / "notebooks", folder)
    return folder


def _execute(nb: object, folder: Path) -> None:
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=VenvKernelSpecManager())
    client = nbclient.NotebookClient(nb, km=km, timeout=120, resources={"metadata": {"path": str(folder)}})
    try:
        client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    finally:
        if km.has_kernel:  # nbclient leaves a kernel manager it was given running
            km.shutdown_kernel(now=False)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, lab_only_env: Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit notebooks without outputs"
    _execute(nb, lab_only_env)
    outputs = json.dumps([cell.get("outputs", []) for cell in nb.cells])
    assert not ISSUED_SECRET.findall(outputs), "an OAuth secret the demo server issued shows in the outputs"


FENCES = """\
import importlib, os, shutil, subprocess, sys
assert [shutil.which(tool) for tool in ("node", "npm", "npx")] == [None, None, None]
assert not os.path.exists(os.path.join("..", "tests"))
for name in ("fastmcp", "pytest", "playwright", "mypy"):
    try:
        importlib.import_module(name)
    except ModuleNotFoundError:
        continue
    raise AssertionError(f"{name} is importable in the kernel")
import ipywidgets, jupyterlab, mcp, mcp_notebook  # what make lab installs (mcp: lesson 10's client)
child = subprocess.run([sys.executable, "-c", "import fastmcp"], capture_output=True, text=True)
assert "not installed by `make lab`" in child.stderr, child.stderr
"""


@pytest.mark.timeout(120)
def test_the_kernel_sees_only_the_lab_install(lab_only_env: Path) -> None:
    _execute(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(FENCES)]), lab_only_env)
