"""`import mcp_notebook` stays light: the HTTP stack, ctypes, the demo server and the front-end
libraries are imported on first use, not with the package (`bench/import.py` times it).

Each check runs in a fresh interpreter, since this one has imported everything already.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAZY = (
    "httpx2",
    "h11",
    "ctypes",
    "ipywidgets",
    "IPython",
    "jsonschema",
    "mcp_notebook.demo_server",
    "mcp_notebook.transports.http",
)


def loaded_after(code: str) -> set[str]:
    """Which of the LAZY modules are in sys.modules after running `code` in a fresh interpreter."""
    script = f"{code}\nimport json, sys\nprint(json.dumps([m for m in {LAZY!r} if m in sys.modules]))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=True)
    return set(json.loads(proc.stdout.splitlines()[-1]))


def test_importing_the_package_imports_none_of_the_heavy_modules() -> None:
    assert loaded_after("import mcp_notebook") == set()


def test_the_http_stack_comes_with_the_first_url() -> None:
    code = (
        "import mcp_notebook\n"
        "from mcp_notebook.api.options import ConnectOptions\n"
        "from mcp_notebook.api.targets import prepare_session\n"
        "prepare_session('http://127.0.0.1:9/mcp', ConnectOptions())"
    )
    assert {"httpx2", "mcp_notebook.transports.http"} <= loaded_after(code)


def test_ctypes_comes_with_the_first_memory_trim() -> None:
    assert "ctypes" in loaded_after("from mcp_notebook.base.sizes import give_back_memory\ngive_back_memory()")
