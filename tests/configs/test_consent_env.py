"""A configured URL that would send what it takes from this machine (`${env:SECRET}` in its URL
or headers, `${userHome}`) is connected to only with consent, as a configured command is run:
asked once per entry through the front end (the names of the variables shown, never their
values), remembered, asked again when the entry changes; refused in one line where nobody can
be asked; and until then nothing at all is sent. A URL entry that takes nothing from the
machine needs no consent.

A cloned project's `.mcp.json` (Claude Code's format, https://code.claude.com/docs/en/mcp)
names the servers: a recording HTTP server that answers nothing, to see that nothing reached
it; the official SDK's server (tests/servers/sdk_server.py) once consent is given.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.configs import ScriptedUser

import mcp_notebook
from mcp_notebook.api.connecting.configured import ConsentRefused
from mcp_notebook.api.display import frontend

SECRET = "s3cr3t-value-4242"


class Recorder(BaseHTTPRequestHandler):
    """Records every request it gets (path and headers), and answers 404."""

    seen: list[tuple[str, dict[str, str]]] = []

    def _record(self) -> None:
        self.seen.append((self.path, dict(self.headers)))
        self.send_response(404)
        self.send_header("content-length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _record

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recorder() -> Iterator[str]:
    Recorder.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    thread = threading.Thread(target=server.serve_forever, name="recorder")
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(30)


@pytest.fixture
def user() -> Iterator[ScriptedUser]:
    previous = frontend.current()
    scripted = ScriptedUser()
    frontend.use(scripted)
    yield scripted
    frontend.use(previous)


def cloned(project: Path, origin: str, **entry: Any) -> None:
    spec = {
        "type": "http",
        "url": f"{origin}/mcp?key=${{env:SECRET_KEY}}",
        "headers": {"X-Api-Key": "${env:SECRET_KEY}", "X-Home": "${userHome}", "X-Plain": "hello"},
        **entry,
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"cloned": spec}}))


def test_nothing_is_sent_without_consent_and_a_script_is_refused_in_one_line(
    config_home: tuple[Path, Path], recorder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, project = config_home
    monkeypatch.setenv("SECRET_KEY", SECRET)
    cloned(project, recorder)
    with pytest.raises(ConsentRefused) as refused:
        mcp_notebook.connect(config="cloned")
    message = str(refused.value)
    assert "\n" not in message and SECRET not in message
    assert "not connected" in message and "SECRET_KEY" in message and "consent=True" in message
    with pytest.raises(ConsentRefused, match=r"not connected \(consent=False\)"):
        mcp_notebook.connect(config="cloned", consent=False)
    assert Recorder.seen == []  # not a request, not a header, not the secret
    assert "cloned" not in mcp_notebook.connections()


def test_the_user_is_shown_the_names_not_the_values_and_cancel_sends_nothing(
    config_home: tuple[Path, Path], recorder: str, user: ScriptedUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    home, project = config_home
    monkeypatch.setenv("SECRET_KEY", SECRET)
    cloned(project, recorder)
    user.runs = [False]
    with pytest.raises(ConsentRefused, match=r"^cloned: cancelled; nothing was sent$"):
        mcp_notebook.connect(config="cloned")
    [request] = user.asked
    assert request.argv is None and request.verb == "Connect"
    assert request.reads == ("SECRET_KEY", "${userHome}")
    assert request.headers == ("X-Api-Key", "X-Home", "X-Plain")
    assert request.url is not None and request.url.startswith(f"{recorder}/mcp?key=")
    shown = "\n".join(request.lines())
    assert SECRET not in shown and str(home) not in shown and "SECRET_KEY" in shown
    assert Recorder.seen == []


def test_consent_is_remembered_per_entry_and_asked_again_when_it_changes(
    config_home: tuple[Path, Path], port: int, user: ScriptedUser, monkeypatch: pytest.MonkeyPatch
) -> None:
    from support.http_servers import sdk_http

    _, project = config_home
    monkeypatch.setenv("SECRET_KEY", SECRET)
    origin = f"http://127.0.0.1:{port}"
    cloned(project, origin)
    user.runs = [True]
    with sdk_http(port):
        with mcp_notebook.connect(config="cloned") as conn:
            assert conn.call_tool("add", {"a": 1, "b": 2}).text == "3"
            assert SECRET not in "".join(f"{e.raw}{e.note}{e.detail}" for e in conn.trace.filter())
        with mcp_notebook.connect(config="cloned"):  # the same entry: not asked again
            pass
        assert len(user.asked) == 1
        cloned(project, origin, headers={"X-Api-Key": "${env:SECRET_KEY}", "X-Other": "${env:SECRET_KEY}"})
        user.runs = [True]
        with mcp_notebook.connect(config="cloned"):  # changed: asked again
            pass
        assert len(user.asked) == 2


def test_a_url_entry_that_takes_nothing_from_the_machine_needs_no_consent(
    config_home: tuple[Path, Path], port: int, user: ScriptedUser
) -> None:
    from support.http_servers import sdk_http

    _, project = config_home
    spec = {"type": "http", "url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Plain": "hello"}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"plain": spec}}))
    with sdk_http(port), mcp_notebook.connect(config="plain") as conn:
        assert conn.call_tool("add", {"a": 2, "b": 2}).text == "4"
    assert not user.asked


def test_the_notebooks_form_asks_to_connect_naming_the_variables(
    config_home: tuple[Path, Path], recorder: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcp_notebook.api.connecting import configured
    from mcp_notebook.notebook.widgets.configs import ConsentForm

    _, project = config_home
    monkeypatch.setenv("SECRET_KEY", SECRET)
    cloned(project, recorder)
    asked: list[Any] = []

    class Form(frontend.FrontEnd):
        def ask_consent(self, request: Any) -> bool | None:
            asked.append(request)
            return None

    previous = frontend.current()
    frontend.use(Form())
    try:
        with pytest.raises(ConsentRefused):
            configured.prepare(None, configured.ConnectOptions(config="cloned"))
    finally:
        frontend.use(previous)
    form = ConsentForm(asked[0])
    assert form.run_button.description == "Connect"
    assert "SECRET_KEY" in form.header.value and "X-Api-Key" in form.header.value and SECRET not in form.header.value
    form.cancel_button.click()
    assert form.answer is False and "nothing was sent" in form.status.value
