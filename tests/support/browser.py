"""What the browser tests share: Debian's Chromium, a Jupyter server to drive, and a page on it.

* `chromium` (session fixture): /usr/bin/chromium, installed here with apt-get where it is
  missing (never a browser download); the tests drive it with Playwright through
  `executable_path`.
* `jupyter_lab` and `notebook7` (fixtures): JupyterLab or Jupyter Notebook 7 on 127.0.0.1
  with a token, serving tmp_path/root, its settings and runtime files in tmp_path too;
  stopped at the end with the kernels it started (and they with their servers), its log
  (kernel stderr included) read all along.
* `chromium_page(...)`: a traced page in headless Chromium; when the block in it fails, the
  Playwright trace (trace.zip) and a screenshot (failure.png) are left in tmp_path and the
  tail of the server's log is printed. `browse(...)` opens a notebook in it, waits for the
  kernel and runs a check.

The test folders name the fixtures in their conftest.py (tests/browser, tests/jupyterhub).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import Locator, Page, sync_playwright

from mcp_notebook.demo_server import LineLog
from support.servers import free_port, stop

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
WIDTH = 1280


def _install_chromium() -> str | None:
    """Install Debian's chromium with apt-get; None on success, else why it could not be."""
    apt = shutil.which("apt-get")
    if apt is None:
        return "apt-get is not available (not a Debian-like system)"
    if os.geteuid() != 0:
        return "installing chromium with apt-get needs root"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for argv in ([apt, "update", "-qq"], [apt, "install", "-y", "-qq", "chromium"]):
        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"{' '.join(argv)} failed: {exc}"
        if done.returncode != 0:
            return f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-500:]}"
    return None if CHROMIUM.exists() else "apt-get installed chromium, but /usr/bin/chromium is missing"


@pytest.fixture(scope="session")
def chromium() -> str:
    if not CHROMIUM.exists():
        problem = _install_chromium()
        if problem is not None:
            pytest.skip(f"Debian's Chromium is not installed and cannot be: {problem}")
    return str(CHROMIUM)


@dataclass(frozen=True)
class Lab:
    """A running Jupyter server: the folder it serves, where it listens, its process and its log."""

    root: Path
    base: str
    token: str
    pid: int
    log: LineLog
    tree: str = "lab/tree"  # where the front end opens a notebook

    def url(self, notebook: str) -> str:
        """The URL that opens `notebook` (a file in `root`) in the front end."""
        return f"{self.base}/{self.tree}/{notebook}?token={self.token}"


@dataclass(frozen=True)
class _FrontEnd:
    """How to start one Jupyter front end: `python -m module`, its application class (for the
    settings), the page its start-up line announces, where it opens notebooks, more options."""

    module: str
    app: str
    ready: str
    tree: str
    options: tuple[str, ...] = ()


JUPYTERLAB = _FrontEnd(
    "jupyterlab",
    "LabApp",
    "lab",
    "lab/tree",
    ("--LabApp.news_url=", "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"),
)
NOTEBOOK7 = _FrontEnd("notebook", "JupyterNotebookApp", "tree", "notebooks")


@contextlib.contextmanager
def _serve(front_end: _FrontEnd, tmp_path: Path) -> Iterator[Lab]:
    """The front end on 127.0.0.1 with a token, serving tmp_path/root, until the block ends."""
    root = tmp_path / "root"
    root.mkdir()
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    app = front_end.app
    argv = [
        sys.executable, "-m", front_end.module, "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--{app}.workspaces_dir={tmp_path / 'workspaces'}", f"--{app}.user_settings_dir={tmp_path / 'settings'}",
        f"--{app}.expose_app_in_browser=True", *front_end.options,
    ]  # fmt: skip
    if os.geteuid() == 0:
        argv.append("--allow-root")
    server = subprocess.Popen(argv, env=env, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)  # fmt: skip
    assert server.stderr is not None
    log = LineLog(server.stderr)
    try:
        log.wait_for(rf"http://127\.0\.0\.1:{port}/{front_end.ready}\?token=", timeout=90)
        yield Lab(root=root, base=f"http://127.0.0.1:{port}", token=token, pid=server.pid, log=log, tree=front_end.tree)
    finally:
        stop(server, timeout=30)  # it shuts its kernels down, and the kernels their demo servers
        log.join(5)


@pytest.fixture
def jupyter_lab(tmp_path: Path) -> Iterator[Lab]:
    """JupyterLab on 127.0.0.1 with a token, serving tmp_path/root (kernel logs go to its log)."""
    # Never ask about Jupyter news: that toast would lie over the page (and the screenshots).
    notification = tmp_path / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text('{"fetchNews": "false", "checkForUpdates": false}')
    with _serve(JUPYTERLAB, tmp_path) as lab:
        yield lab


@pytest.fixture
def notebook7(tmp_path: Path) -> Iterator[Lab]:
    """Jupyter Notebook 7 on 127.0.0.1 with a token, serving tmp_path/root."""
    pytest.importorskip("notebook")
    with _serve(NOTEBOOK7, tmp_path) as lab:
        yield lab


def write_notebook(path: Path, *cells: str) -> None:
    """A notebook of these code cells, on the python3 kernel."""
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(cell) for cell in cells],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(notebook, path)


@contextlib.contextmanager
def chromium_page(chromium: str, lab: Lab, tmp_path: Path, height: int = 1600) -> Iterator[Page]:
    """A page in headless Chromium, WIDTH by `height` px; if the block fails, the Playwright trace
    and a screenshot are saved in tmp_path and the lab's log (kernel stderr included) is printed."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": WIDTH, "height": height})
        context.tracing.start(screenshots=True, snapshots=True)
        page = context.new_page()
        failed = True
        try:
            yield page
            failed = False
        finally:
            if failed:
                context.tracing.stop(path=str(tmp_path / "trace.zip"))
                page.screenshot(path=str(tmp_path / "failure.png"))
                print("JupyterLab log (kernel stderr included):", *lab.log.tail(60), sep="\n")
            else:
                context.tracing.stop()
            browser.close()


def open_with_kernel(page: Page, url: str) -> None:
    """Open a notebook and wait until its kernel is connected and idle."""
    page.goto(url)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.connectionStatus === 'connected' && k.status === 'idle'; }",
        timeout=90_000,
    )


def browse(chromium: str, lab: Lab, name: str, tmp_path: Path, check: Callable[[Page], None]) -> None:
    """Open the notebook `name` (in lab.root) on a `chromium_page`, wait for its kernel, run `check(page)`."""
    with chromium_page(chromium, lab, tmp_path) as page:
        open_with_kernel(page, lab.url(name))
        check(page)


def run_cell(page: Page, cell: Locator) -> None:
    """Run a cell as a user does: click into its editor, press Shift+Enter."""
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")
