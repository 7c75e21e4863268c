"""The demo server's OAuth-protected mode: its authorization server step by step over plain
HTTP, its fault switches through our client (`mcp_notebook.demo(oauth=True)`), and the
official SDK's OAuth client as a second, independent client.
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest
from support.demo_wire import INITIALIZE, MCP_HEADERS

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.api.connecting.authorization import auth_status, auth_steps
from mcp_notebook.api.connecting.demo import follow_redirect, http_server
from mcp_notebook.demo_server import OAuthSettings
from mcp_notebook.notebook.magics.auth import format_status, format_steps

REDIRECT = "http://127.0.0.1:33418/callback"
ISSUED = re.compile(r"demo-(?:at|rt|code|cs)-[A-Za-z0-9_-]{8,}")


@pytest.fixture
def oauth_server() -> Iterator[tuple[demo_server.DemoServerProcess, str]]:
    process, url = demo_server.start_http(oauth=OAuthSettings(step_up_tool="image"))
    with process:
        yield process, url


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def register(http: httpx2.Client, origin: str, method: str = "none") -> dict[str, Any]:
    answer = http.post(f"{origin}/register", json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": method})
    assert answer.status_code == 201
    return answer.json()


def authorize(http: httpx2.Client, origin: str, client_id: str, challenge: str, resource: str, **extra: str) -> dict[str, str]:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "state": "s-1",
        "resource": resource,
        "scope": "demo:tools",
        **extra,
    }
    answer = http.get(f"{origin}/authorize?{urlencode(query)}")
    assert answer.status_code == 302
    location = answer.headers["location"]
    assert location.startswith(REDIRECT + "?")
    return {key: values[0] for key, values in parse_qs(urlsplit(location).query).items()}


def test_the_flow_step_by_step_over_plain_http(oauth_server: tuple[demo_server.DemoServerProcess, str]) -> None:
    _, url = oauth_server
    origin = url.removesuffix("/mcp")
    with httpx2.Client() as http:
        refused = http.post(url, json=INITIALIZE, headers=MCP_HEADERS)
        assert refused.status_code == 401
        challenge = refused.headers["www-authenticate"]
        assert challenge.startswith("Bearer ")
        assert f'resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"' in challenge
        assert 'scope="demo:tools"' in challenge

        prm = http.get(f"{origin}/.well-known/oauth-protected-resource/mcp").json()
        assert prm["resource"] == url and prm["authorization_servers"] == [origin]
        metadata = http.get(f"{origin}/.well-known/oauth-authorization-server").json()
        assert metadata["issuer"] == origin and metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["authorization_response_iss_parameter_supported"] is True

        client = register(http, origin, "client_secret_post")
        assert client["client_secret"].startswith("demo-cs-")
        verifier, code_challenge = pkce()
        answer = authorize(http, origin, client["client_id"], code_challenge, url)
        assert answer["state"] == "s-1" and answer["iss"] == origin and answer["code"].startswith("demo-code-")

        form = {
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": REDIRECT,
            "client_id": client["client_id"],
            "client_secret": client["client_secret"],
            "resource": url,
        }
        wrong_verifier = http.post(f"{origin}/token", data={**form, "code_verifier": pkce()[0]})
        assert wrong_verifier.status_code == 400 and wrong_verifier.json()["error"] == "invalid_grant"
        answer = authorize(http, origin, client["client_id"], code_challenge, url)
        wrong_secret = http.post(f"{origin}/token", data={**form, "code": answer["code"], "client_secret": "x"})
        assert wrong_secret.status_code == 401 and wrong_secret.json()["error"] == "invalid_client"
        tokens = http.post(f"{origin}/token", data={**form, "code": answer["code"], "code_verifier": verifier}).json()
        assert tokens["token_type"] == "Bearer" and tokens["scope"] == "demo:tools"
        assert tokens["access_token"].startswith("demo-at-") and tokens["refresh_token"].startswith("demo-rt-")
        reused = http.post(f"{origin}/token", data={**form, "code": answer["code"], "code_verifier": verifier})
        assert reused.json()["error"] == "invalid_grant"

        bearer = {**MCP_HEADERS, "authorization": f"Bearer {tokens['access_token']}"}
        opened = http.post(url, json=INITIALIZE, headers=bearer)
        assert opened.status_code == 200 and opened.json()["result"]["serverInfo"]
        session = {**bearer, "mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "image", "arguments": {}}}
        step_up = http.post(url, json=call, headers=session)
        assert step_up.status_code == 403
        assert 'error="insufficient_scope"' in step_up.headers["www-authenticate"]
        assert 'scope="demo:tools demo:admin"' in step_up.headers["www-authenticate"]

        refreshed = http.post(
            f"{origin}/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "resource": url},
            auth=(client["client_id"], client["client_secret"]),
        ).json()
        assert refreshed["access_token"] != tokens["access_token"]
        rotated = http.post(
            f"{origin}/token",
            data={"grant_type": "refresh_token", "refresh_token": tokens["refresh_token"]},
            auth=(client["client_id"], client["client_secret"]),
        )
        assert rotated.json()["error"] == "invalid_grant"


def test_the_resource_parameter_must_name_this_server(oauth_server: tuple[demo_server.DemoServerProcess, str]) -> None:
    _, url = oauth_server
    origin = url.removesuffix("/mcp")
    with httpx2.Client() as http:
        client = register(http, origin)
        answer = authorize(http, origin, client["client_id"], pkce()[1], "http://127.0.0.1:1/elsewhere")
        assert answer["error"] == "invalid_target" and answer["state"] == "s-1" and "code" not in answer
        no_pkce = authorize(http, origin, client["client_id"], "", url)
        assert no_pkce["error"] == "invalid_request"
        unknown = http.get(f"{origin}/authorize?{urlencode({'client_id': 'nobody', 'redirect_uri': REDIRECT})}")
        assert unknown.status_code == 400 and "location" not in unknown.headers  # never redirect for an unknown client


def test_settings_are_checked_before_a_server_starts() -> None:
    with pytest.raises(ValueError, match="token_calls"):
        OAuthSettings(token_calls=0)
    with pytest.raises(ValueError, match="oauth is for the http transport"):
        demo_server.command("stdio", oauth=OAuthSettings())
    with pytest.raises(ValueError, match="needs oauth=True"):
        mcp_notebook.demo("x", transport="http", token_calls=2, load_magics=False)
    argv = demo_server.command("http", oauth=OAuthSettings(token_calls=2, step_up_tool="add"))
    assert argv[-5:] == ["--oauth", "--token-calls", "2", "--step-up-tool", "add"]


def test_fault_switches_through_our_client(tmp_path: Path) -> None:
    issued_log = tmp_path / "issued.txt"
    conn = mcp_notebook.demo(
        "oauth-faults",
        transport="http",
        oauth=True,
        token_calls=2,
        step_up_tool="image",
        refreshes=1,
        issued_log=str(issued_log),
        load_magics=False,
        keepalive=None,
    )
    try:
        assert conn.call_tool("add", {"a": 1, "b": 2}).structured == {"sum": 3}
        status = auth_status(conn)
        assert status is not None and status.authorizations == 1 and status.scopes == ("demo:tools",)
        conn.call_tool("add", {"a": 1, "b": 2})
        conn.call_tool("add", {"a": 2, "b": 2})  # the token is used up: refreshed, not asked again
        assert [row["step"] for row in auth_steps(conn)].count("refresh") == 2  # the POST and its outcome
        assert auth_status(conn).authorizations == 1  # type: ignore[union-attr]

        conn.call_tool("image", {})  # 403 insufficient_scope: step-up
        status = auth_status(conn)
        assert status is not None and status.authorizations == 2 and "demo:admin" in status.scopes

        conn.call_tool("add", {"a": 1, "b": 1})
        conn.call_tool("add", {"a": 1, "b": 1})  # used up again; this refresh fails: authorized afresh
        status = auth_status(conn)
        assert status is not None and status.authorizations == 3
        assert "demo:admin" in status.scopes  # authorized afresh with the stepped-up scope it held
        conn.call_tool("image", {})
        assert auth_status(conn).authorizations == 3  # type: ignore[union-attr]  # no second step-up
        steps = format_steps(conn.name, auth_steps(conn))
        assert "refresh refused" in " ".join(steps.split()) and "authorizing afresh" in " ".join(steps.split())

        secrets_issued = issued_log.read_text().split()
        assert {value.split("-")[1] for value in secrets_issued} == {"at", "rt", "code"}
        conn.trace.to_jsonl(tmp_path / "trace.jsonl")
        shown = "\n".join([steps, format_status(auth_status(conn)), (tmp_path / "trace.jsonl").read_text(), repr(conn)])  # type: ignore[arg-type]
        assert not [value for value in secrets_issued if value in shown]
        assert not ISSUED.search(shown)
    finally:
        conn.close()


def test_token_seconds_expire_tokens_by_time() -> None:
    """The demo server refuses an access token once token_seconds have passed, by its clock
    alone: a token of our own, from a raw flow that nobody refreshes and that makes no tool
    calls, is refused with 401 "expired" once its time is up (the test does not insist on
    seeing it accepted first: a loaded machine may take longer than its 2 s to send it). Our
    client on that server keeps working through refresh, before and after its tokens lapse, without authorizing again."""
    conn = mcp_notebook.demo("oauth-time", transport="http", oauth=True, token_seconds=2, load_magics=False, keepalive=None)
    try:
        status = auth_status(conn)
        assert status is not None and status.expires_at is not None
        first_expiry = status.expires_at
        conn.call_tool("echo", {"text": "x"})
        while auth_status(conn).expires_at == first_expiry:  # type: ignore[union-attr]
            conn.call_tool("echo", {"text": "x"})  # each call refreshes ahead: the token expires in under 60 s

        process = http_server("oauth-time")
        assert process is not None and process.url is not None
        url = process.url
        origin = url.removesuffix("/mcp")
        with httpx2.Client() as http:
            client = register(http, origin)
            verifier, challenge = pkce()
            code = authorize(http, origin, client["client_id"], challenge, url)["code"]
            form = {"grant_type": "authorization_code", "code": code, "redirect_uri": REDIRECT, "resource": url}
            issued = http.post(f"{origin}/token", data={**form, "client_id": client["client_id"], "code_verifier": verifier})
            tokens = issued.json()
            assert issued.status_code == 200 and tokens["expires_in"] == 2
            bearer = {**MCP_HEADERS, "authorization": f"Bearer {tokens['access_token']}"}
            deadline = time.monotonic() + 30
            while (answer := http.post(url, json=INITIALIZE, headers=bearer)).status_code == 200:
                assert time.monotonic() < deadline, "the 2 s access token was still accepted after 30 s"
                time.sleep(0.1)  # the pace of the polling; the deadline bounds it
            assert answer.status_code == 401
            assert 'error="invalid_token"' in answer.headers["www-authenticate"]
            assert "the access token has expired" in answer.headers["www-authenticate"]  # not refused as unknown

        # The client's token, issued before ours, has lapsed too: the call is refused, then answered after a refresh.
        assert conn.call_tool("echo", {"text": "after"}).text == "after"
        assert auth_status(conn).authorizations == 1  # type: ignore[union-attr]
    finally:
        conn.close()


def test_follow_redirect_refuses_a_page_that_does_not_redirect(oauth_server: tuple[demo_server.DemoServerProcess, str]) -> None:
    _, url = oauth_server
    with pytest.raises(mcp_notebook.AuthorizationError, match="HTTP 400"):
        follow_redirect(url.removesuffix("/mcp") + "/authorize?client_id=nobody")


@pytest.mark.anyio
@pytest.mark.parametrize("anyio_backend", ["asyncio"])
async def test_the_sdk_oauth_client_authorizes_steps_up_and_calls(anyio_backend: str) -> None:
    auth = pytest.importorskip("mcp.client.auth")
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

    process, url = demo_server.start_http(oauth=OAuthSettings(step_up_tool="image"))
    redirected: list[str] = []

    class Memory:
        tokens: Any = None
        client: Any = None

        async def get_tokens(self) -> Any:
            return self.tokens

        async def set_tokens(self, tokens: Any) -> None:
            self.tokens = tokens

        async def get_client_info(self) -> Any:
            return self.client

        async def set_client_info(self, info: Any) -> None:
            self.client = info

    async def redirect_handler(authorization_url: str) -> None:
        async with httpx2.AsyncClient() as http:
            answer = await http.get(authorization_url)
        redirected.append(answer.headers["location"])

    async def callback_handler() -> AuthorizationCodeResult:
        query = {key: values[0] for key, values in parse_qs(urlsplit(redirected[-1]).query).items()}
        return AuthorizationCodeResult(code=query["code"], state=query.get("state"), iss=query.get("iss"))

    provider = auth.OAuthClientProvider(
        url,
        OAuthClientMetadata(redirect_uris=[REDIRECT], client_name="sdk", token_endpoint_auth_method="none"),
        Memory(),
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )
    with process:
        async with httpx2.AsyncClient(auth=provider) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
                added = await client.call_tool("add", {"a": 2, "b": 3})
                assert added.structured_content == {"sum": 5}
                image = await client.call_tool("image", {})  # 403 insufficient_scope: the SDK steps up
                assert image.content[0].type == "image"
    assert len(redirected) == 2
    lines = "\n".join(process.stderr_log.lines)
    assert "approved demo-client-1 for scopes demo:tools demo:admin" in lines


def test_the_command_line_lists_the_oauth_switches_and_refuses_them_without_oauth(capsys: pytest.CaptureFixture[str]) -> None:
    from mcp_notebook.demo_server.__main__ import build_parser, main

    help_text = build_parser().format_help()
    for flag in ("--oauth", "--token-seconds", "--token-calls", "--step-up-tool", "--refreshes", "--issued-log"):
        assert flag in help_text
    with pytest.raises(SystemExit) as exited:
        main(["--transport", "http", "--token-calls", "2"])
    assert exited.value.code == 2 and "--token-calls needs --oauth" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--oauth"])  # stdio has no HTTP to protect
    assert "--oauth needs --transport http" in capsys.readouterr().err


@pytest.mark.parametrize("era", ["modern", "both"])
def test_every_era_is_protected_the_same_way(era: str) -> None:
    conn = mcp_notebook.demo(
        f"oauth-{era}",
        transport="http",
        era=era,
        oauth=True,
        token_calls=1,
        step_up_tool="image",
        load_magics=False,
        keepalive=None,
    )
    try:
        assert conn.era == "modern"
        assert conn.call_tool("add", {"a": 1, "b": 2}).structured == {"sum": 3}
        assert conn.call_tool("image", {}).content[0]["type"] == "image"  # used up and short of a scope: step-up
        status = auth_status(conn)
        assert status is not None and status.authorizations == 2 and "demo:admin" in status.scopes
    finally:
        conn.close()
