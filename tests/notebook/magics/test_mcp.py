"""The %mcp magics, driven through a real IPython shell."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from IPython.core.interactiveshell import InteractiveShell
from support.servers import SERVERS_DIR

import mcp_notebook
from mcp_notebook.notebook.magics import commands as _commands

SERVERS = SERVERS_DIR
RAW = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVERS / 'raw_server.py'))}"
SDK = f"{shlex.quote(sys.executable)} {shlex.quote(str(SERVERS / 'sdk_server.py'))}"


def run(shell, capsys, line: str):
    """Run one cell; return (result, stdout, stderr)."""
    result = shell.run_cell(line)
    out, err = capsys.readouterr()
    return result, out, err


def usage_error(shell, capsys, line: str, kind: str = "UsageError") -> str:
    """The one line a failing cell shows: its error of type `kind`, no traceback."""
    result, out, err = run(shell, capsys, line)
    assert not result.success, f"{line!r} should have failed"
    assert type(result.error_in_exec).__name__ == kind
    assert "Traceback" not in out + err
    lines = [x for x in (out + err).splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith(f"{kind}: "), out + err
    return lines[0]


def test_loading_the_extension_starts_no_thread_and_no_process():
    # In a fresh interpreter, so that no earlier test has started the runtime.
    code = """
import json, os, threading
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
ip.run_line_magic("load_ext", "mcp_notebook")
pid = os.getpid()
print(json.dumps({
    "magic": "mcp" in ip.magics_manager.magics["line"],
    "threads": [t.name for t in threading.enumerate()],
    "children": open(f"/proc/{pid}/task/{pid}/children").read().split(),
}))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    seen = json.loads(out.stdout.splitlines()[-1])
    assert seen["magic"]
    assert "mcp-notebook" not in seen["threads"]
    assert seen["children"] == []


def test_help_and_bare_mcp_print_the_subcommands(module_shell, capsys):
    for line in ("%mcp", "%mcp help"):
        result, out, _ = run(module_shell, capsys, line)
        assert result.success
        for sub in ("connect", "ping", "status", "disconnect"):
            assert f"%mcp {sub}" in out


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_help_is_made_from_the_parsers(module_shell, capsys):
    _, out, _ = run(module_shell, capsys, "%mcp help")
    listing = one_line(out)
    for name, sub in _commands.SUBCOMMANDS.items():
        usage = one_line(sub.parser.format_usage()).removeprefix("usage: ")
        assert f"{usage} {one_line(sub.summary)}" in listing, name
        for line in (f"%mcp help {name}", f"%mcp {name} --help", f"%mcp {name} -h"):
            result, out, _ = run(module_shell, capsys, line)
            assert result.success and result.result is None
            assert out == sub.parser.format_help().rstrip("\n") + "\n"
    _, out, _ = run(module_shell, capsys, "%mcp help call")
    assert "-c NAME, --conn NAME" in out and "%%mcp call TOOL" in out


def test_a_new_option_shows_up_in_help(module_shell, capsys, monkeypatch):
    monkeypatch.setattr(_commands, "SUBCOMMANDS", dict(_commands.SUBCOMMANDS))
    wobble = _commands.arg("--wobble", metavar="W", help="how much")
    _commands.subcommand("frob", "frobnicate a connection", _commands.connection(), wobble)(lambda ns: ns.wobble)
    _, out, _ = run(module_shell, capsys, "%mcp help")
    assert "  %mcp frob [-c NAME] [--wobble W]\n        frobnicate a connection\n" in out
    _, out, _ = run(module_shell, capsys, "%mcp help frob")
    assert "--wobble W" in out and "how much" in out
    said = usage_error(module_shell, capsys, "%mcp frob --wobble")
    assert said == "UsageError: argument --wobble: expected one argument; usage: %mcp frob [-c NAME] [--wobble W]"
    assert run(module_shell, capsys, "%mcp frob --wobble 3")[0].result == "3"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("%mcp help bogus", "unknown subcommand 'bogus'"),
        ("%mcp bogus", "unknown subcommand 'bogus'; %mcp help lists them all"),
        ("%mcp tols", "unknown subcommand 'tols'; did you mean tools or tool? %mcp help lists them all"),
        ("%mcp connect", "connect needs a name and a URL or a server command"),
        ("%mcp connect demo", "no configured server named 'demo' (configured: none); %mcp servers lists them"),
        ("%mcp connect demo --", "no server command after --"),
        ("%mcp connect -- python x.py", "connect needs a name for the new connection"),
        ("%mcp ping nosuch", "no connection named 'nosuch'"),
        ("%mcp ping", "no open connection"),
        ("%mcp ping -n zero", "invalid count value"),
        ("%mcp connect demo --era sideways -- python x.py", "invalid choice"),
        ("%mcp connect demo --env NOEQUALS -- python x.py", "invalid K=V pair value"),
        ('%mcp connect demo -- "unclosed', "cannot parse the line"),
    ],
)
def test_user_mistakes_give_one_line_without_traceback(module_shell, capsys, config_home, line, says):
    assert says in usage_error(module_shell, capsys, line)


def test_a_server_that_exits_during_the_handshake_is_a_one_line_error(module_shell, capsys):
    cmd = f"{shlex.quote(sys.executable)} -c 'import sys; print(\"bad config\", file=sys.stderr); sys.exit(4)'"
    message = usage_error(module_shell, capsys, f"%mcp connect broken -- {cmd}", kind="HandshakeError")  # the API's type
    assert "exited with code 4 during the handshake" in message
    assert "bad config" in message
    assert "broken" not in mcp_notebook.connections()
    said = usage_error(module_shell, capsys, "%mcp connect demo -- no-such-executable-xyz", kind="HandshakeError")
    assert "'no-such-executable-xyz' not found on PATH" in said
    said = usage_error(module_shell, capsys, "%mcp connect web http://127.0.0.1:9/mcp --timeout 5", kind="HandshakeError")
    assert "cannot connect to http://127.0.0.1:9/mcp" in said


def test_connect_ping_status_disconnect(module_shell, capsys):
    result, out, _ = run(module_shell, capsys, f"%mcp connect sdk --era legacy --timeout 30 --env MCP_TEST_FLAG=1 -- {SDK}")
    assert result.success, out
    conn = mcp_notebook.get_connection("sdk")
    assert result.result is conn
    shown = value_shown(out)  # the one line shown is the value's display: nothing printed before it
    assert shown.startswith("connected 'sdk': sdk-test-server") and "legacy server (2025-11-25)" in shown, out
    assert repr(conn).startswith("<Connection 'sdk' ready legacy 2025-11-25")

    result, out, _ = run(module_shell, capsys, "%mcp ping sdk -n 3 -i 0")
    assert result.success
    rtts = result.result
    assert len(rtts) == 3 and all(r > 0 for r in rtts)
    shown = re.fullmatch(r"Out\[\d+\]: (.*)", out, re.S)  # one output: the value's display, nothing printed before it
    assert shown, out
    *lines, summary = shown[1].strip().splitlines()  # a line a ping, then the summary
    assert len(lines) == 3 and all(re.fullmatch(r"ping sdk: [\d.]+ ms", line) for line in lines), out
    assert re.fullmatch(r"--- sdk: 3 pings, 3 answered, 0 lost; min/median/max = [\d.]+/[\d.]+/[\d.]+ ms", summary), out
    assert rtts[0] > 0 and sum(rtts) > 0 and list(rtts) == [rtts[0], rtts[1], rtts[2]]  # still a list of floats
    assert conn.health.pings_sent == 3

    # With one connection open the name may be left out.
    result, out, _ = run(module_shell, capsys, "%mcp ping")
    assert result.success and len(result.result) == 1
    assert re.fullmatch(r"ping sdk: [\d.]+ ms", value_shown(out))  # one ping: its line, once

    result, out, _ = run(module_shell, capsys, "%mcp status")
    assert "sdk: ready" in out and "legacy 2025-11-25" in out and "4 sent, 0 failed" in out

    result, out, _ = run(module_shell, capsys, f"%mcp connect raw -- {RAW}")
    assert result.success
    assert "several connections are open (raw, sdk)" in usage_error(module_shell, capsys, "%mcp ping")

    # The connection is named by -c/--conn, or by the leading NAME; given both ways, they must agree.
    for line in ("%mcp ping --conn sdk", "%mcp ping -c sdk", "%mcp ping sdk --conn sdk", "%mcp ping --conn=sdk"):
        result, out, _ = run(module_shell, capsys, line)
        assert result.success and shows(module_shell, result.result).startswith("ping sdk: "), line
    said = usage_error(module_shell, capsys, "%mcp ping -c 3")  # Unix ping's count: here -c names a connection
    assert "-c (--conn) names a connection; a count is -n N" in said, said
    said = usage_error(module_shell, capsys, "%mcp ping raw --conn sdk")
    assert said.startswith("UsageError: 'raw' and --conn 'sdk' name different connections; give one; usage: %mcp ping [-c")
    assert "name different connections" in usage_error(module_shell, capsys, "%mcp status sdk -c raw")

    result, out, _ = run(module_shell, capsys, "%mcp disconnect raw")
    assert result.success and "closed 'raw'" in out
    result, out, _ = run(module_shell, capsys, "%mcp disconnect --all")
    assert result.success and "closed sdk" in out
    assert mcp_notebook.connections() == {}
    assert conn.closed and shows(module_shell, conn).startswith("closed 'sdk': sdk-test-server")


def shows(shell, value) -> str:
    """What IPython shows as a cell's value (its text/plain)."""
    return shell.display_formatter.format(value)[0]["text/plain"]


def value_shown(out: str) -> str:
    """The cell's value as IPython printed it, when that is all the cell printed."""
    shown = re.fullmatch(r"Out\[\d+\]: (.*)\n", out)
    assert shown, out
    return shown[1]


def test_status_and_auth_speak_of_every_connection_unless_one_is_named(module_shell, capsys):
    """With no connection named, `status` and `auth` show every open one (and say when none is);
    `auth --steps` and `--logout` work on one connection: the one named, or the only one open."""
    assert mcp_notebook.connections() == {}
    assert "no open connections" in run(module_shell, capsys, "%mcp status")[1]
    assert "no open connections" in run(module_shell, capsys, "%mcp auth")[1]
    assert "no open connection; start one" in usage_error(module_shell, capsys, "%mcp auth --steps")
    run(module_shell, capsys, f"%mcp connect raw -- {RAW}")
    run(module_shell, capsys, f"%mcp connect sdk --era legacy -- {SDK}")
    try:
        out = run(module_shell, capsys, "%mcp status")[1]
        assert "raw: ready" in out and "sdk: ready" in out
        out = run(module_shell, capsys, "%mcp auth")[1]
        assert "raw: no OAuth" in out and "sdk: no OAuth" in out
        assert "several connections are open (raw, sdk)" in usage_error(module_shell, capsys, "%mcp auth --steps")
        out = run(module_shell, capsys, "%mcp status sdk")[1]
        assert "sdk: ready" in out and "raw" not in out
        assert run(module_shell, capsys, "%mcp auth sdk --steps")[1] == "sdk: no OAuth steps yet\n"
    finally:
        run(module_shell, capsys, "%mcp disconnect --all")


def test_connect_with_a_name_in_use_closes_the_old_connection(module_shell, capsys):
    run(module_shell, capsys, f"%mcp connect same -- {RAW}")
    first = mcp_notebook.get_connection("same")
    pid = first._session.transport.pid
    run(module_shell, capsys, f"%mcp connect same -- {RAW}")
    second = mcp_notebook.get_connection("same")
    assert second is not first and first.closed
    assert first.health.exit_code is not None
    assert not Path(f"/proc/{pid}").exists()  # reaped, not a zombie
    run(module_shell, capsys, "%mcp disconnect same")


def test_unloading_the_extension_closes_everything_and_stops_the_thread(capsys):
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "mcp_notebook")
    ip.run_cell(f"%mcp connect bye -- {RAW}")
    conn = mcp_notebook.get_connection("bye")
    ip.run_line_magic("unload_ext", "mcp_notebook")
    assert conn.closed
    assert not any(t.name == "mcp-notebook" for t in threading.enumerate())
    ip.run_line_magic("load_ext", "mcp_notebook")  # and it comes back on the next use
    ip.run_cell(f"%mcp connect again -- {RAW}")
    assert mcp_notebook.get_connection("again").ping() > 0
    ip.run_cell("%mcp disconnect again")


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("%mcp connect web ftp://example.org/mcp", "'ftp://example.org/mcp' is not an http(s) URL"),
        ("%mcp connect web http://127.0.0.1:9/mcp -- python x.py", "give a URL or a server command after --, not both"),
        ("%mcp connect web http://127.0.0.1:9/mcp --header NoColon", "invalid 'Name: value' header value"),
        ("%mcp connect web http://127.0.0.1:9/mcp --transport smoke", "invalid choice: 'smoke'"),
        (
            "%mcp connect web --header 'A: b' -- python x.py",
            "--header, --bearer-token-env, --transport, --proxy and --cacert are for URLs",
        ),
        ("%mcp connect web --proxy http://127.0.0.1:9 -- python x.py", "--proxy and --cacert are for URLs"),
        (
            "%mcp connect fs --cacert ca.pem",
            "--proxy and --cacert go with a URL; for configured servers, set %config McpNotebook.proxy",
        ),
        ("%mcp connect web http://127.0.0.1:9/mcp --bearer-token-env MCP_NO_SUCH_VAR", "MCP_NO_SUCH_VAR is not set"),
        ("%mcp connect web http://127.0.0.1:99999/mcp", "http://127.0.0.1:99999/mcp is not a valid URL: Port out of range"),
        ("%mcp connect web http://[::1/mcp", "http://[::1/mcp is not a valid URL: Invalid IPv6 URL"),
        ("%mcp connect web http://127.0.0.1:9/mcp --probe-timeout 0", "probe_timeout must be a positive number of seconds"),
        ("%mcp connect web http://127.0.0.1:9/mcp --auth maybe", "invalid choice: 'maybe'"),
        ("%mcp connect web http://127.0.0.1:9/mcp --auth none --client-id x", "--auth none never authorizes"),
        (
            "%mcp connect web http://127.0.0.1:9/mcp --client-id x --client-secret-env MCP_NO_SUCH_VAR",
            "MCP_NO_SUCH_VAR is not set",
        ),
        ("%mcp connect web http://127.0.0.1:9/mcp --client-secret-env MCP_NO_SUCH_VAR", "MCP_NO_SUCH_VAR is not set"),
        (
            "%mcp connect web http://127.0.0.1:9/mcp --client-metadata-url http://x/c.json",
            "client_metadata_url must be an https://",
        ),
        ("%mcp connect web http://127.0.0.1:9/mcp --private-key-file /no/such.pem --client-id x", "cannot read the private key"),
        ("%mcp connect web --client-id x -- python x.py", "the OAuth options are for URLs"),
    ],
)
def test_url_mistakes_give_one_line_without_traceback(module_shell, capsys, line, says):
    assert says in usage_error(module_shell, capsys, line)


@pytest.mark.parametrize(
    ("command", "says"),
    [
        (str(SERVERS), "is a directory, not a program"),
        (str(SERVERS / "raw_server.py"), "is not executable: run it with its interpreter (e.g. python "),
    ],
)
def test_a_command_that_cannot_run_says_why(module_shell, capsys, command, says):
    """Not "not found on PATH": the file is there, it just cannot be run as it is."""
    message = usage_error(module_shell, capsys, f"%mcp connect bad -- {shlex.quote(command)}")
    assert says in message and "not found" not in message


# Escape sequences a hostile server may put in any text: a clipboard write (OSC 52), a clear
# screen, a hyperlink (OSC 8) and a colour. Only the words between them may reach a terminal.
HOSTILE = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ \x1b[31mred\x1b[0m"
SEQUENCES = ("\x1b]", "\x1b[2J", "\x1b[31m", "\x1b[0m", "\x07")


def test_server_text_reaches_the_terminal_without_escape_sequences(module_shell, capsys, shown_as):
    """Terminal IPython: log lines and progress printed while a call waits, `status`, `health
    --stderr`, `trace`, `logs`, the connect line, and errors quoting the server."""
    shown_as("ipython")
    command = f"{RAW} --name {shlex.quote(HOSTILE)}"
    result, connected, _ = run(module_shell, capsys, f"%mcp connect hostile --era legacy -- {command}")
    assert result.success, connected
    conn = mcp_notebook.get_connection("hostile")
    conn.call_tool("say", {"text": HOSTILE}, validate=False)
    with pytest.raises(mcp_notebook.McpError) as caught:
        conn.request("tools/call", {"name": HOSTILE})  # "unknown scenario <name>"
    cell = capsys.readouterr()
    printed = {"connect": connected, "log line": cell.out, "progress": cell.err, "error": str(caught.value)}
    for line in ("status hostile", "health hostile --stderr", "trace hostile", "logs hostile"):
        result, out, err = run(module_shell, capsys, f"%mcp {line}")
        assert result.success and not err, line
        printed[line] = out
    run(module_shell, capsys, "%mcp disconnect hostile")
    for where, text in printed.items():
        assert not any(sequence in text for sequence in SEQUENCES), (where, text)
        assert "click red" in text, where  # the words stay


def test_a_connect_error_quoting_stderr_carries_no_escape_sequence():
    script = f"import sys; sys.stderr.write({HOSTILE!r} + chr(10)); sys.exit(4)"
    with pytest.raises(mcp_notebook.HandshakeError) as caught:
        mcp_notebook.connect([sys.executable, "-c", script], name="broken", era="legacy")
    assert "exited with code 4" in str(caught.value) and "click red" in str(caught.value)
    assert not any(sequence in str(caught.value) for sequence in SEQUENCES)


def test_connect_to_a_url_with_headers(module_shell, capsys, port):
    from support.http_servers import sdk_http

    with sdk_http(port) as base:
        line = f"%mcp connect web {base}/mcp --era legacy --header 'X-Trace: on' --transport http"
        result, out, _ = run(module_shell, capsys, line)
        assert result.success, out
        assert value_shown(out).startswith("connected 'web'") and "over http, legacy server (2025-11-25)" in out
        assert mcp_notebook.get_connection("web").ping() > 0
        run(module_shell, capsys, "%mcp disconnect web")


def test_help_fits_a_notebook_and_breaks_only_between_words(module_shell, capsys):
    width = 80  # the columns of a narrow notebook
    _, out, _ = run(module_shell, capsys, "%mcp help")
    words = out.split()
    for line in out.splitlines():  # only a line that is one word too long (a usage's choices) runs over
        assert len(line) <= width or len(line.split()) == 1 or max(map(len, line.split())) > width // 2, line
    assert "background thread" in " ".join(words) and "(roots/list_changed)" in words
