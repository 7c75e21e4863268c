"""The feature magics (`%mcp tools/call/read/prompt/...`, `%%mcp call`), tab completion,
and the feature API over Streamable HTTP against server-everything."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError as IPythonUsageError
from support.features import notice
from support.http_servers import everything
from support.servers import server_everything_cmd

import mcp_notebook
from mcp_notebook.api.results.objects import Listing, PromptResult, ResourceResult, ToolResult
from mcp_notebook.notebook.magics import commands as _commands

pytestmark = [pytest.mark.node]


def test_line_and_cell_magics_return_results(ev_shell):
    assert isinstance(ev_shell.run_line_magic("mcp", "tools"), Listing)
    result = ev_shell.run_line_magic("mcp", "call get-sum a=2 b=40")
    assert isinstance(result, ToolResult) and result.text.endswith("42.")
    assert ev_shell.run_cell_magic("mcp", "call get-sum", '{"a": 1, "b": 2}').text.endswith("3.")
    assert ev_shell.run_cell_magic("mcp", "call get-annotated-message", "messageType: success\nincludeImage: false\n").content
    assert ev_shell.run_cell_magic("mcp", "call get-sum b=5", '{"a": 1}').text.endswith("6.")
    assert isinstance(
        ev_shell.run_line_magic("mcp", "read 'demo://resource/dynamic/text/{resourceId}' resourceId=4"), ResourceResult
    )
    assert isinstance(ev_shell.run_line_magic("mcp", "read 'Dynamic Text Resource' resourceId=4"), ResourceResult)
    assert "Paris" in ev_shell.run_line_magic("mcp", "prompt args-prompt city=Paris").text
    assert isinstance(ev_shell.run_line_magic("mcp", "prompt simple-prompt"), PromptResult)
    assert len(ev_shell.run_line_magic("mcp", "resources --templates")) == 2
    assert ev_shell.run_line_magic("mcp", "prompts").get("completable-prompt")


@pytest.mark.parametrize(
    "line, words",
    [
        ("call nope", "unknown tool 'nope'"),
        ("call get-sum a=x b=1", "'a' should be number (JSON), not 'x'"),
        ("call get-sum a=1", "missing required 'b'"),
        ("call get-sum a", "key=value"),
        ("prompt args-prompt", "missing required argument"),
        ("loglevel loud", "invalid choice"),
        ("read 'Dynamic Text Resource' other=1", "has no variable"),
        ("roots /tmp", "declared no roots capability"),
    ],
)
def test_mistakes_are_one_line_usage_errors(ev_shell, line, words):
    with pytest.raises(IPythonUsageError) as info:
        ev_shell.run_line_magic("mcp", line)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_roots_are_listed_and_changed(ev_shell, tmp_path, capsys):
    with mcp_notebook.connect(server_everything_cmd(), name="rooted", era="legacy", roots=[tmp_path]) as conn:
        ev_shell.run_line_magic("mcp", "roots --conn rooted")
        assert tmp_path.as_uri() in capsys.readouterr().out
        assert "(1 total)" in conn.call_tool("get-roots-list").text  # now the server listens for changes
        synced = notice(conn, "notifications/message", lambda params: "2 root(s) received" in str(params.get("data")))
        ev_shell.run_line_magic("mcp", f"roots {tmp_path} {tmp_path.parent} --conn rooted")
        assert "2 root(s)" in capsys.readouterr().out
        assert synced.wait(20)  # the server asked again and logged what it got
        assert "(2 total)" in conn.call_tool("get-roots-list").text
        assert [e.method for e in conn.trace.frames("out") if e.method == "notifications/roots/list_changed"]


def test_cell_bodies_that_are_not_arguments(ev_shell):
    for body, words in [("[1, 2]", "must be an object"), ("a: [", "neither JSON nor YAML")]:
        with pytest.raises(IPythonUsageError, match=words):
            ev_shell.run_cell_magic("mcp", "call get-sum", body)
    with pytest.raises(IPythonUsageError, match="only runs `call TOOL`"):
        ev_shell.run_cell_magic("mcp", "tools", "{}")


# One line per subcommand that works on a connection; disconnect goes last.
ON_A_CONNECTION = {
    "tools": "",
    "tool": "get-sum --no-form",
    "call": "get-sum a=1 b=2",
    "resources": "--templates",
    "read": "'Dynamic Text Resource' resourceId=1",
    "subscribe": "demo://resource/dynamic/text/1",
    "unsubscribe": "demo://resource/dynamic/text/1",
    "prompts": "",
    "prompt": "simple-prompt",
    "roots": "",
    "loglevel": "info",
    "logs": "--last 3",
    "tasks": "",
    "cancel": "999",
    "health": "",
    "trace": "--last 2",
    "keepalive": "",
    "ping": "",
    "status": "",
    "auth": "",
    "violations": "",
    "reconnect": "",
    "disconnect": "",
}


def test_every_subcommand_on_a_connection_takes_conn(ev_shell, capsys):
    """With two connections open the connection must be named, and -c/--conn names it, in every one."""
    takes_conn = {name for name, sub in _commands.SUBCOMMANDS.items() if sub.parser.connection}
    assert takes_conn == set(ON_A_CONNECTION)
    assert set(_commands.SUBCOMMANDS) - takes_conn == {
        "compare",
        "connect",
        "dashboard",
        "doctor",
        "help",
        "load",
        "servers",
        "tap",
    }
    mcp_notebook.demo("other", load_magics=False, keepalive=None)  # a second connection: every command must name ev
    try:
        for n, (name, rest) in enumerate(ON_A_CONNECTION.items()):
            if name not in ("status", "auth"):  # which list every connection when none is named
                with pytest.raises(IPythonUsageError, match=r"several connections are open \(ev, other\)"):
                    ev_shell.run_line_magic("mcp", f"{name} {rest}")
            with pytest.raises(IPythonUsageError, match="no connection named 'nosuch'"):
                ev_shell.run_line_magic("mcp", f"{name} {rest} --conn nosuch")
            capsys.readouterr()
            ev_shell.run_line_magic("mcp", f"{name} {rest} {'-c' if n % 2 else '--conn'} ev")
            out = capsys.readouterr().out
            assert "other" not in out, (name, out)
        assert "closed 'ev'" in out and set(mcp_notebook.connections()) == {"other"}
    finally:
        mcp_notebook.get_connection("other").close()


def test_the_feature_api_over_streamable_http(port):
    with (
        everything(port, "streamableHttp") as base,
        mcp_notebook.connect(
            base + "/mcp", name="http", era="legacy", roots=True, sampling=lambda p: "ok", elicitation=lambda p: {"number": 1}
        ) as conn,
    ):  # (the published schema.json allows only integers in ElicitResult content: not 3.14)
        assert conn.call_tool("echo", {"message": "hi"}).text == "Echo: hi"
        assert conn.call_tool("get-structured-content", {"location": "New York"}).structured
        seen = []
        conn.call_tool("trigger-long-running-operation", {"duration": 0.6, "steps": 3}, progress=lambda *a: seen.append(a))
        assert seen[-1][:2] == (3.0, 3.0)
        assert "ok" in conn.call_tool("trigger-sampling-request", {"prompt": "p"}).text
        assert "accept" in conn.call_tool("trigger-elicitation-request").text
        assert "Resource 5" in conn.read_template("Dynamic Text Resource", resourceId=5).text
        assert conn.complete("prompt:completable-prompt", "department", "S") == ["Sales", "Support"]
