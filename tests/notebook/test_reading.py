"""Reading what happened: a connection whose server died stays listed, a server's colours
show as colours in HTML and never in text, and the health snapshot's own displays."""

from __future__ import annotations

import os
import re
import shlex
import signal
import sys

import pytest
from IPython.lib.pretty import pretty
from support.servers import SERVERS_DIR, fastmcp_server_cmd, node_executable, sdk_server_cmd, server_everything_cmd
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook import Listing
from mcp_notebook.notebook.magics.health import stderr_text
from mcp_notebook.notebook.magics.session import format_health
from mcp_notebook.notebook.widgets import health as _health_widgets
from mcp_notebook.notebook.widgets import pump as _widgets

pytestmark = [pytest.mark.node]

# FastMCP logs through rich; FORCE_COLOR makes it colour a pipe too, as it does in a terminal.
COLOURED = {"FORCE_COLOR": "1", "FASTMCP_LOG_LEVEL": "INFO"}
ANSI_TRACES = re.compile(r"\x1b|\[\d+(;\d+)*m")


def test_a_coloured_stderr_shows_colours_in_html_and_none_in_text(panels):
    with mcp_notebook.connect(fastmcp_server_cmd(), era="legacy", name="coloured", env=COLOURED) as conn:
        wait_until(lambda: any("Starting MCP server" in line for line in conn.stderr), "FastMCP's start-up log line")
        assert any("\x1b[" in line for line in conn.stderr), "the peer coloured its stderr"
        panel = _health_widgets.health_widget(conn, show_stderr=True)
        panels.append(panel)
        view = _widgets.views_of(panel)
        wait_until(lambda: "Starting MCP server" in view.stderr.value, "the stderr tail in the widget")
        html, health = view.stderr.value, conn.health
    assert re.search(r'<span style="[^"]*color: #[0-9a-f]{6}[^"]*">', html), html
    assert "\x1b" not in html and not ANSI_TRACES.search(re.sub(r"<[^>]*>", "", html))
    assert "file://" not in html, "rich's OSC 8 links are dropped, not made links"
    for text in (format_health(health), stderr_text(health)):
        assert "Starting MCP server" in text or "stderr" in text
        assert not ANSI_TRACES.search(text), text


def run(shell, capsys, line: str) -> str:
    """Run one cell that must succeed; what it printed."""
    result = shell.run_cell(line)
    out, err = capsys.readouterr()
    assert result.success, out + err
    return out


def killed_while_idle(conn: mcp_notebook.Connection) -> None:
    wait_until(lambda: conn.stderr, "the server's start-up line on stderr")
    os.kill(conn._session.transport.pid, signal.SIGKILL)
    assert conn.wait_closed(20)


def test_a_server_that_dies_while_idle_stays_listed_until_disconnected(module_shell, capsys):
    everything = shlex.join(server_everything_cmd())
    run(module_shell, capsys, f"%mcp connect ev --era legacy -- {everything}")
    conn = mcp_notebook.get_connection("ev")
    killed_while_idle(conn)

    assert mcp_notebook.connections() == {"ev": conn} and mcp_notebook.get_connection("ev") is conn
    status = run(module_shell, capsys, "%mcp status")
    assert "ev: closed" in status and "exited with code -9" in status
    assert re.search(r"closed .*, at \d\d:\d\d:\d\d \(\d+ s ago\)", status), status
    assert any(line.strip() in status for line in conn.stderr[-3:]), "its last stderr lines"
    health = run(module_shell, capsys, "%mcp health ev")
    assert "ev: closed" in health and "exited with code -9" in health
    assert conn.health.closed_at is not None and "exited with code -9" in repr(conn.health)

    run(module_shell, capsys, f"%mcp connect ev --era legacy -- {everything}")  # the name connected again
    again = mcp_notebook.get_connection("ev")
    assert again is not conn and mcp_notebook.connections() == {"ev": again}
    killed_while_idle(again)
    assert "closed 'ev'" in run(module_shell, capsys, "%mcp disconnect ev")
    assert mcp_notebook.connections() == {}
    assert "no open connections" in run(module_shell, capsys, "%mcp status")


RAW = shlex.join([sys.executable, str(SERVERS_DIR / "raw_server.py")])  # declares tools only


def test_a_legacy_server_connects_in_plain_words_and_status_keeps_the_probe(module_shell, capsys):
    out = run(module_shell, capsys, f"%mcp connect ev -- {shlex.join(server_everything_cmd())}")  # era auto: probed
    assert "legacy server (2025-11-25)" in out and "probe" not in out and "-32601" not in out
    # "refused: Method not found (-32601)", or "no answer within 2 s" while it starts slowly
    assert "over stdio (probe: " in run(module_shell, capsys, "%mcp status ev")
    run(module_shell, capsys, "%mcp disconnect ev")


def test_modern_pings_are_explained_once_and_called_liveness_probes(module_shell, capsys):
    out = run(module_shell, capsys, f"%mcp connect sdk --era modern -- {shlex.join(sdk_server_cmd())}")
    assert "modern server (2026-07-28)" in out
    first, again = run(module_shell, capsys, "%mcp ping sdk"), run(module_shell, capsys, "%mcp ping sdk -n 2 -i 0")
    assert "the ping method was removed" in first and "removed" not in again
    assert again.count("liveness probe sdk: ") == 2 and "ping" not in again.replace("%mcp ping", "")
    assert "--- sdk: 2 liveness probes, 2 answered, 0 lost; min/median/max" in again  # the summary in the lines' word
    status = run(module_shell, capsys, "%mcp status sdk")
    assert re.search(r"liveness probes +3 sent", status) and "pings      " not in status, status
    run(module_shell, capsys, "%mcp disconnect sdk")


def test_a_server_without_resources_lists_none_as_a_modern_one_does(module_shell, capsys):
    run(module_shell, capsys, f"%mcp connect raw -- {RAW}")
    conn = mcp_notebook.get_connection("raw")
    assert "resources" not in conn.server_capabilities
    listing = conn.list_resources()
    assert isinstance(listing, Listing) and listing == [] and conn.list_resource_templates() == []
    assert "(no resources)" in run(module_shell, capsys, "%mcp resources raw")  # as a modern server says it, not a UsageError
    run(module_shell, capsys, "%mcp disconnect raw")


def test_the_health_snapshot_has_a_short_repr_and_rich_displays():
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="sdk") as conn:
        conn.ping()
        health = conn.health
    assert "\n" not in repr(health) and len(repr(health)) < 120, repr(health)
    assert repr(health).startswith("<Health 'sdk' ready: legacy 2025-11-25 over stdio, rtt ")
    pretty_text = pretty(health)
    assert pretty_text.startswith("sdk: ready") and re.search(r"pings +1 sent, 1 answered", pretty_text)
    html = health._repr_html_()
    assert "<table" in html and "<b>sdk</b> ready" in html and "1 sent, 1 answered" in html


MISSING_SCRIPT = "/nonexistent/mcp-notebook-test/server.js"


@pytest.mark.parametrize(
    ("command", "says"),
    [
        ([node_executable(), MISSING_SCRIPT], f"Error: Cannot find module '{MISSING_SCRIPT}'"),  # Node's, mid-trace
        (sdk_server_cmd("--no-such-option"), "error: unrecognized arguments: --no-such-option"),  # the SDK peer's argparse
        ([sys.executable, "-c", "import no_such_module_xyz"], "ModuleNotFoundError: No module named 'no_such_module_xyz'"),
    ],
)
def test_a_server_that_fails_to_start_is_told_by_its_error_line_without_era_advice(command, says):
    with pytest.raises(mcp_notebook.HandshakeError) as failed:  # era auto: the probe is the first thing it would read
        mcp_notebook.connect(command, name="broken", env={"FORCE_COLOR": "1"})  # Node greys its stack frames
    message = str(failed.value)
    assert "during the handshake" in message and says in message, message
    assert "era=" not in message and "Node.js v" not in message and "requireStack" not in message
    assert not ANSI_TRACES.search(message), message
    assert "broken" not in mcp_notebook.connections()


def test_a_server_that_exits_when_probed_is_told_to_connect_as_legacy():
    command = [sys.executable, str(SERVERS_DIR / "raw_server.py"), "--exit-on-unknown"]
    with pytest.raises(mcp_notebook.HandshakeError) as failed:
        mcp_notebook.connect(command, name="probed")
    message = str(failed.value)
    assert "unknown method server/discover" in message and "connect with era='legacy'" in message, message
    with mcp_notebook.connect(command, name="probed", era="legacy") as conn:  # the advice works
        assert conn.state == "ready"
