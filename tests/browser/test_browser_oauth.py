"""OAuth in JupyterLab and Chromium, browser and kernel on one machine: the cell that connects
to FastMCP's OAuth-protected server shows the authorization widget and waits; a click on its
link opens the authorization page in a new tab, the authorization server sends that tab to
the kernel's one-shot loopback callback on 127.0.0.1, or to the Jupyter server's callback
(the server extension), and the cell carries on without anyone pasting. The code the tab
carried shows nowhere in the notebook, and no token or client secret is in any widget's state.
"""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, expect
from support.browser import Lab, browse, run_cell, write_notebook
from support.servers import fastmcp_oauth_server, free_port

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.kernel, pytest.mark.timeout(600)]


# Where the tab is sent back: the kernel's loopback listener (a redirect URI of the user's
# own), or the callback of the Jupyter server the kernel runs under (the server extension,
# installed with the package: no redirect URI given).
CALLBACKS = {
    "loopback": ("a listener on this machine's loopback address", "caught by the loopback listener"),
    "jupyter": ("the Jupyter server catches the redirect", "caught by the Jupyter server"),
}


@pytest.mark.parametrize("callback", sorted(CALLBACKS))
def test_the_callback_completes_authorization_from_the_widgets_link(
    chromium: str, jupyter_lab: Lab, tmp_path: Path, callback: str
) -> None:
    redirect = f"redirect_uri='http://127.0.0.1:{free_port()}/callback', " if callback == "loopback" else ""
    waiting, caught = CALLBACKS[callback]
    with fastmcp_oauth_server() as server:
        write_notebook(
            jupyter_lab.root / "oauth.ipynb",
            "import json, mcp_notebook\n"
            f"conn = mcp_notebook.connect({server!r}, name='notes', "
            f"auth=mcp_notebook.OAuth({redirect}remember=False))\n"
            "print('WHOAMI', conn.call_tool('whoami').text)",
            "import ipywidgets\n"
            "flow = conn._session.transport.auth\n"
            "secrets = [s for s in (flow.token.access_token, flow.token.refresh_token, flow.client.secret) if s]\n"
            "states = json.dumps([w.get_state() for w in list(ipywidgets.Widget.widgets.values())], default=str)\n"
            "print('LEAKS', json.dumps([len(secrets), sum(s in states for s in secrets)]))\nconn.close()",
        )
        codes: list[str] = []

        def check(page: Page) -> None:
            page.context.on("request", lambda r: codes.extend(parse_qs(urlsplit(r.url).query).get("code", [])))
            cells = page.locator(".jp-Notebook .jp-CodeCell")
            run_cell(page, cells.nth(0))
            output = cells.nth(0).locator(".jp-Cell-outputArea")
            link = output.locator("a.mcp-authorize")
            expect(link).to_be_visible(timeout=90_000)  # the widget is drawn, not "Loading widget..."
            expect(link).to_contain_text(urlsplit(server).netloc)
            expect(output).to_contain_text("registration")
            expect(output).to_contain_text(waiting)  # the widget says which path the redirect takes
            expect(cells.nth(0).locator(".jp-InputPrompt")).to_contain_text("[*]")  # the cell waits on the widget
            with page.context.expect_page() as opened:
                link.click()
            tab = opened.value
            expect(tab.locator("body")).to_contain_text("Authorization is complete", timeout=60_000)  # the callback's page
            tab.close()
            expect(output).to_contain_text("WHOAMI notes:read", timeout=60_000)
            expect(output).to_contain_text(caught)
            expect(link).to_have_count(0)  # the link is gone once used
            page.screenshot(path=str(tmp_path / "authorized.png"))
            assert codes, "the tab was never sent back with a code"
            shown = output.inner_html()
            assert all(code not in shown for code in codes)

            run_cell(page, cells.nth(1))
            leaks = cells.nth(1).locator(".jp-Cell-outputArea")
            expect(leaks).to_contain_text("LEAKS", timeout=60_000)
            counts = json.loads(leaks.inner_text().split("LEAKS", 1)[1].strip().splitlines()[0])
            assert counts[0] >= 1 and counts[1] == 0, counts
            notebook = page.evaluate("() => JSON.stringify(window.jupyterapp.shell.currentWidget.content.model.toJSON())")
            assert all(code not in notebook for code in codes)

        browse(chromium, jupyter_lab, "oauth.ipynb", tmp_path, check)
