"""MCP Apps in JupyterLab and Chromium: a tool's view renders in the cell that called the
tool, and its controls reach the server through the bridge (iframe -> postMessage -> widget
-> comm -> kernel -> the connection's session), and nothing more.

The first test runs @modelcontextprotocol/server-basic-vanillajs (an ext-apps example we did
not write): its "Get Server Time" button makes the app call the server's get-time tool; the
new time must show in the app, and the trace must hold the app's tools/call. The second runs
tests/servers/apps_server.py, whose view tries three things that must fail (a tool without
"app" visibility, `window.parent.document`, a fetch to an undeclared origin) beside one that
must work, and leaves the notebook as it was; a view that asks for the camera loads only
after a click on "Allow", and then with it. The third shows the same view working in
Jupyter Notebook 7.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect
from support.browser import Lab, browse, run_cell, write_notebook
from support.servers import PEERS_DIR, SERVERS_DIR, node_executable

pytestmark = [pytest.mark.browser, pytest.mark.node, pytest.mark.slow, pytest.mark.kernel, pytest.mark.timeout(600)]

VANILLA = PEERS_DIR / "node_modules" / "@modelcontextprotocol" / "server-basic-vanillajs" / "dist" / "index.js"


def vanilla_command() -> list[str]:
    """The command that starts server-basic-vanillajs over stdio; the test is skipped without it."""
    if not VANILLA.is_file():
        pytest.skip("server-basic-vanillajs is not installed: run `make peers`")
    return [node_executable(), str(VANILLA), "--stdio"]


def test_an_ext_apps_view_calls_the_server_through_the_bridge(chromium: str, jupyter_lab: Lab, tmp_path: Path) -> None:
    command = vanilla_command()
    write_notebook(
        jupyter_lab.root / "app.ipynb",
        f"import json, mcp_notebook\nconn = mcp_notebook.connect({command!r}, name='basic')\n%mcp call get-time",
        "bridge = [e.method for e in conn.trace.frames('in') if e.detail.get('via') == 'app']\n"
        "wire = [e.message['params']['name'] for e in conn.trace.frames('out') if e.method == 'tools/call' and not e.detail]\n"
        "print('TRACE', json.dumps({'bridge': bridge, 'wire': wire}))\nconn.close()",
    )
    shot = tmp_path / "app.png"

    def check(page: Page) -> None:
        cells = page.locator(".jp-Notebook .jp-CodeCell")
        run_cell(page, cells.nth(0))
        output = cells.nth(0).locator(".jp-Cell-outputArea")
        app = output.frame_locator("iframe")
        shown = app.locator("#server-time")
        expect(shown).to_contain_text("T", timeout=90_000)  # an ISO time from the tool result
        first = shown.inner_text()
        expect(shown).not_to_have_text("Loading...")
        expect(output).to_contain_text("get-time")  # the text result under the view
        app.locator("#get-time-btn").click()
        expect(shown).not_to_have_text(first, timeout=60_000)  # the app called get-time through the bridge
        output.screenshot(path=str(shot))
        run_cell(page, cells.nth(1))
        text = cells.nth(1).locator(".jp-Cell-outputArea")
        expect(text).to_contain_text("TRACE", timeout=60_000)
        trace = json.loads(text.inner_text().split("TRACE", 1)[1].strip().splitlines()[0])
        assert "ui/initialize" in trace["bridge"] and "tools/call" in trace["bridge"], trace
        assert trace["wire"].count("get-time") >= 2, trace  # the cell's call, then the app's

    browse(chromium, jupyter_lab, "app.ipynb", tmp_path, check)
    assert shot.stat().st_size > 5_000


def test_a_view_is_torn_down_when_its_output_is_cleared_or_its_cell_runs_again(
    chromium: str, jupyter_lab: Lab, tmp_path: Path
) -> None:
    command = vanilla_command()
    write_notebook(
        jupyter_lab.root / "teardown.ipynb",
        f"import json, mcp_notebook\nconn = mcp_notebook.connect({command!r}, name='basic')",
        "%mcp call get-time",
        "from mcp_notebook.api.apps import host\n"
        "views = host.of(conn).views()\n"
        "answers = [e.id for e in conn.trace.frames('in')\n"
        "           if e.detail.get('via') == 'app' and str(e.id).startswith('teardown-')]\n"
        "served = sorted((v.state, v.send is not None) for v in views)\n"
        "print('TORN', json.dumps({'answers': len(answers), 'served': served}))\nconn.close()",
    )

    def check(page: Page) -> None:
        cells = page.locator(".jp-Notebook .jp-CodeCell")
        output = cells.nth(1).locator(".jp-Cell-outputArea")
        time = output.frame_locator("iframe >> visible=true").locator("#server-time")  # a view that left waits hidden
        layers = page.locator(".mcp-app-layer")
        run_cell(page, cells.nth(0))
        run_cell(page, cells.nth(1))
        expect(time).to_contain_text("T", timeout=90_000)
        expect(layers).to_have_count(1)

        cells.nth(1).locator(".jp-InputArea-editor").click()
        page.evaluate("() => window.jupyterapp.commands.execute('notebook:clear-cell-output')")
        expect(output.locator("iframe")).to_have_count(0, timeout=30_000)  # the app answered its teardown, then went
        expect(layers).to_have_count(0)

        run_cell(page, cells.nth(1))
        expect(time).to_contain_text("T", timeout=90_000)
        run_cell(page, cells.nth(1))  # the cell again: the view before is torn down, a new one shows
        expect(time).to_contain_text("T", timeout=90_000)
        expect(layers).to_have_count(1, timeout=30_000)

        run_cell(page, cells.nth(2))
        text = cells.nth(2).locator(".jp-Cell-outputArea")
        expect(text).to_contain_text("TORN", timeout=60_000)
        torn = json.loads(text.inner_text().split("TORN", 1)[1].strip().splitlines()[0])
        # both views that left answered ui/resource-teardown (in the trace, via "app") and are served no more
        assert torn == {"answers": 2, "served": [["initialized", True], ["torn down", False], ["torn down", False]]}, torn

    browse(chromium, jupyter_lab, "teardown.ipynb", tmp_path, check)


def test_a_view_shown_after_its_connection_closed_says_so_and_starts_no_app(
    chromium: str, jupyter_lab: Lab, tmp_path: Path
) -> None:
    command = vanilla_command()
    write_notebook(
        jupyter_lab.root / "late.ipynb",
        f"import mcp_notebook\nconn = mcp_notebook.connect({command!r}, name='basic')\n"
        "view = conn.app('get-time')\nassert view.wait(60) is not None\nconn.close()\nview",
    )

    def check(page: Page) -> None:
        cell = page.locator(".jp-Notebook .jp-CodeCell").nth(0)
        run_cell(page, cell)
        output = cell.locator(".jp-Cell-outputArea")
        expect(output).to_contain_text("(the MCP App view was closed: the connection closed)", timeout=90_000)
        expect(output.locator("iframe")).to_have_count(0)
        expect(page.locator(".mcp-app-layer")).to_have_count(0)

    browse(chromium, jupyter_lab, "late.ipynb", tmp_path, check)


def test_an_app_cannot_reach_past_its_sandbox(chromium: str, jupyter_lab: Lab, tmp_path: Path) -> None:
    command = [sys.executable, str(SERVERS_DIR / "apps_server.py")]
    write_notebook(
        jupyter_lab.root / "probe.ipynb",
        f"import json, mcp_notebook\nconn = mcp_notebook.connect({command!r}, name='probe', era='legacy')\n%mcp call probe",
        "%mcp call camera",
        "wire = [e.message['params']['name'] for e in conn.trace.frames('out') if e.method == 'tools/call' and not e.detail]\n"
        "print('WIRE', json.dumps(wire))\nconn.close()",
    )

    def notebook_state(page: Page) -> object:
        return page.evaluate(
            "() => { const w = window.jupyterapp.shell.currentWidget;"
            " return { cells: w.content.widgets.map(c => c.model.sharedModel.getSource()),"
            " pwned: document.body.dataset.pwned || null, dirtyTitle: document.title }; }"
        )

    def check(page: Page) -> None:
        cells = page.locator(".jp-Notebook .jp-CodeCell")
        run_cell(page, cells.nth(0))
        output = cells.nth(0).locator(".jp-Cell-outputArea")
        app = output.frame_locator("iframe")
        expect(app.locator("#result")).to_have_text("probe ready: probe", timeout=90_000)
        expect(app.locator("#host")).to_have_text("mcp-notebook light inline")  # JupyterLab's light theme
        before = notebook_state(page)

        app.locator("#call-app-tool").click()
        expect(app.locator("#app-tool")).to_have_text("ok: echo: from the app", timeout=30_000)  # the bridge works
        app.locator("#call-model-only").click()
        expect(app.locator("#model-only")).to_contain_text("refused: model_only: not callable by apps", timeout=30_000)
        app.locator("#reach-parent").click()
        expect(app.locator("#parent")).to_have_text("blocked: SecurityError")
        app.locator("#fetch").click()
        expect(app.locator("#fetched")).to_have_text("blocked: TypeError", timeout=30_000)  # CSP connect-src 'none'
        app.locator("#say").click()
        expect(output).to_contain_text("app message: hello from the app", timeout=30_000)
        expect(output).to_contain_text("model context: the app's context")
        app.locator("#open").click()
        link = output.get_by_role("link", name="https://example.com/docs?from=app")
        expect(link).to_be_visible(timeout=30_000)  # the full URL, shown: nothing opens until clicked
        expect(app.locator("#opened")).to_have_text("")

        assert notebook_state(page) == before  # the notebook is as it was
        app.locator("#navigate").click()  # another document in the frame: the app is loaded afresh
        expect(app.locator("#app-tool")).to_have_text("", timeout=30_000)  # a fresh page, not the one clicked before
        expect(app.locator("#result")).to_have_text("probe ready: probe", timeout=30_000)  # input and result again
        # A view that asks for the camera: nothing loads until the user answers, and then with it.
        run_cell(page, cells.nth(1))
        asking = cells.nth(1).locator(".jp-Cell-outputArea")
        expect(asking).to_contain_text("This app asks for: camera.", timeout=90_000)
        expect(asking.locator("iframe")).to_have_count(0)
        asking.get_by_role("button", name="Allow").click()
        expect(asking.locator("iframe")).to_have_attribute("allow", "camera *")
        expect(asking.frame_locator("iframe").locator("#result")).to_have_text("camera view", timeout=30_000)

        run_cell(page, cells.nth(2))
        text = cells.nth(2).locator(".jp-Cell-outputArea")
        expect(text).to_contain_text("WIRE", timeout=60_000)
        wire = json.loads(text.inner_text().split("WIRE", 1)[1].strip().splitlines()[0])
        assert wire == ["probe", "echo_app", "camera"], wire

    browse(chromium, jupyter_lab, "probe.ipynb", tmp_path, check)


def test_the_view_works_in_notebook_7(chromium: str, notebook7: Lab, tmp_path: Path) -> None:
    command = [sys.executable, str(SERVERS_DIR / "apps_server.py")]
    write_notebook(
        notebook7.root / "seven.ipynb",
        f"import mcp_notebook\nconn = mcp_notebook.connect({command!r}, name='probe')\n%mcp call probe",
    )

    def check(page: Page) -> None:
        cell = page.locator(".jp-Notebook .jp-CodeCell").nth(0)
        run_cell(page, cell)
        app = cell.locator(".jp-Cell-outputArea").frame_locator("iframe")
        expect(app.locator("#result")).to_have_text("probe ready: probe", timeout=90_000)
        app.locator("#call-app-tool").click()
        expect(app.locator("#app-tool")).to_have_text("ok: echo: from the app", timeout=30_000)
        app.locator("#reach-parent").click()
        expect(app.locator("#parent")).to_have_text("blocked: SecurityError")

    browse(chromium, notebook7, "seven.ipynb", tmp_path, check)
