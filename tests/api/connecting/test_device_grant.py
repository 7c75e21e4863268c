"""The device authorization grant (RFC 8628) through our client, against the demo server's OAuth
mode: the user code and URL shown through the front end, polling until approved, `slow_down`
honoured, denial and expiry as one-line errors, Cancel and a given-up request ending the
wait; the device code and the tokens nowhere in the trace, the outputs or a repr.

Neither FastMCP 4.1.6 nor the MCP SDK 2.3.0 has an authorization server with the device
grant (FastMCP's device-code client is its `deploy` command's, for its own cloud). So the
whole flow runs against the demo's, and the grant itself against Authlib's as well
(tests/servers/authlib_device_server.py): an implementation of the RFC that is not ours.
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.servers import SERVERS_DIR

import mcp_notebook
from mcp_notebook import OAuth, demo_server
from mcp_notebook.api.connecting.authorization import auth_status, auth_steps
from mcp_notebook.api.display import frontend
from mcp_notebook.auth import device
from mcp_notebook.auth.device import DEVICE_GRANT, DeviceCode
from mcp_notebook.auth.discovery import Discovered
from mcp_notebook.auth.flow import OAuthFlow
from mcp_notebook.base.errors import McpNotebookError
from mcp_notebook.base.sizes import RETRY_FLOOR
from mcp_notebook.demo_server import OAuthSettings

ISSUED = re.compile(r"demo-(?:at|rt|dc|cs)-[A-Za-z0-9_-]{8,}")


class Shown:
    """A showing of a device code that records how it ended; `cancel` is the user's Cancel."""

    def __init__(self, code: DeviceCode) -> None:
        self.code = code
        self.cancel = threading.Event()
        self.outcome: tuple[str, bool] | None = None
        self.finished = threading.Event()
        self.interrupt = False

    def cancelled(self) -> bool:
        if self.interrupt:  # the user's Ctrl-C, once the flow polls
            self.interrupt = False
            signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)
        return self.cancel.is_set()

    def finish(self, note: str, failed: bool) -> None:
        self.outcome = (note, failed)
        self.finished.set()


class DeviceUser(frontend.FrontEnd):
    """Sees the codes; cancels at once when told to."""

    def __init__(self, cancel: bool = False) -> None:
        self.shown: list[Shown] = []
        self.cancel = cancel
        self.interrupt = False

    def show_device_code(self, code: DeviceCode, progress: Any = None) -> Shown:
        shown = Shown(code)
        if self.cancel:
            shown.cancel.set()
        shown.interrupt = self.interrupt
        self.shown.append(shown)
        return shown


@pytest.fixture
def device_user() -> Iterator[DeviceUser]:
    previous = frontend.current()
    scripted = DeviceUser()
    frontend.use(scripted)
    yield scripted
    frontend.use(previous)


def serve(tmp_path: Path, **settings: Any) -> tuple[demo_server.DemoServerProcess, str, Path]:
    issued = tmp_path / "issued.txt"
    process, url = demo_server.start_http(oauth=OAuthSettings(device_interval=0, issued_log=str(issued), **settings))
    return process, url, issued


def test_the_device_grant_end_to_end_and_no_secret_shows(tmp_path: Path, device_user: DeviceUser) -> None:
    process, url, issued = serve(tmp_path)
    with process, mcp_notebook.connect(url, name="dev", auth=OAuth(grant="device", remember=False)) as conn:
        assert conn.call_tool("add", {"a": 1, "b": 2}).structured == {"sum": 3}
        [shown] = device_user.shown
        origin = url.removesuffix("/mcp")
        assert shown.code.verification_uri == f"{origin}/device"
        assert shown.code.url == f"{origin}/device?user_code={shown.code.user_code}"  # the complete URL is preferred
        assert shown.outcome == ("approved on the device", False)
        status = auth_status(conn)
        assert status is not None and status.authorized and status.client_source == "registered"
        polls = [e for e in conn.trace.entries() if e.kind == "auth-http" and e.detail.get("step") == "device token"]
        assert [e.detail["status"] for e in polls] == [400, 200]  # authorization_pending, then the token

        issued_secrets = issued.read_text().split()
        assert {value.split("-")[1] for value in issued_secrets} == {"dc", "at", "rt"}
        conn.trace.to_jsonl(tmp_path / "trace.jsonl")
        shown_text = "\n".join(
            [(tmp_path / "trace.jsonl").read_text(), json.dumps(auth_steps(conn)), repr(conn), repr(shown.code), repr(status)]
        )
        assert not [value for value in issued_secrets if value in shown_text]
        assert not ISSUED.search(shown_text)
        assert "device authorization" in shown_text and "asking the user to enter a code" in shown_text


def test_slow_down_adds_five_seconds_and_is_heard_once(tmp_path: Path, device_user: DeviceUser) -> None:
    process, url, _ = serve(tmp_path, device_fault="slow")
    with process, mcp_notebook.connect(url, name="slow", auth=OAuth(grant="device", remember=False)) as conn:
        polls = [e for e in conn.trace.entries() if e.kind == "auth-http" and e.detail.get("step") == "device token"]
        assert [e.detail["status"] for e in polls] == [400, 200]  # a client that polled sooner is slowed down again
        notes = [e.note for e in conn.trace.entries() if e.kind == "auth" and e.detail.get("step") == "device"]
        assert notes == ["the server asks to poll more slowly: every 5 s"]
        assert polls[1].monotonic - polls[0].monotonic >= 5.0  # the wait itself, not a threshold on our speed


def test_an_interval_of_0_is_polled_no_sooner_than_the_floor(
    tmp_path: Path, device_user: DeviceUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo asks for `interval: 0`: each poll still waits RETRY_FLOOR (the waits are recorded, not made)."""
    asked: list[float] = []

    async def recorded(interval: float, deadline: float, stop: Any) -> None:
        asked.append(interval)

    monkeypatch.setattr(device, "wait_to_poll", recorded)
    process, url, _ = serve(tmp_path)
    with process, mcp_notebook.connect(url, name="floor", auth=OAuth(grant="device", remember=False)) as conn:
        polls = [e for e in conn.trace.entries() if e.kind == "auth-http" and e.detail.get("step") == "device token"]
        assert [e.detail["status"] for e in polls] == [400, 200]
    assert device_user.shown[0].code.interval == 0
    assert asked == [RETRY_FLOOR, RETRY_FLOOR]


@pytest.mark.parametrize(
    ("fault", "message"),
    [("deny", "authorization denied at http://127.0.0.1"), ("expire", "the device code expired before it was approved")],
)
def test_denial_and_expiry_are_one_line_errors(tmp_path: Path, device_user: DeviceUser, fault: str, message: str) -> None:
    process, url, _ = serve(tmp_path, device_fault=fault)
    with process, pytest.raises(McpNotebookError, match=message):
        mcp_notebook.connect(url, name=fault, auth=OAuth(grant="device", remember=False))
    assert device_user.shown[0].outcome is not None and device_user.shown[0].outcome[1] is True


def test_cancel_ends_the_wait(tmp_path: Path, device_user: DeviceUser) -> None:
    device_user.cancel = True
    process, url, _ = serve(tmp_path, device_fault="pending")
    with process, pytest.raises(McpNotebookError, match="authorization cancelled"):
        mcp_notebook.connect(url, name="cancel", auth=OAuth(grant="device", remember=False))
    assert device_user.shown[0].outcome == ("authorization cancelled", True)


def test_ctrl_c_ends_the_wait(tmp_path: Path, device_user: DeviceUser) -> None:
    """Ctrl-C while the flow polls (sent once polling has begun): the call ends, and so does the polling."""
    process, url, _ = serve(tmp_path, device_fault="pending")
    device_user.interrupt = True
    with process:
        with pytest.raises(KeyboardInterrupt):
            mcp_notebook.connect(url, name="interrupted", auth=OAuth(grant="device", remember=False))
        assert device_user.shown[0].finished.wait(30)
        note, failed = device_user.shown[0].outcome  # type: ignore[misc]
        assert failed and note.startswith("authorization given up")


def test_ctrl_c_on_a_later_request_ends_its_polling_and_the_connection_goes_on(tmp_path: Path, device_user: DeviceUser) -> None:
    """The token is used up and cannot be refreshed, so a tool call starts a second device
    flow; Ctrl-C gives that call up while the flow polls. No request waits for the flow any
    more, so it stops, though the connection stays open; the next call asks again."""
    process, url, _ = serve(tmp_path, token_calls=1, refreshes=0, device_fault="later")
    with process, mcp_notebook.connect(url, name="later", auth=OAuth(grant="device", remember=False)) as conn:
        conn.call_tool("add", {"a": 1, "b": 2})
        device_user.interrupt = True
        with pytest.raises(KeyboardInterrupt):
            conn.call_tool("add", {"a": 1, "b": 2})
        device_user.interrupt = False
        assert device_user.shown[1].finished.wait(30)
        assert device_user.shown[1].outcome == ("authorization given up: no request waits for it any more", True)
        device_user.cancel = True  # the next call asks again (a third code): not given up, cancelled
        with pytest.raises(McpNotebookError, match="authorization cancelled"):
            conn.call_tool("add", {"a": 2, "b": 2})
        assert len(device_user.shown) == 3 and conn.ping() >= 0  # the connection goes on


@pytest.mark.parametrize(
    ("grant", "listed", "picked"),
    [
        ("auto", ["authorization_code", "refresh_token", DEVICE_GRANT], "authorization_code"),
        ("auto", [DEVICE_GRANT, "refresh_token"], "device"),
        ("auto", ["client_credentials", DEVICE_GRANT], "client_credentials"),
        ("device", ["authorization_code", DEVICE_GRANT], "device"),
    ],
)
def test_when_the_device_grant_is_chosen(grant: str, listed: list[str], picked: str) -> None:
    metadata = {"grant_types_supported": listed, "device_authorization_endpoint": "https://as.example/device"}
    found = Discovered("https://mcp.example/mcp", "https://as.example", metadata, None, legacy=False)
    flow = OAuthFlow("https://mcp.example/mcp", OAuth(grant=grant, remember=False), events=lambda *a, **k: None, secret=print)
    assert flow._grant(found) == picked


def test_the_terminal_form_prints_the_url_and_the_code(capsys: pytest.CaptureFixture[str]) -> None:
    code = DeviceCode("BCDF-GHJK", "https://as.example/device", None, 600.0, 5.0, "https://as.example", "dc-secret-1")
    shown = frontend.FrontEnd().show_device_code(code)
    out = capsys.readouterr()
    text = out.out + out.err
    assert "open https://as.example/device on any device and enter the code BCDF-GHJK" in text
    assert "dc-secret-1" not in text and not shown.cancelled()
    complete = DeviceCode("BCDF-GHJK", "https://as.example/device", "https://as.example/d?c=BCDF-GHJK", 600.0, 5.0, "i", "dc")
    frontend.FrontEnd().show_device_code(complete)
    out = capsys.readouterr()
    assert "open https://as.example/d?c=BCDF-GHJK on any device" in out.out + out.err


def test_the_command_line_client_with_device(tmp_path: Path) -> None:
    """`python -m mcp_notebook URL --device`: the code and page printed, polled until approved."""
    process, url, issued = serve(tmp_path)
    with process:
        out = subprocess.run(
            [sys.executable, "-m", "mcp_notebook", url, "--device", "--call", "add", "--arguments", '{"a": 1, "b": 2}'],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert out.returncode == 0, out.stderr
    text = out.stdout + out.stderr
    assert f"open {url.removesuffix('/mcp')}/device?user_code=" in text and "on any device" in text
    assert '"sum": 3' in out.stdout
    assert not [value for value in issued.read_text().split() if value in text]


class Recorded:
    """The flow's events and secrets, as a connection's trace would take them."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self.secrets: list[str] = []

    def event(self, *args: Any, **detail: Any) -> None:
        self.events.append((*args, detail))


@pytest.mark.parametrize(
    ("decisions", "slow", "outcome"),
    [
        ({1: None, 2: True}, False, "token"),
        ({1: None, 2: True}, True, "token"),
        ({1: None, 2: False}, False, "authorization denied at"),
    ],
)
async def test_against_authlibs_device_grant(
    decisions: dict[int, bool | None], slow: bool, outcome: str, monkeypatch: pytest.MonkeyPatch, anyio_backend: str
) -> None:
    """Our grant against another implementation of RFC 8628: Authlib's (see the server's module)."""
    monkeypatch.setenv("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on loopback
    monkeypatch.syspath_prepend(str(SERVERS_DIR))
    from authlib_device_server import CLIENT_ID, AuthlibDeviceServer, State

    from mcp_notebook.auth.device import poll_for_token, request_device_code
    from mcp_notebook.auth.exchange import AuthExchange
    from mcp_notebook.auth.identity import ClientIdentity

    recorded = Recorded()
    with AuthlibDeviceServer(State(decisions=decisions, slow=slow)) as server:
        found = Discovered(f"{server.state.origin}/mcp", server.state.origin, server.metadata(), None, legacy=False)
        client = ClientIdentity(CLIENT_ID, "none", "pre-registered")
        http = AuthExchange(recorded.event, recorded.secrets.append)
        try:
            code = await request_device_code(http, found, client, ["read"])
            assert code.verification_uri == f"{server.state.origin}/activate"
            assert code.url == f"{server.state.origin}/activate?user_code={code.user_code}"
            assert code.device_code in recorded.secrets  # registered for redaction the moment it came
            try:
                token = await poll_for_token(http, found, client, code, ["read"], lambda: None)
                got = "token"
            except McpNotebookError as exc:
                got = str(exc)
                token = None
        finally:
            await http.aclose()
    assert got.startswith(outcome), got
    polls = [form for form in server.state.forms if form.get("grant_type") == DEVICE_GRANT]
    assert all(form["resource"] == found.resource and "code_verifier" not in form for form in polls)
    assert len(polls) == 2  # pending (or slow_down), then the answer
    if token is not None:
        assert token.access_token == server.state.tokens[-1]["access_token"] and token.scopes == ("read",)
        assert token.access_token in recorded.secrets
    if slow:
        slowed = [e for e in recorded.events if e[0] == "auth" and e[-1].get("step") == "device"]
        assert [e[1] for e in slowed] == ["the server asks to poll more slowly: every 5 s"]
