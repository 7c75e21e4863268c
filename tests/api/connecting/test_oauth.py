"""OAuth against a real peer: FastMCP's OAuth-protected server with its own in-memory
authorization server (tests/servers/fastmcp_oauth_server.py). The test plays the browser
through the `authorize=` callback: it opens the authorization URL and hands back the URL
the server redirected to. First authorization, calls, expiry then refresh, a refresh that
fails then a new authorization, a 403 `insufficient_scope` step-up; no credential in the
trace or any repr."""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from support.servers import fastmcp_oauth_server, free_port

import mcp_notebook
from mcp_notebook import OAuth
from mcp_notebook.api.connecting.authorization import auth_steps
from mcp_notebook.auth.loopback import LoopbackReceiver, wait_for_redirect


@pytest.fixture
def token_files(private_data_dir: Path) -> Path:
    """Saved tokens go to the test's own data directory (conftest's `private_data_dir`)."""
    return private_data_dir / "oauth"


@pytest.fixture(scope="module")
def oauth_url() -> Iterator[str]:
    with fastmcp_oauth_server() as url:
        yield url


class Browser:
    """The user's browser: opens the authorization URL, and returns the URL it is sent back to."""

    def __init__(self) -> None:
        self.visits: list[dict[str, list[str]]] = []
        self.codes: list[str] = []

    def __call__(self, url: str) -> str:
        self.visits.append(parse_qs(urlsplit(url).query))
        with httpx2.Client(follow_redirects=False, timeout=30.0) as client:
            response = client.get(url)
        assert response.is_redirect, response.text
        back = response.headers["location"]
        self.codes += parse_qs(urlsplit(back).query).get("code", [])
        return back


def call(conn: mcp_notebook.Connection, tool: str, **arguments: str) -> str:
    result = conn.request("tools/call", {"name": tool, "arguments": arguments})
    assert not result.get("isError"), result
    return "".join(part.get("text", "") for part in result["content"])


def steps(conn: mcp_notebook.Connection) -> list[str]:
    return [e.detail.get("step", "") for e in conn.trace.entries() if e.kind == "auth"]


def test_authorize_call_refresh_reauthorize_step_up_and_no_secret_shows(oauth_url: str) -> None:
    browser = Browser()
    with mcp_notebook.connect(oauth_url, name="notes", auth=OAuth(authorize=browser)) as conn:
        # First authorization: asked once, with PKCE, the resource, and the challenge's scope.
        assert call(conn, "whoami") == "notes:read"
        assert len(browser.visits) == 1
        first = browser.visits[0]
        assert first["code_challenge_method"] == ["S256"]
        assert first["resource"] == [oauth_url]
        assert first["scope"] == ["notes:read"]
        flow = conn._session.transport.auth  # type: ignore[attr-defined]
        assert flow.client.source == "registered"

        # The access token expires: refreshed without asking the user.
        assert call(conn, "expire_tokens") == "expired"
        assert call(conn, "whoami") == "notes:read"
        assert len(browser.visits) == 1
        assert "refresh" in steps(conn)

        # The refresh token is gone too: the user is asked again.
        call(conn, "forget_refresh_tokens")
        call(conn, "expire_tokens")
        assert call(conn, "whoami") == "notes:read"
        assert len(browser.visits) == 2

        token, client = flow.token, flow.client
        secrets = [token.access_token, token.refresh_token, client.secret, *browser.codes]
        assert all(secrets) and len(browser.codes) == 2
        shown = json.dumps([e.to_record() for e in conn.trace.entries()], default=str)
        shown += repr(conn) + repr(token) + repr(client) + repr(flow.options) + repr(conn.health)
        for secret in secrets:
            assert secret not in shown
        assert "auth-http" in shown and "/token" in shown  # the steps are there, their secrets are not


def test_403_insufficient_scope_steps_up_with_the_union_of_scopes() -> None:
    """The user asked for too little (notes:read); the server wants notes:write as well."""
    browser = Browser()
    with fastmcp_oauth_server("--require-write") as server:
        with mcp_notebook.connect(server, name="narrow", auth=OAuth(scopes=["notes:read"], authorize=browser)) as conn:
            assert call(conn, "whoami") == "notes:read notes:write"
            assert [visit["scope"] for visit in browser.visits] == [["notes:read"], ["notes:read notes:write"]]
            assert "step-up" in steps(conn)
            shown = {row["step"]: row["what"] for row in auth_steps(conn)}  # the last row of each step
            assert shown["step-up"].count("notes:write") == 1, shown["step-up"]  # the scopes named once
            assert re.search(r"\((a public client: no secret|authenticating with \w+)\)$", shown["client"]), shown["client"]


def test_tokens_are_saved_for_later_connections_until_logout(oauth_url: str, token_files: Path) -> None:
    first = Browser()
    with mcp_notebook.connect(oauth_url, name="saved", auth=OAuth(authorize=first)) as conn:
        assert call(conn, "whoami") == "notes:read"
        token = conn._session.transport.auth.token  # type: ignore[attr-defined]
    files = list(token_files.glob("*.json"))
    assert files and all(path.stat().st_mode & 0o777 == 0o600 for path in files)
    assert token_files.stat().st_mode & 0o777 == 0o700

    later = Browser()
    with mcp_notebook.connect(oauth_url, name="saved", auth=OAuth(authorize=later)) as conn:
        assert call(conn, "whoami") == "notes:read"
        assert later.visits == []  # the saved token was used: nobody was asked
        assert "saved token" in steps(conn)
        assert token.access_token not in json.dumps([e.to_record() for e in conn.trace.entries()], default=str)
        assert conn._session.transport.auth.logout() >= 1  # type: ignore[attr-defined]
    assert not any(json.loads(path.read_text())["server"] == oauth_url for path in token_files.glob("*.json"))

    after = Browser()
    with mcp_notebook.connect(oauth_url, name="saved", auth=OAuth(authorize=after, remember=False)) as conn:
        assert call(conn, "whoami") == "notes:read"
        assert len(after.visits) == 1


def test_the_auth_magic_shows_who_and_the_steps_never_a_secret(oauth_url: str, capsys: pytest.CaptureFixture[str]) -> None:
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "mcp_notebook")
    browser = Browser()
    try:
        with mcp_notebook.connect(oauth_url, name="magic", auth=OAuth(authorize=browser)) as conn:
            call(conn, "whoami")
            flow = conn._session.transport.auth  # type: ignore[attr-defined]
            secrets = [flow.token.access_token, flow.token.refresh_token, flow.client.secret, *browser.codes]
            capsys.readouterr()
            for line in ("%mcp auth magic", "%mcp auth magic --steps", "%mcp status magic", "%mcp trace magic"):
                assert shell.run_cell(line).success, line
            shown = capsys.readouterr().out
            assert "magic: authorized for " + oauth_url in shown
            assert "scopes     notes:read" in shown and "(registered)" in shown
            for step in ("resource metadata", "server metadata", "registration", "authorization", "token"):
                assert step in shown
            assert shell.run_cell("%mcp auth magic --logout").success
            assert "logged out; 1 saved token file deleted" in capsys.readouterr().out
            assert shell.run_cell("%mcp auth magic").success
            shown += capsys.readouterr().out
            assert "magic: not authorized" in shown
            for secret in secrets:
                assert secret not in shown
    finally:
        shell.run_line_magic("unload_ext", "mcp_notebook")
        InteractiveShell.clear_instance()


def test_the_time_spent_authorizing_does_not_count_against_the_request(oauth_url: str) -> None:
    browser = Browser()

    def thoughtful(url: str) -> str:
        time.sleep(5)  # the person reads the consent page for longer than initialize may take
        return browser(url)

    options = OAuth(authorize=thoughtful, remember=False)
    with mcp_notebook.connect(oauth_url, name="slow", era="legacy", timeout=2, auth=options) as conn:
        assert conn.request("tools/list", timeout=60)["tools"]
        assert len(browser.visits) == 1


def test_the_loopback_listener_catches_the_browsers_redirect(oauth_url: str) -> None:
    """Browser and client on one machine: the redirect to 127.0.0.1 completes the flow, no pasting."""
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    pages: list[str] = []

    def browser_here(url: str) -> str | None:
        with LoopbackReceiver(redirect) as receiver, httpx2.Client(follow_redirects=True, timeout=30.0) as client:
            pages.append(client.get(url).text)  # the browser follows the redirect to the listener
            return receiver.wait(30)

    options = OAuth(redirect_uri=redirect, authorize=browser_here, remember=False)  # type: ignore[arg-type]
    with mcp_notebook.connect(oauth_url, name="loopback", auth=options) as conn:
        assert call(conn, "whoami") == "notes:read"
    assert "you may close this tab" in pages[0]
    with LoopbackReceiver(redirect):  # the port was let go
        pass
    with pytest.raises(ValueError, match="not an http URL on a loopback address"):
        LoopbackReceiver("http://example.com:8080/callback")


def test_auth_none_keeps_the_servers_401(oauth_url: str) -> None:
    with pytest.raises(mcp_notebook.HandshakeError, match="HTTP 401 Unauthorized.*wants credentials"):
        mcp_notebook.connect(oauth_url, name="plain", auth=None, era="legacy", timeout=20)


def test_without_a_way_to_ask_the_user_it_says_what_to_pass(oauth_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)  # no browser to open (and none opened by a test)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    with pytest.raises(mcp_notebook.HandshakeError, match=r"auth=OAuth\(authorize="):
        mcp_notebook.connect(oauth_url, name="nobody-to-ask", era="legacy", timeout=20)


def test_the_authorize_callbacks_failure_is_one_line(oauth_url: str) -> None:
    def refuse(url: str) -> str:
        raise RuntimeError("the user closed the tab")

    with pytest.raises(mcp_notebook.HandshakeError, match="authorization was not completed: the user closed the tab"):
        mcp_notebook.connect(oauth_url, name="refused", auth=OAuth(authorize=refuse), era="legacy", timeout=20)


def test_the_wait_for_the_redirect_ends_when_the_flow_is_given_up() -> None:
    """A flow given up (its connection closed) stops waiting at once, leaving the terminal alone;
    else the loopback's redirect ends the wait."""
    redirect = f"http://127.0.0.1:{free_port()}/callback"
    with LoopbackReceiver(redirect) as receiver:
        assert wait_for_redirect(receiver, paste=False, limit=600, stop=lambda: True) is None
        with httpx2.Client(timeout=30.0) as browser:
            assert "Authorization is complete" in browser.get(f"{redirect}?code=c&state=s").text
        assert wait_for_redirect(receiver, paste=False, limit=600) == f"{redirect}?code=c&state=s"


def test_a_token_about_to_expire_is_refreshed_in_the_background(oauth_url: str) -> None:
    """Before its expiry the token is refreshed while it still works: no 401 first, nobody asked."""
    browser = Browser()
    with mcp_notebook.connect(oauth_url, name="ahead", auth=OAuth(authorize=browser, remember=False)) as conn:
        flow = conn._session.transport.auth  # type: ignore[attr-defined]
        assert call(conn, "whoami") == "notes:read"
        first = flow.token
        flow.token = dataclasses.replace(first, expires_at=time.time() + 30)  # as if issued an hour ago
        assert call(conn, "whoami") == "notes:read"  # sent with the old token, which still works
        deadline = time.monotonic() + 30
        while flow.token.access_token == first.access_token and time.monotonic() < deadline:
            call(conn, "whoami")
        assert flow.token.access_token != first.access_token and flow.token.refresh_token
        assert call(conn, "whoami") == "notes:read"
        notes = [e.note for e in conn.trace.entries() if e.kind == "auth" and e.detail.get("step") == "refresh"]
        assert notes == ["token refreshed before it expired"]  # once, and never after a 401
        assert len(browser.visits) == 1 and flow.authorizations == 1
