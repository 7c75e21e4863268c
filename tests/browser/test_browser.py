"""A real browser runs the quickstart in JupyterLab and sees the live health widget.

JupyterLab is started on 127.0.0.1 with a token, on a copy of notebooks/01-quickstart.ipynb;
Debian's Chromium (/usr/bin/chromium, installed here with apt-get where it is missing;
never a browser download) is driven by Playwright for Python through `executable_path`.
The test runs all cells, checks that the health widget is drawn (not the "Loading
widget..." placeholder) and that its round-trip figure changes while no cell runs, and
saves a screenshot in the test's tmp_path (its output folder). Another measures, at
JupyterLab's default notebook width, that no label or table cell of the health widget, the
dashboard or the live trace wraps (each cell's content is one line tall), and that the
sequence diagram is drawn. Each lesson is run the same way and photographed whole; the
screenshots are the run's artifacts (in tmp_path), never committed.

A second test answers a server's question form in the browser while the cell that asked
is still running: a typed name and a click on "Accept" must reach the kernel (through the
subshell the question widgets' comms are routed to) and end the cell's `call_tool`.
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
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from conftest import descendants, free_port, server_everything_cmd, stop
from playwright.sync_api import Locator, Page, expect, sync_playwright

from mcp_notebook.demo_server import LineLog

REPO = Path(__file__).resolve().parents[2]
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


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab: the folder it serves, where it listens, its process and its log."""

    root: Path
    base: str
    token: str
    pid: int
    log: LineLog

    def url(self, notebook: str) -> str:
        """The URL that opens `notebook` (a file in `root`) in JupyterLab."""
        return f"{self.base}/lab/tree/{notebook}?token={self.token}"


@pytest.fixture
def jupyter_lab(tmp_path: Path) -> Iterator[Lab]:
    """JupyterLab on 127.0.0.1 with a token, serving tmp_path/root (kernel logs go to its log)."""
    root = tmp_path / "root"
    root.mkdir()
    # Never ask about Jupyter news: that toast would lie over the page (and the screenshots).
    notification = tmp_path / "settings" / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    notification.parent.mkdir(parents=True)
    notification.write_text('{"fetchNews": "false", "checkForUpdates": false}')
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
        yield Lab(root=root, base=f"http://127.0.0.1:{port}", token=token, pid=server.pid, log=log)
    finally:
        stop(server, timeout=30)  # it shuts its kernels down, and the kernels their demo servers
        log.join(5)


@pytest.fixture
def lab(jupyter_lab: Lab) -> str:
    """JupyterLab serving a copy of the quickstart; its notebook URL."""
    shutil.copy(QUICKSTART, jupyter_lab.root / QUICKSTART.name)  # the browser saves outputs into the copy
    return jupyter_lab.url(QUICKSTART.name)


def _round_trip(page: Page) -> str:
    row = page.locator(".jp-OutputArea-output tr", has=page.locator("th", has_text="round trip")).first
    return row.locator("td").inner_text()


def _run_all(page: Page, url: str) -> None:
    """Open a notebook, wait for its kernel, run every cell (the Run menu's command) and wait
    until every code cell has run (or one failed, which stops Run All) and the kernel is idle."""
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
        " const cells = w.content.widgets.filter(c => c.model.type === 'code');"
        " const failed = document.querySelector('.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.error\"]');"
        " return (failed || cells.every(c => c.model.executionCount !== null))"
        " && w.sessionContext.session.kernel.status === 'idle'; }",
        timeout=240_000,
    )


def _no_errors(page: Page) -> None:
    errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')
    assert errors.count() == 0, errors.first.inner_text()


# The height of each cell's content (not the cell: a row is as tall as its tallest cell) over
# the cell's line height: 1 for a line, about 2 when it wrapped. Cells holding a picture are left out.
# The wrapping seen in issue 16 was "server⏎pings", "263.638⏎ms" and the JSON column's "▶⏎show".
_WRAPPED = """(selector) => {
  const wrapped = [];
  let measured = 0;
  for (const cell of document.querySelectorAll(selector)) {
    if (!cell.offsetParent || cell.querySelector('svg')) continue;
    const style = getComputedStyle(cell);
    const line = parseFloat(style.lineHeight) || parseFloat(style.fontSize) * 1.25;
    const summary = cell.querySelector('summary');  // a closed <details>: its summary is the line shown
    const range = document.createRange();
    range.selectNodeContents(cell);
    const height = (summary || range).getBoundingClientRect().height;
    measured += 1;
    const text = cell.innerText.replace(/\\n/g, '⏎');
    if (height > line * 1.6) wrapped.push(`${text} (${height.toFixed(0)} px, line ${line.toFixed(0)} px)`);
  }
  return {measured, wrapped};
}"""

_TRUNCATED = """(selector) => [...document.querySelectorAll(selector)]
  .filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"""


def _assert_one_line(page: Page, selector: str, what: str) -> int:
    found = page.evaluate(_WRAPPED, selector)
    assert found["measured"] > 0, f"no {what} cell was drawn ({selector})"
    assert not found["wrapped"], f"{what}: wrapped cells: {found['wrapped']}"
    return int(found["measured"])


def test_quickstart_shows_a_live_health_widget(chromium: str, lab: str, tmp_path: Path) -> None:
    shot = tmp_path / "quickstart.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            _run_all(page, lab)
            _no_errors(page)

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


def test_quickstart_widgets_fit_the_notebook_and_the_diagram_shows(chromium: str, lab: str, tmp_path: Path) -> None:
    """At JupyterLab's default notebook width nothing wraps: the health widget's labels and
    values, the dashboard's cells, the live trace's cells and its controls; the sequence diagram
    is drawn; the snapshots kept for saved notebooks stay hidden while their widgets draw."""
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1600})
            _run_all(page, lab)
            _no_errors(page)
            widget = ".jp-OutputArea-output .widget-html-content"
            page.wait_for_selector(f"{widget} .mcp-trace-live td", timeout=60_000)
            page.wait_for_selector(f"{widget} .mcp-dashboard td", timeout=60_000)
            assert _assert_one_line(page, f"{widget} .mcp-health th, {widget} .mcp-health td", "health") >= 20
            assert _assert_one_line(page, f"{widget} .mcp-dashboard th, {widget} .mcp-dashboard td", "dashboard") >= 10
            assert _assert_one_line(page, f"{widget} .mcp-trace-live th, {widget} .mcp-trace-live td", "live trace") >= 20
            _assert_one_line(page, ".jp-OutputArea-output table.mcp-trace th, .jp-OutputArea-output table.mcp-trace td", "trace")
            _assert_one_line(page, ".mcp-trace-widget .widget-label, .mcp-trace-widget button", "live trace controls")
            truncated = page.evaluate(_TRUNCATED, ".mcp-trace-widget button, .mcp-trace-widget .widget-label")
            assert not truncated, f"clipped controls: {truncated}"
            blank = page.evaluate(
                "() => [...document.querySelectorAll('.mcp-trace-widget select')]"
                ".filter(s => s.offsetParent && !(s.selectedOptions[0] && s.selectedOptions[0].text)).length"
            )
            assert blank == 0, "a filter shows no choice"

            diagram = page.locator(".jp-OutputArea-output svg.mcp-diagram").first
            expect(diagram).to_be_visible()
            box = diagram.bounding_box()
            assert box is not None and box["width"] > 500 and box["height"] > 100
            assert diagram.locator("polygon").count() >= 4  # arrowheads: frames were drawn
            assert page.evaluate("() => [...document.querySelectorAll('.mcp-snapshot')].filter(e => e.offsetParent).length") == 0
            page.locator(".mcp-trace-widget").first.screenshot(path=str(tmp_path / "live-trace.png"))
            page.locator(".jp-OutputArea-output svg.mcp-diagram").first.screenshot(path=str(tmp_path / "diagram.png"))
        finally:
            browser.close()


LESSONS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_each_lesson_runs_all_and_is_photographed(chromium: str, jupyter_lab: Lab, lesson: Path, tmp_path: Path) -> None:
    """Run All in the browser, then a screenshot of the whole notebook (the test's artifact,
    in its tmp_path). The lessons sit in a notebooks/ folder beside tests/, as in the repository."""
    folder = jupyter_lab.root / "notebooks"
    shutil.copytree(REPO / "notebooks", folder)
    (jupyter_lab.root / "tests").symlink_to(REPO / "tests")  # the lessons' test servers and npm peers
    shot = tmp_path / f"{lesson.stem}.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1200})
            _run_all(page, jupyter_lab.url(f"notebooks/{lesson.name}"))
            _no_errors(page)
            assert page.get_by_text("Loading widget...").count() == 0
            # The notebook scrolls inside JupyterLab, not the page: make the window as tall as it.
            extra = page.evaluate(
                "() => { const s = document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer');"
                " return s.scrollHeight - s.clientHeight; }"
            )
            page.set_viewport_size({"width": 1280, "height": min(1200 + int(extra) + 40, 30_000)})
            page.evaluate("() => { document.querySelector('.jp-NotebookPanel .jp-WindowedPanel-outer').scrollTop = 0; }")
            page.wait_for_timeout(500)  # let the windowed notebook draw the cells now in view (a picture, not a check)
            page.screenshot(path=str(shot))
        finally:
            browser.close()
    print(f"screenshot: {shot}")
    assert shot.stat().st_size > 10_000


def _write_question_notebook(path: Path) -> None:
    """Cell 1 connects with elicitation=True and waits in call_tool for the answer; cell 2 closes."""
    ask = (
        "import mcp_notebook\n"
        f"conn = mcp_notebook.connect({server_everything_cmd()!r}, name='everything', era='legacy', elicitation=True)\n"
        "result = conn.call_tool('trigger-elicitation-request')\n"
        "print(result.text)"
    )
    close = "conn.close()\nprint('closed:', conn.closed)"
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(ask), nbformat.v4.new_code_cell(close)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(notebook, path)


def _open_with_kernel(page: Page, url: str) -> None:
    """Open a notebook and wait until its kernel is connected and idle."""
    page.goto(url)
    page.wait_for_function(
        "() => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
        " const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel;"
        " return k && k.connectionStatus === 'connected' && k.status === 'idle'; }",
        timeout=90_000,
    )


def _run(page: Page, cell: Locator) -> None:
    """Run a cell as a user does: click into its editor, press Shift+Enter."""
    cell.locator(".jp-InputArea-editor").click()
    page.keyboard.press("Shift+Enter")


def _server_processes(lab_pid: int) -> dict[int, str]:
    """server-everything processes under the JupyterLab process (started by its kernels)."""
    entry = server_everything_cmd()[-2]
    return {pid: cmd for pid, cmd in descendants(lab_pid).items() if entry in cmd}


def test_question_form_takes_a_click_while_its_cell_runs(chromium: str, jupyter_lab: Lab, tmp_path: Path) -> None:
    name = "questions.ipynb"
    _write_question_notebook(jupyter_lab.root / name)
    shot = tmp_path / "answered-form.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        context = browser.new_context(viewport={"width": 1280, "height": 1600})
        context.tracing.start(screenshots=True, snapshots=True)  # saved as trace.zip if the test fails
        page = context.new_page()
        failed = True
        try:
            _open_with_kernel(page, jupyter_lab.url(name))
            ask, close = page.locator(".jp-Notebook .jp-CodeCell").nth(0), page.locator(".jp-Notebook .jp-CodeCell").nth(1)
            output = ask.locator(".jp-Cell-outputArea")

            _run(page, ask)
            accept = output.get_by_role("button", name="Accept")
            expect(accept).to_be_visible(timeout=60_000)  # the form is drawn, not "Loading widget..."
            # The required "String" field: the form row whose HTML label starts with it.
            label = page.locator(".widget-html-content", has_text=re.compile(r"^String \*"))  # queried inside each row
            field = output.locator(".widget-hbox", has=label).locator("input")
            expect(field).to_have_count(1)
            field.click()
            field.press_sequentially("Ada")
            expect(field).to_have_value("Ada")
            expect(ask.locator(".jp-InputPrompt")).to_contain_text("[*]")  # the cell still waits in call_tool
            accept.click()

            expect(output).to_contain_text("Name: Ada", timeout=60_000)  # the answer ended call_tool
            expect(output.locator(".widget-html-content", has_text="accepted")).to_be_visible()
            expect(accept).to_be_disabled()
            expect(ask.locator(".jp-InputPrompt")).not_to_contain_text("[*]")
            output.screenshot(path=str(shot))

            running = _server_processes(jupyter_lab.pid)
            assert len(running) == 1, running
            _run(page, close)
            expect(close.locator(".jp-Cell-outputArea")).to_contain_text("closed: True", timeout=60_000)
            assert not _server_processes(jupyter_lab.pid)  # close() reaped it
            errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')
            expect(errors).to_have_count(0)
            failed = False
        finally:
            if failed:
                context.tracing.stop(path=str(tmp_path / "trace.zip"))
                page.screenshot(path=str(tmp_path / "failure.png"))
                print("JupyterLab log (kernel stderr included):", *jupyter_lab.log.tail(60), sep="\n")
            else:
                context.tracing.stop()
            browser.close()
    assert shot.stat().st_size > 10_000
