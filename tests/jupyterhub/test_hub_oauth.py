"""OAuth under a real JupyterHub (base_url /hub-test/, two system users): user A's kernel
connects to the demo server's OAuth mode over HTTP; the authorization server sends A's
browser, logged in to the hub as A, to A's server's callback through the hub's URL, and the
cell carries on with nobody pasting. User B, logged in as B, cannot complete A's flow with
A's `state` (B's own callback finds no flow of A's waiting; A's callback is not B's to
reach), and B's kernel cannot read A's tokens, consent records, pins or hand-off files.
"""

from __future__ import annotations

import hashlib
import html
import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Browser, expect, sync_playwright
from support.hub import Hub, Kernel, User, login

from mcp_notebook import demo_server
from mcp_notebook.demo_server import OAuthSettings

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.kernel, pytest.mark.timeout(600)]

CONSENT_AND_PINS = """
import json, pathlib, sys, mcp_notebook
from mcp_notebook.configs import consent
pathlib.Path("mcp.json").write_text(json.dumps({"mcpServers": {"local": {"command": sys.executable,
                                                                         "args": ["-m", "mcp_notebook.demo_server"]}}}))
consent.remember(next(e for e in mcp_notebook.configured_servers() if e.name == "local"))
mcp_notebook.connect(config="local").close()  # started on the remembered consent; its tools pinned
"""
CONNECT = """
conn = mcp_notebook.connect({url!r}, name="notes")
print("SUM", conn.call_tool("add", {{"a": 1, "b": 2}}).structured["sum"])
"""
PROBE = """
import json, os
found = {{}}
for path in {paths!r}:
    try:
        os.listdir(path) if os.path.isdir(path) else open(path).read()
        found[path] = "read"
    except PermissionError:
        found[path] = "denied"
try:
    open(os.path.join({handoff!r}, "planted.response"), "w").write("code=planted")
    found["plant"] = "written"
except PermissionError:
    found["plant"] = "denied"
print("PROBE", json.dumps(found))
"""


def widget_text(message: dict[str, Any]) -> str:
    """The HTML a widget message (comm_open or an update) carries, if any."""
    if message["msg_type"] not in ("comm_open", "comm_msg"):
        return ""
    state = message["content"].get("data", {}).get("state", {})
    value = state.get("value") if isinstance(state, dict) else None
    return value if isinstance(value, str) else ""


def until_the_link(messages: Iterator[dict[str, Any]]) -> tuple[str, list[str]]:
    """The authorization link the widget shows, and the widget text seen so far."""
    seen: list[str] = []
    link = None
    for message in messages:
        if message["msg_type"] == "error":
            pytest.fail("the cell failed:\n" + "\n".join(message["content"]["traceback"]))
        text = widget_text(message)
        seen.append(text)
        link = link or re.search(r'<a href="([^"]+)"[^>]*class="mcp-authorize', text)
        if link and any("catches the redirect" in t for t in seen):
            return html.unescape(link.group(1)), seen
    pytest.fail(f"the cell ended without an authorization link: {seen}")


def the_rest(messages: Iterator[dict[str, Any]]) -> tuple[str, list[str]]:
    printed, seen = [], []
    for message in messages:
        if message["msg_type"] == "stream":
            printed.append(message["content"]["text"])
        elif message["msg_type"] == "error":
            pytest.fail("the cell failed:\n" + "\n".join(message["content"]["traceback"]))
        seen.append(widget_text(message))
    return "".join(printed), seen


def page_as(browser: Browser, hub: Hub, user: User) -> Any:
    page = browser.new_context().new_page()
    login(page, hub, user)
    return page


def test_oauth_completes_through_the_hubs_callback_and_stays_the_users_own(hub: Hub, chromium: str) -> None:
    a, b = hub.users
    process, url = demo_server.start_http(oauth=OAuthSettings())
    with process, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
        kernel_a, kernel_b = Kernel(hub, a), Kernel(hub, b)
        try:
            kernel_a.run(CONSENT_AND_PINS)
            messages = kernel_a.messages(kernel_a.send(CONNECT.format(url=url)))
            link, seen = until_the_link(messages)
            assert any("the Jupyter server catches the redirect" in text for text in seen)  # the widget says which path
            query = parse_qs(urlsplit(link).query)
            state, redirect = query["state"][0], query["redirect_uri"][0]
            assert redirect == f"{hub.server(a)}mcp-notebook/oauth/callback"  # the hub's public URL, A's prefix
            pending = a.handoff / f"{hashlib.sha256(state.encode()).hexdigest()}.pending"
            assert pending.exists()

            # B, logged in to the hub as B, holding A's state (and a code of B's making)
            as_b = page_as(browser, hub, b)
            own = as_b.goto(f"{hub.server(b)}mcp-notebook/oauth/callback?code=forged&state={state}")
            assert own is not None and own.status == 400
            expect(as_b.locator("body")).to_contain_text("No notebook of yours is waiting")
            theirs = as_b.goto(f"{redirect}?code=forged&state={state}")
            assert theirs is not None and theirs.status == 403  # the hub lets no one else into A's server
            assert "Authorization is complete" not in as_b.content()
            assert pending.exists()  # A's flow still waits, unanswered

            # A, in A's own browser session: the authorization page, then back through the hub
            as_a = page_as(browser, hub, a)
            as_a.goto(link)
            expect(as_a.locator("body")).to_contain_text("Authorization is complete", timeout=60_000)
            assert as_a.url.startswith(redirect)
            printed, later = the_rest(messages)
            assert "SUM 3" in printed
            assert any("caught by the Jupyter server" in text for text in later)
            assert not pending.exists() and not list(a.handoff.glob("*.response"))  # taken, deleted

            files = sorted(str(path) for path in a.data.rglob("*") if path.is_file())
            names = {path.rsplit("/", 1)[1] for path in files}
            assert {"consent.json", "tool-pins.json"} <= names and any("/oauth/" in path for path in files), files
            probe = kernel_b.run(PROBE.format(paths=[*files, str(a.handoff)], handoff=str(a.handoff)))
            found = json.loads(probe.split("PROBE", 1)[1])
            assert set(found.values()) == {"denied"}, found
        finally:
            kernel_a.close()
            kernel_b.close()
            browser.close()
