"""The authorization widget in a real kernel, the paste-back path of a remote kernel: a cell
connects to FastMCP's OAuth-protected server (its own in-memory authorization server) and
waits on the widget; the test plays the browser on another machine (it follows the
authorization URL up to the redirect, without reaching the kernel's loopback) and pastes the
URL it ended on into the widget over the comm. The cell carries on and a tool call works;
no token, code or client secret is in the cell's outputs or any widget's state. Cancel in the
widget ends the next connection's authorization with one line."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from support.kernels import Cell, Kernel, json_line, ok, widget_states
from support.servers import fastmcp_oauth_server, free_port
from support.widgets import WIDGET_MIME, Frontend

pytestmark = [pytest.mark.kernel]


def authorization_url(frontend: Frontend) -> str:
    """The href of the widget's link (the button that opens a new tab)."""
    link = next(s["value"] for s in frontend.models().values() if 'class="mcp-authorize' in s.get("value", ""))
    return link.split('href="', 1)[1].split('"', 1)[0].replace("&amp;", "&")


def widget_text(frontend: Frontend) -> str:
    return " ".join(str(s.get("value", "")) for s in frontend.models().values())


@pytest.mark.timeout(240)
def test_a_remote_kernel_authorizes_by_pasting_the_url_into_the_widget(kernel: Kernel) -> None:
    redirect = f"http://127.0.0.1:{free_port()}/callback"  # a port nobody listens on but the widget's loopback
    with fastmcp_oauth_server() as server:
        cell = Cell(
            kernel.kc,
            "import json, mcp_notebook\n"
            f"conn = mcp_notebook.connect({server!r}, name='notes', "
            f"auth=mcp_notebook.OAuth(redirect_uri={redirect!r}, remember=False))\n"
            "print('RESULT', json.dumps(conn.call_tool('whoami').text))",
        )
        frontend = Frontend(kernel, cell)
        frontend.wait_for_display(timeout=90)
        shown = widget_text(frontend)
        assert "127.0.0.1:" in shown and "discovery" in shown and "registration" in shown
        assert "registered as client" in shown  # the step the flow recorded before asking

        url = authorization_url(frontend)
        assert urlsplit(url).netloc == urlsplit(server).netloc
        with httpx2.Client(follow_redirects=False, timeout=30.0) as browser:
            response = browser.get(url)  # the authorization server sends the browser back at once
        assert response.is_redirect, response.text
        back = response.headers["location"]
        assert back.startswith(redirect)
        code = parse_qs(urlsplit(back).query)["code"][0]

        box = frontend.find("TextModel")
        frontend.type_into(box, "https://elsewhere.example/callback?code=nope")
        frontend.click(frontend.find("ButtonModel", description="Continue"))  # not the redirect URI: refused, asked again
        frontend.type_into(box, back)
        frontend.click(frontend.find("ButtonModel", description="Continue"))
        assert json_line(ok(cell.finish(90)), "RESULT") == "notes:read"
        saved = [m["content"]["data"].get("text/plain", "") for m in cell.messages if m["msg_type"] == "update_display_data"]
        assert saved and saved[-1].startswith("Authorized at 127.0.0.1:"), saved  # what a saved notebook shows
        assert saved[-1].count("✓") == 4 and "registered as client" in saved[-1], saved[-1]

        secrets = json_line(
            ok(
                kernel.run(
                    "flow = conn._session.transport.auth\n"
                    "print('RESULT', json.dumps([flow.token.access_token, flow.token.refresh_token, flow.client.secret]))"
                )
            ),
            "RESULT",
        )
        states = widget_states(kernel)
        ok(kernel.run("conn.close()"))

        cell = Cell(
            kernel.kc,
            f"again = mcp_notebook.connect({server!r}, name='again', auth=mcp_notebook.OAuth(redirect_uri={redirect!r}, "
            "remember=False))",
        )
        frontend = Frontend(kernel, cell)
        frontend.wait_for_display(timeout=90)
        frontend.click(frontend.find("ButtonModel", description="Cancel"))
        cancelled = cell.finish(90)
        asked = [m for m in cell.messages if m["msg_type"] == "display_data" and WIDGET_MIME in m["content"]["data"]]
    outputs = json.dumps([m["content"] for m in cell.messages]) + json.dumps(states)
    for secret in [code, *(s for s in secrets if s)]:
        assert secret not in outputs
    assert cancelled.status == "error", cancelled.describe()
    assert "authorization cancelled in the widget" in "".join(cancelled.traceback), cancelled.traceback
    assert len(asked) == 1  # the era cached by the first connection is not blamed: nobody is asked twice
    assert any("✓" in s.get("value", "") and "token" in s.get("value", "") for s in states if isinstance(s, dict))
