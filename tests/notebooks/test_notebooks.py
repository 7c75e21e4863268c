"""Every notebook in notebooks/ runs top to bottom on a real kernel, as a teacher would run it."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

from jupyter_client.manager import KernelManager  # noqa: E402
from kernels import KERNEL_NAME, VenvKernelSpecManager  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))

pytestmark = [pytest.mark.kernel]
# What the demo server's authorization server issues (access and refresh tokens, codes, client secrets).
ISSUED_SECRET = re.compile(r"demo-(?:at|rt|code|cs)-[A-Za-z0-9_-]{8,}")


@pytest.mark.timeout(300)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_top_to_bottom(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = nbformat.read(path, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit notebooks without outputs"
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))  # `%mcp servers` finds no real client's configuration
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=VenvKernelSpecManager())
    client = nbclient.NotebookClient(nb, km=km, timeout=120, resources={"metadata": {"path": str(path.parent)}})
    try:
        client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    finally:
        if km.has_kernel:  # nbclient leaves a kernel manager it was given running
            km.shutdown_kernel(now=False)
    outputs = json.dumps([cell.get("outputs", []) for cell in nb.cells])
    assert not ISSUED_SECRET.findall(outputs), "an OAuth secret the demo server issued shows in the outputs"
