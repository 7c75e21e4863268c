"""A real browser runs the quickstart in JupyterLab and sees the live health widget.

JupyterLab is started on 127.0.0.1 with a token, on a copy of notebooks/01-quickstart.ipynb;
Debian's Chromium (/usr/bin/chromium, installed here with apt-get where it is missing;
never a browser download) is driven by Playwright for Python through `executable_path`.
The test runs all cells, checks that the health widget is drawn (not the "Loading
widget..." placeholder) and that its round-trip figure changes while no cell runs, and
saves a screenshot in the test's tmp_path (its output folder).
"""

from __future__ import annotations

import os
import re
import secrets
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import free_port
from playwright.sync_api import Page, sync_playwright

from mcp_notebook.demo_server import LineLog

REPO = Path(__file__).resolve().parents[1]
CHROMIUM = Path("/usr/bin/chromium")
QUICKSTART = REPO / "notebooks" / "01-quickstart.ipynb"

pytestmark = [pytest.mark.slow, pytest.mark.kernel, pytest.mark.timeout(600)]


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


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[str]:
    """JupyterLab on 127.0.0.1 with a token, serving a copy of the quickstart; its notebook URL."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.copy(QUICKSTART, root / QUICKSTART.name)  # the browser saves outputs into the copy
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    argv = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--LabApp.workspaces_dir={tmp_path / 'workspaces'}", f"--LabApp.user_settings_dir={tmp_path / 'settings'}",
        "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=", "--LabApp.check_for_updates_class="
        "jupyterlab.NeverCheckForUpdate",
    ]  # fmt: skip
    if os.geteuid() == 0:
        argv.append("--allow-root")
    server = subprocess.Popen(argv, env=env, cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)  # fmt: skip
    assert server.stderr is not None
    log = LineLog(server.stderr)
    try:
        log.wait_for(rf"http://127\.0\.0\.1:{port}/lab\?token=", timeout=90)
        yield f"http://127.0.0.1:{port}/lab/tree/{QUICKSTART.name}?token={token}"
    finally:
        server.terminate()  # shuts its kernels down, and the kernels their demo servers
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.join(5)


def _round_trip(page: Page) -> str:
    row = page.locator(".jp-OutputArea-output tr", has=page.locator("th", has_text="round trip")).first
    return row.locator("td").inner_text()


def test_quickstart_shows_a_live_health_widget(chromium: str, lab: str, tmp_path: Path) -> None:
    shot = tmp_path / "quickstart.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            page.goto(lab)
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget", timeout=90_000)
            # Wait for the kernel, then run every cell (the command a user picks from the Run menu).
            page.wait_for_function(
                "() => { const w = window.jupyterapp.shell.currentWidget;"
                " return w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
                " && w.sessionContext.session.kernel.connectionStatus === 'connected'; }",
                timeout=90_000,
            )
            page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
            # Done when every code cell has an execution count and the kernel is idle.
            page.wait_for_function(
                "() => { const w = window.jupyterapp.shell.currentWidget;"
                " const cells = w.content.widgets.filter(c => c.model.type === 'code');"
                " return cells.every(c => c.model.executionCount !== null)"
                " && w.sessionContext.session.kernel.status === 'idle'; }",
                timeout=120_000,
            )
            errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')
            assert errors.count() == 0, errors.first.inner_text()

            # The widget is drawn: its table is there and no placeholder is left.
            page.wait_for_selector(".jp-OutputArea-output .widget-html-content th:has-text('round trip')", timeout=60_000)
            assert page.get_by_text("Loading widget...").count() == 0
            first = _round_trip(page)
            assert re.search(r"last \d+\.\d{3} ms", first), first

            # No cell runs now: keepalive pings (every 2 s in demo()) move the figure.
            deadline = time.monotonic() + 30
            while (now := _round_trip(page)) == first:
                assert time.monotonic() < deadline, f"the round trip stayed at {first!r} for 30 s"
                page.wait_for_timeout(250)
            assert re.search(r"last \d+\.\d{3} ms", now), now
            page.screenshot(path=str(shot), full_page=True)
        finally:
            browser.close()
    assert shot.stat().st_size > 10_000
