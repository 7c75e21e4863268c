"""`%mcp servers`, `%mcp connect NAME` / `--all` for configured servers, `%mcp tools` badges and
pins, completion of configured names, and the consent and inputs widgets themselves.

Configurations are written into a fresh HOME and project folder (`config_home`).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import ipywidgets as widgets
import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.servers import SERVERS_DIR, sdk_server_cmd

import mcp_notebook
from mcp_notebook.api.results.objects import Listing
from mcp_notebook.configs import pins
from mcp_notebook.configs.consent import ConsentRequest
from mcp_notebook.configs.discovery import discover
from mcp_notebook.configs.interpolate import input_requests
from mcp_notebook.notebook.completion.candidates import completions
from mcp_notebook.notebook.widgets.configs import ConsentForm, InputsForm

SDK = [sys.executable, str(SERVERS_DIR / "sdk_server.py")]


@pytest.fixture
def config_shell():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    yield ip
    mcp_notebook.close_all()


def write_project(project: Path) -> None:
    # https://cursor.com/docs/mcp (a project's .cursor/mcp.json: mcpServers, command and args)
    servers = {
        "first": {"command": SDK[0], "args": SDK[1:]},
        "second": {"command": SDK[0], "args": [*SDK[1:], "--slow-start", "0"]},
        "off": {"command": "false", "disabled": True},
    }
    (project / ".cursor").mkdir()
    (project / ".cursor/mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_servers_lists_and_connect_all_connects_each(config_shell, capsys, config_home):
    home, project = config_home
    write_project(project)
    (home / ".cursor").mkdir()
    (home / ".cursor/mcp.json").write_text("{broken")
    listing = config_shell.run_line_magic("mcp", "servers")
    text = repr(listing)
    assert [e.name for e in listing] == ["first", "second", "off"] and "off (disabled)" in text
    assert "cannot read " in text and ".cursor/mcp.json: not valid JSON" in text
    assert config_shell.run_line_magic("mcp", "connect --all --from cursor --consent") is None  # its lines say it all
    out = capsys.readouterr().out
    assert "connected 'first': sdk-test-server" in out and "connected 'second': sdk-test-server" in out
    assert "off: not connected: off: disabled in" in out
    assert sorted(mcp_notebook.connections()) == ["first", "second"]
    rows = [line.split() for line in repr(config_shell.run_line_magic("mcp", "servers --from cursor")).splitlines()[1:]]
    assert [(row[0], row[-1]) for row in rows] == [("first", "yes"), ("second", "yes"), ("off", "no")]


def test_connect_by_name_and_its_mistakes(config_shell, capsys, config_home):
    _, project = config_home
    write_project(project)
    conn = config_shell.run_line_magic("mcp", "connect first --consent --timeout 30")
    assert conn.name == "first" and capsys.readouterr().out == ""  # it shows as its status line
    assert config_shell.display_formatter.format(conn)[0]["text/plain"].startswith("connected 'first': sdk-test-server")
    result = config_shell.run_cell("%mcp connect first --env A=B")
    assert "a configured server has its own" in str(result.error_in_exec)
    result = config_shell.run_cell("%mcp connect x --from cursor -- python x.py")
    assert "--from and --consent are for configured servers" in str(result.error_in_exec)


def test_tools_shows_badges_and_pins_a_typed_server(config_shell, config_home):
    conn = mcp_notebook.connect(sdk_server_cmd(), name="typed")
    listing = config_shell.run_line_magic("mcp", "tools typed")
    assert "output" in repr(listing).splitlines()[0]
    key = pins.server_key(target=conn.health.endpoint)
    assert key.startswith("command:") and set(pins.pinned(key)["tools"]) == set(listing.names())
    assert "the tools are as pinned" in repr(config_shell.run_line_magic("mcp", "tools typed --diff"))

    tools = Listing(
        "tools",
        [{"name": "t", "annotations": {"readOnlyHint": True, "openWorldHint": True, "destructiveHint": False},
          "outputSchema": {"type": "object"}, "title": "<T>"}],
    )  # fmt: skip
    assert "[read-only] [open-world]" in repr(tools) and "schema" in repr(tools) and "destructive" not in repr(tools)
    html = tools._repr_mimebundle_()["text/html"]
    assert "read-only</span>" in html and "&lt;T&gt;" in html and "<div>1 tool</div>" in html


def test_a_listing_leaves_out_the_columns_no_item_fills():
    plain = Listing("tools", [{"name": "a", "description": "one"}, {"name": "b"}])
    assert plain._rows()[0] == ["name", "description"]
    assert repr(plain).splitlines()[0].split() == ["name", "description"]
    assert "<th" in (html := plain._repr_mimebundle_()["text/html"]) and ">title<" not in html and "<div>2 tools</div>" in html
    assert Listing("tools", [{"name": "a", "title": "A"}])._rows()[0] == ["name", "title"]
    assert Listing("prompts", [])._rows()[0] == ["name"]  # the name column stays, whatever is empty


def test_configured_names_and_files_complete(config_shell, config_home):
    _, project = config_home
    write_project(project)
    assert completions("%mcp connect f") == ("f", ["first"])
    assert "cursor" in completions("%mcp connect first --from ")[1]
    assert completions("%mcp servers --from cla") == ("cla", ["claude-code", "claude-desktop"])


def test_the_consent_form_shows_names_not_values_and_answers_once(config_home):
    _, project = config_home
    write_project(project)
    entry = discover().named("first")
    request = ConsentRequest(entry, [*SDK, "--token", "abc123"], "/srv/work", ["API_KEY"], secrets=())
    form = ConsentForm(request)
    assert "sdk_server.py" in form.header.value and "API_KEY" in form.header.value and "/srv/work" in form.header.value
    assert "abc123" not in form.header.value  # a credential-looking argument
    form.cancel_button.click()
    form.run_button.click()  # answered already: the first click stands
    assert form.answer is False and form.answered.is_set() and "nothing was started" in form.status.value


def test_the_inputs_form_uses_a_password_field_and_forgets_it(config_home):
    _, project = config_home
    (project / ".vscode").mkdir()
    # https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (inputs, password: true)
    (project / ".vscode/mcp.json").write_text(
        '{"inputs": [{"type": "promptString", "id": "key", "description": "API <key>", "password": true},'
        ' {"type": "promptString", "id": "user", "description": "User", "default": "ada"}],'
        ' "servers": {"s": {"command": "srv", "args": ["${input:user}"], "env": {"K": "${input:key}"}}}}'
    )
    entry = discover().named("s")
    form = InputsForm(input_requests(entry), entry)
    assert isinstance(form.fields["key"], widgets.Password) and isinstance(form.fields["user"], widgets.Text)
    assert form.fields["user"].value == "ada"
    form.fields["key"].value = "hunter2"
    form.ok_button.click()
    assert form.answer == {"user": "ada", "key": "hunter2"} and form.fields["key"].value == ""


def test_terminal_ipython_asks_y_or_n_and_shows_env_names_only(config_home, monkeypatch, capsys):
    from mcp_notebook.notebook.frontend import NotebookFrontEnd

    _, project = config_home
    write_project(project)
    entry = discover().named("first")
    request = ConsentRequest(entry, [*SDK, "--api-key", "k-123"], None, ["SECRET_TOKEN"])

    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.setattr(sys, "stdin", Tty())
    answers = iter(["y", ""])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    front = NotebookFrontEnd("ipython")
    assert front.ask_consent(request) is True
    assert front.ask_consent(request) is False  # Enter alone is No
    out = capsys.readouterr().out
    assert "sdk_server.py" in out and "SECRET_TOKEN" in out and "k-123" not in out
    assert NotebookFrontEnd("script").ask_consent(request) is None  # a script has nobody to ask
