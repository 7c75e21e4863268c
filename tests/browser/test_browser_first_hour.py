"""A newcomer's first hour (issue 39) in Chromium, on JupyterLab started with `make lab`'s own command.

One server for the module (`make_lab`: the Makefile's `lab` recipe from `make -n`, its root moved
to a folder holding a copy of notebooks/ and a link to tests/); each notebook gets its own kernel,
shut down when its test ends.

* The kernel connects by name to `notebooks/mcp.json`'s `demo-stdio` entry (`python -m
  mcp_notebook.demo_server`, as lesson 01 says) once the consent form's Run is clicked: `python`
  must be the venv's, which only the Makefile's PATH makes it.
* After Run All, the lessons that once ended with `%mcp disconnect --all` (02, 04, 05, 06), and
  01 and 07, show every widget live: none reads "closed" or "no longer updated". Their last screen
  and the whole notebook are photographed into $MCP_SCREENS_DIR (else the test's tmp_path); so
  are lessons 10 and 11 (the tap, many sessions), which must Run All without an error.
* `%mcp ping demo -n 3` and `%mcp connect x -- ...` each show one output, not a print and a value.
* With two connections open, Tab after `%mcp ping ` offers no blank entry.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect
from support.browser import REPO, Lab, chromium_page, no_errors, open_with_kernel, run_all, run_cell, write_notebook

pytestmark = [pytest.mark.browser, pytest.mark.node, pytest.mark.slow, pytest.mark.kernel, pytest.mark.timeout(600)]

SCROLLER = ".jp-NotebookPanel .jp-WindowedPanel-outer"
DEAD = ("closed", "no longer updated")


@pytest.fixture(scope="module")
def lessons(make_lab: Lab) -> Lab:
    """The lab, with the lessons in its notebooks/ folder beside a link to tests/, as in the repository."""
    shutil.copytree(REPO / "notebooks", make_lab.root / "notebooks")
    (make_lab.root / "tests").symlink_to(REPO / "tests")  # the lessons' test servers and npm peers
    return make_lab


@pytest.fixture
def page(chromium: str, lessons: Lab, tmp_path: Path) -> Iterator[Page]:
    """A Chromium page on the lab; the kernel of the notebook it shows is shut down at the end."""
    with chromium_page(chromium, lessons, tmp_path, height=1200) as page:
        yield page
        page.evaluate("() => window.jupyterapp.shell.currentWidget.sessionContext.shutdown()")


def _screens(tmp_path: Path) -> Path:
    folder = Path(os.environ.get("MCP_SCREENS_DIR") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _outputs(cell: Locator) -> Locator:
    return cell.locator(".jp-OutputArea-child")


def _wait_until_ran(page: Page, cell: Locator) -> None:
    """Wait until the cell has an execution count and the kernel is idle."""
    expect(cell.locator(".jp-InputPrompt")).not_to_contain_text("[*]", timeout=60_000)
    expect(cell.locator(".jp-InputPrompt")).to_contain_text("]:", timeout=60_000)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.status === 'idle'", timeout=60_000
    )


def test_a_make_lab_kernel_connects_to_the_shipped_demo_entry_by_name(page: Page, lessons: Lab) -> None:
    write_notebook(lessons.root / "notebooks" / "by-name.ipynb", "%mcp connect demo-stdio")
    open_with_kernel(page, lessons.url("notebooks/by-name.ipynb", workspace="by-name"))
    cell = page.locator(".jp-Notebook .jp-CodeCell").first
    output = cell.locator(".jp-Cell-outputArea")
    run_cell(page, cell)
    run = output.get_by_role("button", name="Run")
    expect(run).to_be_visible(timeout=60_000)  # the consent form shows the command first
    run.click()
    expect(output).to_contain_text("connected 'demo-stdio'", timeout=60_000)
    expect(output).not_to_contain_text("not this kernel's Python")
    expect(page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.error"]')).to_have_count(0)


_TO_THE_END = """async () => {
  window.jupyterapp.shell.collapseLeft();
  const notebook = window.jupyterapp.shell.currentWidget.content;
  await notebook.scrollToItem(notebook.widgets.length - 1, 'end');
}"""
_WIDGET_TEXTS = "() => [...document.querySelectorAll('.jp-OutputArea-output .jupyter-widgets')].map(w => w.innerText)"


@pytest.mark.parametrize("stem", ["01-quickstart", "02-server-pings", "04-http-sessions", "05-protocol-eras",
                                  "06-tools-and-more", "07-mcp-apps"])  # fmt: skip
def test_each_lesson_ends_with_its_widgets_live(page: Page, lessons: Lab, stem: str, tmp_path: Path) -> None:
    run_all(page, lessons.url(f"notebooks/{stem}.ipynb", workspace=stem))
    no_errors(page)
    assert page.get_by_text("Loading widget...").count() == 0
    screens = _screens(tmp_path)

    # The last screen, as the user sees it when Run All is done (the file browser folded away).
    page.evaluate(_TO_THE_END)
    expect(page.locator(".jp-Notebook .jp-Cell").last).to_be_in_viewport()
    page.wait_for_timeout(500)  # let the windowed notebook draw the cells now in view (a picture, not a check)
    last = page.evaluate(_WIDGET_TEXTS)
    assert last, "no widget on the last screen"
    page.screenshot(path=str(screens / f"{stem}-end.png"))

    _photograph_whole(page, screens / f"{stem}.png")
    dead = [text for text in page.evaluate(_WIDGET_TEXTS) if any(word in text for word in DEAD)]
    assert not dead, f"widgets no longer live after Run All: {[text[:200] for text in dead]}"


@pytest.mark.parametrize("stem", ["10-tapping-a-client", "11-many-sessions"])
def test_the_tap_and_load_lessons_run_all(page: Page, lessons: Lab, stem: str, tmp_path: Path) -> None:
    """Lesson 10 (a client in the kernel watched through a tap) and 11 (a tool over a DataFrame, a
    load test with its live view) after Run All in Lab: no error, no widget left loading, and the
    whole notebook photographed."""
    run_all(page, lessons.url(f"notebooks/{stem}.ipynb", workspace=stem))
    no_errors(page)
    assert page.get_by_text("Loading widget...").count() == 0
    _photograph_whole(page, _screens(tmp_path) / f"{stem}.png")


def _photograph_whole(page: Page, path: Path) -> None:
    """The whole notebook: a window as tall as it, so that every cell is drawn."""
    extra = page.evaluate(f"() => {{ const s = document.querySelector('{SCROLLER}'); return s.scrollHeight - s.clientHeight; }}")
    page.set_viewport_size({"width": 1280, "height": min(1200 + int(extra) + 40, 30_000)})
    page.evaluate(f"() => {{ document.querySelector('{SCROLLER}').scrollTop = 0; }}")
    page.wait_for_timeout(500)  # let the windowed notebook draw the cells now in view (a picture, not a check)
    page.screenshot(path=str(path))


def _magics_notebook(lab: Lab, workspace: str) -> str:
    write_notebook(
        lab.root / "notebooks" / "magics.ipynb",
        "import mcp_notebook\nconn = mcp_notebook.demo()",
        "%mcp ping demo -n 3 -i 0.05",
        "%mcp connect x -- python -m mcp_notebook.demo_server",
        "",
    )
    return lab.url("notebooks/magics.ipynb", workspace=workspace)


@pytest.fixture
def magics(page: Page, lessons: Lab, request: pytest.FixtureRequest) -> list[Locator]:
    """The magics notebook open, its first three cells run one by one: the demo, a ping, a second connection."""
    open_with_kernel(page, _magics_notebook(lessons, request.node.name))
    cells = [page.locator(".jp-Notebook .jp-CodeCell").nth(i) for i in range(4)]
    for cell in cells[:3]:
        run_cell(page, cell)
        _wait_until_ran(page, cell)
    no_errors(page)
    return cells


def test_ping_and_connect_show_one_output_each(magics: list[Locator]) -> None:
    ping, connect = magics[1], magics[2]
    expect(ping).to_contain_text("3 pings")
    expect(connect).to_contain_text("connected 'x'")
    assert [_outputs(ping).count(), _outputs(connect).count()] == [1, 1], [
        _outputs(ping).all_inner_texts(),
        _outputs(connect).all_inner_texts(),
    ]


_MATCHES = """async (lines) => {
  const kernel = window.jupyterapp.shell.currentWidget.sessionContext.session.kernel;
  const matches = {};
  for (const line of lines) {
    const reply = await kernel.requestComplete({code: line, cursor_pos: line.length});
    matches[line] = reply.content.matches;
  }
  return matches;
}"""


def test_completion_offers_no_blank_with_two_connections(page: Page, magics: list[Locator]) -> None:
    # What JupyterLab's completer is given (a lone blank match is inserted as nothing, so never seen in a list).
    matches = page.evaluate(_MATCHES, ["%mcp ping ", "%mcp call "])
    assert not [line for line, offered in matches.items() if "" in offered], matches
    # And what it shows: Tab after `%mcp ping ` lists both connections.
    magics[3].locator(".jp-InputArea-editor").click()
    page.keyboard.type("%mcp ping ")
    page.keyboard.press("Tab")
    items = page.locator(".jp-Completer .jp-Completer-item .jp-Completer-match")
    expect(items.first).to_be_visible(timeout=30_000)
    offered = [text.strip() for text in items.all_inner_texts()]
    assert "" not in offered and {"demo", "x"} <= set(offered), offered


def test_completion_puts_a_tools_arguments_first_and_hides_app_only_tools(page: Page, magics: list[Locator]) -> None:
    """In the kernel JupyterLab runs: `conn.call_tool("add", ` offers the tool's own arguments
    before Python's names, and `%mcp call -c demo ` offers what `%mcp tools` lists, not the
    demo's app-only tool."""
    matches = page.evaluate(_MATCHES, ['conn.call_tool("add", ', "%mcp call -c demo ", "%mcp call -c demo counters"])
    assert matches['conn.call_tool("add", '][:2] == ["a=", "b="], matches
    assert "echo" in matches["%mcp call -c demo "] and "counters-poll" not in matches["%mcp call -c demo "], matches
    assert matches["%mcp call -c demo counters"] == ["counters"], matches
