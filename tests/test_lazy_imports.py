"""`import mcp_notebook` stays light: the package resolves its public names on first use (PEP 562),
so the runtime (asyncio, anyio), the HTTP stack, OAuth, configuration formats, ctypes, the demo
server and the front-end libraries are imported by what needs them, not with the package
(`bench/import.py` times it).

Each check runs in a fresh interpreter, since this one has imported everything already.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
LAZY = (
    "IPython",
    "ansi2html",
    "anyio",
    "anywidget",
    "asyncio",
    "ctypes",
    "fastjsonschema",
    "h11",
    "httpx2",
    "ipywidgets",
    "joserfc",
    "json5",
    "jsonschema",
    "keyring",
    "logging",
    "platformdirs",
    "traitlets",
    "mcp_notebook.api.connecting.connect",
    "mcp_notebook.demo_server",
    "mcp_notebook.notebook.frontend",
    "mcp_notebook.runtime",
    "mcp_notebook.session",
    "mcp_notebook.transports",
    "mcp_notebook.transports.http",
)


def fresh_interpreter(code: str, source: Path = REPO, options: Sequence[str] = ()) -> tuple[set[str], str]:
    """Run `code` in a fresh interpreter (started with `options`, `source` first on its path):
    which of the LAZY modules it has imported by the end, and what it wrote to stderr.
    `bench/import.py` times its imports with this too (options `-X importtime`)."""
    # Only `sys` (always loaded, so never timed) is imported after `code`.
    script = f"{code}\nimport sys\nprint(' '.join(m for m in {LAZY!r} if m in sys.modules))"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run(
        [sys.executable, *options, "-c", script],
        env=env,
        cwd=source,  # `-c` puts the working directory first on sys.path
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return set(proc.stdout.splitlines()[-1].split()), proc.stderr


def loaded_after(code: str) -> set[str]:
    """Which of the LAZY modules are in sys.modules after running `code` in a fresh interpreter."""
    return fresh_interpreter(code)[0]


def test_importing_the_package_imports_none_of_the_heavy_modules() -> None:
    assert loaded_after("import mcp_notebook") == set()


def test_a_public_name_brings_its_module_and_prints_as_the_packages() -> None:
    code = "import mcp_notebook\nassert repr(mcp_notebook.Trace) == \"<class 'mcp_notebook.Trace'>\""
    loaded = loaded_after(code)
    assert "mcp_notebook.session" in loaded
    assert not {"httpx2", "IPython", "mcp_notebook.api.connecting.connect", "mcp_notebook.runtime"} & loaded


def test_a_class_reached_from_its_own_module_prints_as_the_packages() -> None:
    """A traceback names mcp_notebook.ConnectionClosed even when nobody touched the package's name."""
    code = (
        "import mcp_notebook\n"
        "from mcp_notebook.base.errors import ConnectionClosed\n"
        "from mcp_notebook.api.connection import Connection\n"
        "assert ConnectionClosed.__module__ == Connection.__module__ == 'mcp_notebook'"
    )
    loaded_after(code)


def test_the_notebook_front_end_comes_with_the_first_thing_shown() -> None:
    code = (
        "import mcp_notebook\n"
        "from mcp_notebook.api.display import frontend\n"
        "assert type(frontend.current()).__name__ == 'NotebookFrontEnd'"
    )
    assert "mcp_notebook.notebook.frontend" in loaded_after(code)


def test_loading_the_extension_imports_the_magics_without_a_connection() -> None:
    code = (
        "from IPython.testing.globalipapp import start_ipython\n"
        "ip = start_ipython()\n"
        "ip.run_line_magic('load_ext', 'mcp_notebook')\n"
        "assert 'mcp' in ip.magics_manager.magics['line']"
    )
    loaded = loaded_after(code)
    assert "IPython" in loaded
    assert not {"httpx2", "mcp_notebook.transports.http", "mcp_notebook.demo_server"} & loaded


def test_the_http_stack_comes_with_the_first_url() -> None:
    code = (
        "import mcp_notebook\n"
        "from mcp_notebook.api.connecting.options import ConnectOptions\n"
        "from mcp_notebook.api.connecting.targets import prepare_session\n"
        "prepare_session('http://127.0.0.1:9/mcp', ConnectOptions())"
    )
    assert {"httpx2", "mcp_notebook.transports.http"} <= loaded_after(code)


def test_ctypes_comes_with_the_first_memory_trim() -> None:
    assert "ctypes" in loaded_after("from mcp_notebook.base.sizes import give_back_memory\ngive_back_memory()")


def test_the_schema_validators_come_with_the_first_frame_checked() -> None:
    code = "import mcp_notebook\nfrom mcp_notebook.api.connection import Connection\nmcp_notebook.Violation"
    assert not {"jsonschema", "fastjsonschema"} & loaded_after(code)
