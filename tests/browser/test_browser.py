"""A real browser runs the quickstart in JupyterLab and sees the live health widget.

JupyterLab is started on 127.0.0.1 with a token, on a copy of notebooks/01-quickstart.ipynb;
Debian's Chromium (/usr/bin/chromium, installed here with apt-get where it is missing;
never a browser download) is driven by Playwright for Python through `executable_path`
(both set up by tests/support/browser.py, which the other browser tests share).
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

import re
import shutil
import time
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from support.browser import REPO, Lab, chromium_page, no_errors, open_with_kernel, run_all, run_cell, write_notebook
from support.processes import descendants
from support.servers import server_everything_cmd

QUICKSTART = REPO / "notebooks" / "01-quickstart.ipynb"

pytestmark = [pytest.mark.browser, pytest.mark.node, pytest.mark.slow, pytest.mark.kernel, pytest.mark.timeout(600)]


@pytest.fixture
def quickstart(jupyter_lab: Lab) -> str:
    """A copy of the quickstart and the mcp.json beside it in the lab's folder; its notebook URL."""
    shutil.copy(QUICKSTART, jupyter_lab.root / QUICKSTART.name)  # the browser saves outputs into the copy
    shutil.copy(QUICKSTART.parent / "mcp.json", jupyter_lab.root / "mcp.json")  # its `--from project` cell reads it
    return jupyter_lab.url(QUICKSTART.name)


def _round_trip(page: Page) -> str:
    row = page.locator(".jp-OutputArea-output tr", has=page.locator("th", has_text="round trip")).first
    return row.locator("td").inner_text()


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

# Outputs wider than the notebook: the part past the edge is hidden until someone scrolls it.
_OVERFLOWING = """() => {
  const wide = [];
  for (const output of document.querySelectorAll('.jp-OutputArea-output')) {
    for (const e of [output, ...output.querySelectorAll('*')]) {
      const clips = e === output || ['auto', 'scroll'].includes(getComputedStyle(e).overflowX);  // not an ellipsis
      if (e.offsetParent && clips && e.scrollWidth > e.clientWidth + 1) {
        wide.push(`${e.scrollWidth} > ${e.clientWidth} px: ${e.innerText.slice(0, 70).replace(/\\n/g, ' | ')}`);
        break;
      }
    }
  }
  return wide;
}"""

_TRUNCATED = """(selector) => [...document.querySelectorAll(selector)]
  .filter(e => e.offsetParent && e.scrollWidth > e.clientWidth + 1).map(e => e.innerText)"""


def _assert_one_line(page: Page, selector: str, what: str) -> int:
    found = page.evaluate(_WRAPPED, selector)
    assert found["measured"] > 0, f"no {what} cell was drawn ({selector})"
    assert not found["wrapped"], f"{what}: wrapped cells: {found['wrapped']}"
    return int(found["measured"])


def test_quickstart_shows_a_live_health_widget(chromium: str, jupyter_lab: Lab, quickstart: str, tmp_path: Path) -> None:
    shot = tmp_path / "quickstart.png"
    with chromium_page(chromium, jupyter_lab, tmp_path) as page:
        run_all(page, quickstart)
        no_errors(page)

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
    assert shot.stat().st_size > 10_000


def test_quickstart_widgets_fit_the_notebook_and_the_diagram_shows(
    chromium: str, jupyter_lab: Lab, quickstart: str, tmp_path: Path
) -> None:
    """At JupyterLab's default notebook width nothing wraps: the health widget's labels and
    values, the dashboard's cells, the live trace's cells and its controls; the sequence diagram
    is drawn; the snapshots kept for saved notebooks stay hidden while their widgets draw."""
    with chromium_page(chromium, jupyter_lab, tmp_path) as page:
        run_all(page, quickstart)
        no_errors(page)
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


LESSONS = sorted((REPO / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("lesson", LESSONS, ids=[p.stem for p in LESSONS])
def test_each_lesson_runs_all_and_is_photographed(chromium: str, jupyter_lab: Lab, lesson: Path, tmp_path: Path) -> None:
    """Run All in the browser, then a screenshot of the whole notebook (the test's artifact,
    in its tmp_path). The lessons sit in a notebooks/ folder beside tests/, as in the repository."""
    folder = jupyter_lab.root / "notebooks"
    shutil.copytree(REPO / "notebooks", folder)
    (jupyter_lab.root / "tests").symlink_to(REPO / "tests")  # the lessons' test servers and npm peers
    shot = tmp_path / f"{lesson.stem}.png"
    with chromium_page(chromium, jupyter_lab, tmp_path, height=1200) as page:
        run_all(page, jupyter_lab.url(f"notebooks/{lesson.name}"))
        no_errors(page)
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
        assert page.evaluate(_OVERFLOWING) == [], "outputs wider than the notebook"
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
    write_notebook(path, ask, close)


def _server_processes(lab_pid: int) -> dict[int, str]:
    """server-everything processes under the JupyterLab process (started by its kernels)."""
    entry = server_everything_cmd()[-2]
    return {pid: cmd for pid, cmd in descendants(lab_pid).items() if entry in cmd}


def test_question_form_takes_a_click_while_its_cell_runs(chromium: str, jupyter_lab: Lab, tmp_path: Path) -> None:
    name = "questions.ipynb"
    _write_question_notebook(jupyter_lab.root / name)
    shot = tmp_path / "answered-form.png"
    with chromium_page(chromium, jupyter_lab, tmp_path) as page:
        open_with_kernel(page, jupyter_lab.url(name))
        ask, close = page.locator(".jp-Notebook .jp-CodeCell").nth(0), page.locator(".jp-Notebook .jp-CodeCell").nth(1)
        output = ask.locator(".jp-Cell-outputArea")

        run_cell(page, ask)
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
        run_cell(page, close)
        expect(close.locator(".jp-Cell-outputArea")).to_contain_text("closed: True", timeout=60_000)
        assert not _server_processes(jupyter_lab.pid)  # close() reaped it
        errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')
        expect(errors).to_have_count(0)
    assert shot.stat().st_size > 10_000
