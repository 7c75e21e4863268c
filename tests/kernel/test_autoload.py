"""After `pip install` of the wheel, a new kernel has `%mcp` without `%load_ext`; the opt-out works.

Builds the wheel, installs it (with ipykernel) into a fresh virtual environment that
cannot see this checkout or the dev venv, and starts real kernels on that environment's
Python. pip takes the dependencies from the package index (or its cache): ~10-60 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import venv
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.kernelspec import KernelSpec, KernelSpecManager
from jupyter_client.manager import KernelManager

REPO = Path(__file__).resolve().parents[2]
STARTUP = "etc/ipython/startup/50-mcp-notebook.py"
SERVER_CONFIG = "etc/jupyter/jupyter_server_config.d/mcp-notebook.json"
OPT_OUT = "MCP_NOTEBOOK_NO_AUTOLOAD"

pytestmark = [pytest.mark.slow, pytest.mark.kernel, pytest.mark.timeout(600)]


def _clean_env(**extra: str) -> dict[str, str]:
    """This process's environment, minus anything that would let the venv see the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", OPT_OUT, "VIRTUAL_ENV")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    env.update(extra)
    return env


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=480, **kwargs)
    assert result.returncode == 0, f"{argv} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return result


class FreshVenv:
    def __init__(self, root: Path, wheel: Path) -> None:
        self.root = root
        self.wheel = wheel
        self.python = root / "bin" / "python"

    def env(self, tmp: Path, **extra: str) -> dict[str, str]:
        return _clean_env(IPYTHONDIR=str(tmp / "ipython"), **extra)


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> FreshVenv:
    base = tmp_path_factory.mktemp("fresh-venv")
    wheels = base / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", str(REPO), "--no-deps", "-w", str(wheels), "-q"], env=_clean_env())
    (wheel,) = wheels.glob("mcp_notebook-*.whl")
    root = base / "venv"
    venv.EnvBuilder(with_pip=True, clear=True).create(root)
    _run([str(root / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel), "ipykernel"], env=_clean_env(), cwd=base)
    return FreshVenv(root, wheel)


class _Spec(KernelSpecManager):
    python = ""

    def get_kernel_spec(self, kernel_name: str) -> KernelSpec:  # type: ignore[override]
        return KernelSpec(
            argv=[self.python, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            display_name="fresh venv",
            language="python",
            interrupt_mode="signal",
        )


@pytest.fixture
def fresh_kernel(fresh_venv: FreshVenv, tmp_path: Path) -> Iterator[Any]:
    """`start(**env)`: a client of a new kernel on the fresh venv's Python, cwd = tmp_path."""
    started: list[tuple[KernelManager, Any]] = []

    def start(**extra_env: str) -> Any:
        spec = _Spec()
        spec.python = str(fresh_venv.python)
        km = KernelManager(kernel_name="fresh", kernel_spec_manager=spec)
        km.start_kernel(env=fresh_venv.env(tmp_path, **extra_env), cwd=str(tmp_path))
        client = km.client()
        client.start_channels()
        started.append((km, client))
        client.wait_for_ready(timeout=60)
        return client

    yield start
    for km, client in started:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def run_cell(client: Any, code: str) -> str:
    """Execute `code`; its stdout. Fails the test on an error or on stderr output."""
    out: list[str] = []
    errors: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            (out if content["name"] == "stdout" else errors).append(content["text"])
        elif kind == "error":
            errors.append("\n".join(content["traceback"]))

    reply = client.execute_interactive(code, output_hook=hook, timeout=60)
    assert reply["content"]["status"] == "ok" and not errors, "".join(errors)
    return "".join(out)


PROBE = "ip = get_ipython(); print(ip.find_line_magic('mcp') is not None, 'mcp_notebook' in ip.extension_manager.loaded)"


def test_wheel_installs_the_startup_file(fresh_venv: FreshVenv) -> None:
    with zipfile.ZipFile(fresh_venv.wheel) as wheel:
        names = wheel.namelist()
    assert f"mcp_notebook-0.1.0.data/data/{STARTUP}" in names
    installed = fresh_venv.root / STARTUP
    assert installed.is_file()
    # IPython reads <sys.prefix>/etc/ipython/startup; the venv's prefix is its root.
    prefix = _run([str(fresh_venv.python), "-c", "import sys; print(sys.prefix)"], env=_clean_env()).stdout.strip()
    assert Path(prefix).resolve() == fresh_venv.root.resolve()
    where = _run([str(fresh_venv.python), "-c", "import mcp_notebook; print(mcp_notebook.__file__)"],
                 env=_clean_env(), cwd=fresh_venv.root).stdout.strip()  # fmt: skip
    assert Path(where).resolve().is_relative_to(fresh_venv.root.resolve()), "the venv must use the installed wheel"


def test_wheel_enables_the_server_extension_in_the_environments_jupyter_servers(fresh_venv: FreshVenv) -> None:
    with zipfile.ZipFile(fresh_venv.wheel) as wheel:
        assert f"mcp_notebook-0.1.0.data/data/{SERVER_CONFIG}" in wheel.namelist()
    enabled = json.loads((fresh_venv.root / SERVER_CONFIG).read_text())  # Jupyter reads <sys.prefix>/etc/jupyter
    assert enabled == {"ServerApp": {"jpserver_extensions": {"mcp_notebook.server_extension": True}}}
    points = "import mcp_notebook.server_extension as e; print(e._jupyter_server_extension_points())"
    assert "mcp_notebook.server_extension" in _run([str(fresh_venv.python), "-c", points], env=_clean_env()).stdout


def test_new_kernel_has_mcp_without_load_ext(fresh_kernel: Any) -> None:
    client = fresh_kernel()
    assert run_cell(client, PROBE).split() == ["True", "True"]
    # The startup file leaves nothing behind in the user's namespace.
    assert run_cell(client, "print(sorted(k for k in get_ipython().user_ns if 'mcp' in k.lower()))").strip() == "[]"
    # And the magics work, on the demo server the wheel ships.
    out = run_cell(client, "import mcp_notebook\nconn = mcp_notebook.demo(keepalive=None)\nrtts = %mcp ping demo -n 2 -i 0.1\n"
                           "print(len(rtts), conn.era)\n%mcp disconnect demo")  # fmt: skip
    assert "2 legacy" in out and "closed 'demo'" in out


def test_opt_out_keeps_kernel_plain(fresh_kernel: Any) -> None:
    client = fresh_kernel(**{OPT_OUT: "1"})
    assert run_cell(client, PROBE).split() == ["False", "False"]
    run_cell(client, "%load_ext mcp_notebook")  # loading by hand still works
    assert run_cell(client, PROBE).split() == ["True", "True"]


def test_startup_file_is_silent_and_kernel_only(fresh_venv: FreshVenv, tmp_path: Path) -> None:
    """Terminal IPython is left alone; in a (stand-in) kernel shell the file prints nothing."""
    env = fresh_venv.env(tmp_path)
    ipython = fresh_venv.root / "bin" / "ipython"
    terminal = _run([str(ipython), "--no-banner", "-c", PROBE], env=env, cwd=tmp_path)
    assert terminal.stdout.split() == ["False", "False"] and not terminal.stderr.strip()
    script = textwrap.dedent(f"""
        import contextlib, io, runpy, sys
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance()
        shell.kernel = object()  # what makes a shell a kernel's, to the startup file
        buffer = io.StringIO()
        with contextlib.redirect_stdout(buffer), contextlib.redirect_stderr(buffer):
            runpy.run_path(sys.prefix + "/{STARTUP}")
        sys.__stdout__.write(repr(buffer.getvalue()) + " " + str("mcp_notebook" in shell.extension_manager.loaded))
    """)
    shown = _run([str(fresh_venv.python), "-c", script], env=env, cwd=tmp_path).stdout.split()
    assert shown == ["''", "True"]
