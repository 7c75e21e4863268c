"""What the browser tests share: Debian's Chromium, a Jupyter server to drive, and a page on it.

* `chromium` (session fixture): /usr/bin/chromium, installed here with apt-get where it is
  missing (never a browser download); the tests drive it with Playwright through
  `executable_path`.
* `jupyter_lab` and `notebook7` (fixtures): JupyterLab or Jupyter Notebook 7 on 127.0.0.1
  with a token, serving tmp_path/root, its settings and runtime files in tmp_path too;
  stopped at the end with the kernels it started (and they with their servers), its log
  (kernel stderr included) read all along. `make_lab` (one per module): JupyterLab started
  by the Makefile's own `lab` command line (`make -n lab`: its PATH, its venv), its root moved
  from the repository to such a folder.
* `chromium_page(...)`: a traced page in headless Chromium; when the block in it fails, the
  Playwright trace (trace.zip) and a screenshot (failure.png) are left in tmp_path and the
  tail of the server's log is printed. `browse(...)` opens a notebook in it, waits for the
  kernel and runs a check. `run_all(...)` runs every cell of a notebook and waits for the
  kernel to be idle; `no_errors(...)` says which cells ended in a traceback.

The test folders name the fixtures in their conftest.py (tests/browser, tests/jupyterhub).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shlex
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

    def url(self, notebook: str, workspace: str | None = None) -> str:
        """The URL that opens `notebook` (a file in `root`) in the front end; in JupyterLab, in a
        `workspace` of that name if given (a new one opens no tab an earlier page left open)."""
        tree = self.tree if workspace is None else f"lab/workspaces/{workspace}/tree"
        return f"{self.base}/{tree}/{notebook}?token={self.token}"


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


def _make_lab(options: list[str], root: Path) -> list[str]:
    """`make lab`'s own command line (from `make -n`, the venv taken as installed) with `options`
    appended through LAB_ARGS and its root (the repository) moved to `root`, as argv for bash,
    which runs a lone command in its own process."""
    lab_args = " ".join(shlex.quote(o) for o in options)
    done = subprocess.run(
        ["make", "-s", "-n", "-o", ".venv/.stamp-lab", "lab", f"LAB_ARGS={lab_args}"],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    at_repo = f'--ServerApp.root_dir="{REPO}"'
    assert at_repo in done.stdout, f"make lab does not serve the repository: {done.stdout}"
    assert "--ip=127.0.0.1" in done.stdout, f"make lab does not listen on 127.0.0.1 only: {done.stdout}"
    return ["bash", "-c", done.stdout.replace(at_repo, f"--ServerApp.root_dir={shlex.quote(str(root))}")]


@contextlib.contextmanager
def _serve(front_end: _FrontEnd, tmp_path: Path, make_lab: bool = False) -> Iterator[Lab]:
    """The front end on 127.0.0.1 with a token, serving tmp_path/root, until the block ends; with
    `make_lab`, started as `make lab` starts JupyterLab (its PATH and venv; the root moved here)."""
    root = tmp_path / "root"
    root.mkdir()
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "MCP_NOTEBOOK_DATA_DIR": str(tmp_path / "data"),  # consents given in a test stay in it
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    app = front_end.app
    options = [
        "--no-browser", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--{app}.workspaces_dir={tmp_path / 'workspaces'}", f"--{app}.user_settings_dir={tmp_path / 'settings'}",
        f"--{app}.expose_app_in_browser=True", *front_end.options,
    ]  # fmt: skip
    if os.geteuid() == 0:
        options.append("--allow-root")
    if make_lab:
        argv = _make_lab(options, root)
    else:
        argv = [sys.executable, "-m", front_end.module, "--ip=127.0.0.1", f"--ServerApp.root_dir={root}", *options]
    server = subprocess.Popen(argv, env=env, cwd=REPO if make_lab else root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)  # fmt: skip
    assert server.stderr is not None
    log = LineLog(server.stderr)
    try:
        log.wait_for(rf"http://127\.0\.0\.1:{port}/{front_end.ready}[^?\s]*\?token=", timeout=90)  # make lab: a default URL
        yield Lab(root=root, base=f"http://127.0.0.1:{port}", token=token, pid=server.pid, log=log, tree=front_end.tree)
    finally:
        stop(server, timeout=30)  # it shuts its kernels down, and the kernels their demo servers
        log.join(5)


def _no_news(tmp_path: Path) -> None:
    """Never ask about Jupyter news: that toast would lie over the page (and the screenshots)."""
    notification = tmp_path / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text('{"fetchNews": "false", "checkForUpdates": false}')


@pytest.fixture
def jupyter_lab(tmp_path: Path) -> Iterator[Lab]:
    """JupyterLab on 127.0.0.1 with a token, serving tmp_path/root (kernel logs go to its log)."""
    _no_news(tmp_path)
    with _serve(JUPYTERLAB, tmp_path) as lab:
        yield lab


@pytest.fixture(scope="module")
def make_lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """JupyterLab started as `make lab` starts it (the venv's bin first on PATH), one for the module,
    serving a folder of its own (the lessons are copied there by the tests that want them)."""
    tmp_path = tmp_path_factory.mktemp("make-lab")
    _no_news(tmp_path)
    with _serve(JUPYTERLAB, tmp_path, make_lab=True) as lab:
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


# Read from the notebook's model, not the page: JupyterLab draws only the cells near the view.
_CODE_CELLS = "window.jupyterapp.shell.currentWidget.content.widgets.filter(c => c.model.type === 'code')"
_ERRORS = f"""() => {_CODE_CELLS}.flatMap((c, i) => c.model.outputs.toJSON()
  .filter(o => o.output_type === 'error').map(o => `code cell ${{i + 1}}: ${{o.ename}}: ${{o.evalue}}`))"""


def run_all(page: Page, url: str) -> None:
    """Open a notebook, wait for its kernel, run every cell (the Run menu's command) and wait
    until every code cell has run and none is running (or one failed, which stops Run All)
    and the kernel is idle."""
    page.goto(url)
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=90_000)
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        " return w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.connectionStatus === 'connected'; }",
        timeout=90_000,
    )
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    page.wait_for_function(
        "() => { const w = window.jupyterapp.shell.currentWidget;"
        f" const cells = {_CODE_CELLS};"
        " const failed = cells.some(c => c.model.outputs.toJSON().some(o => o.output_type === 'error'));"
        " const done = cells.every(c => c.model.executionCount !== null && (c.model.executionState || 'idle') === 'idle');"
        " return (failed || done) && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=240_000,
    )


def no_errors(page: Page) -> None:
    """Fail, naming each code cell that ended in a traceback and its error, if any did."""
    errors = page.evaluate(_ERRORS)
    assert not errors, errors
