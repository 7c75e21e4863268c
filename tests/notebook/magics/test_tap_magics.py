"""`%mcp tap NAME` and a tap's name in `%mcp trace/health/violations`, driven through a real IPython
shell: a real relay (`python -m mcp_notebook.tap`) with the official SDK client against
server-everything, and a scripted relay's records where a client breaks the ping MUST."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from support.servers import server_everything_cmd

import mcp_notebook
from mcp_notebook.notebook.completion import candidates
from mcp_notebook.notebook.magics import show as _show
from mcp_notebook.notebook.widgets import pump as _widgets
from mcp_notebook.taps import registry
from mcp_notebook.taps.wire import rendezvous
from mcp_notebook.taps.wire.records import CLIENT, EVENT, HELLO, SERVER, Record, encode


@pytest.fixture(autouse=True)
def tap_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tapm-", dir="/tmp"))
    monkeypatch.setenv(rendezvous.ENV_DIR, str(folder))
    yield folder
    for left in registry.taps().values():
        left.close()
    shutil.rmtree(folder, ignore_errors=True)


def sdk_session(argv: list[str]) -> None:
    """The official SDK client (legacy era) through `argv`: the tools, one call, one ping."""

    async def run() -> None:
        from mcp import Client
        from mcp.client.stdio import StdioServerParameters, stdio_client

        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        with open(os.devnull, "w") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                await client.list_tools()
                await client.call_tool("echo", {"message": "magic"})
                await client.send_ping()

    anyio.run(run)


@pytest.mark.node
@pytest.mark.filterwarnings("ignore:ping is removed as of 2026-07-28")
def test_tap_then_trace_health_and_violations_by_its_name(shell, capsys):
    tap = shell.run_line_magic("mcp", "tap ev -- " + " ".join(server_everything_cmd()))
    assert isinstance(tap, mcp_notebook.Tap) and capsys.readouterr().out == ""  # the value shows it, once
    assert shell.run_line_magic("mcp", "tap ev") is tap
    sdk_session(tap.command())
    tap.wait(timeout=30)
    shell.run_line_magic("mcp", "trace ev")
    out = capsys.readouterr().out
    assert "initialize" in out and "tools/call" in out and "ping" in out
    shell.run_line_magic("mcp", "violations ev")
    assert capsys.readouterr().out.strip() == "ev: no violations: every frame of both sides follows the spec"
    shell.run_line_magic("mcp", "health ev")
    out = capsys.readouterr().out
    assert "ev" in out and "violations" in out
    shell.run_line_magic("mcp", "tap ev --close")
    assert capsys.readouterr().out.strip() == "closed tap 'ev'" and registry.find("ev") is None


def scripted(name: str, *records: Record) -> mcp_notebook.Tap:
    """A tap fed `records` by a stand-in relay (the relay's wire: encoded records, one a line)."""
    tap = mcp_notebook.tap(name, catch_up=False)
    assert tap.socket_path is not None
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(tap.socket_path))
        sock.sendall(b"".join(encode(r) for r in records))
    tap.wait(len([r for r in records if r.is_frame]), timeout=10)
    return tap


def frame(seq: int, side: str, text: str) -> Record:
    return Record(seq, side, 1.0 + seq / 1000, 1.0 + seq / 1000, text.encode())


def test_a_client_answering_a_server_ping_with_an_error_is_named_in_violations(shell, capsys):
    hello = Record(1, EVENT, 1.0, 1.0, name=HELLO, detail={"session": "s", "name": "rude", "transport": "stdio"})
    scripted(
        "rude",
        hello,
        frame(
            2,
            CLIENT,
            '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
            '"capabilities":{},"clientInfo":{"name":"c","version":"1"}}}',
        ),
        frame(
            3,
            SERVER,
            '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25","capabilities":{},'
            '"serverInfo":{"name":"s","version":"1"}}}',
        ),
        frame(4, CLIENT, '{"jsonrpc":"2.0","method":"notifications/initialized"}'),
        frame(5, SERVER, '{"jsonrpc":"2.0","id":0,"method":"ping"}'),
        frame(6, CLIENT, '{"jsonrpc":"2.0","id":0,"error":{"code":-32601,"message":"Method not found"}}'),
    )
    shell.run_line_magic("mcp", "violations rude --side client")
    out = capsys.readouterr().out
    assert "ping-error (client)" in out and "MUST" in out
    shell.run_line_magic("mcp", "violations rude --side server")
    assert "no violations" in capsys.readouterr().out
    shell.run_line_magic("mcp", "violations rude --rule ping-error")
    assert "1 violation" in capsys.readouterr().out


def test_a_taps_violations_and_health_in_jupyter(shell, monkeypatch):
    shown: list = []
    monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
    monkeypatch.setattr(_show, "display", shown.append)
    hello = Record(1, EVENT, 1.0, 1.0, name=HELLO, detail={"session": "j", "name": "j", "transport": "stdio"})
    scripted(
        "j",
        hello,
        frame(2, CLIENT, '{"jsonrpc":"2.0","id":"a","method":"ping"}'),
        frame(3, SERVER, '{"jsonrpc":"2.0","id":"a","result":{}}'),
    )
    shell.run_line_magic("mcp", "violations j")
    shell.run_line_magic("mcp", "health j --snapshot")
    table, health = shown
    assert "both sides" in table._repr_mimebundle_()["text/html"]
    assert isinstance(health, mcp_notebook.TapHealth) and health.frames_out == 1 and health.frames_in == 1


def test_help_and_mistakes(shell, capsys):
    shell.run_line_magic("mcp", "help tap")
    out = capsys.readouterr().out
    assert "%mcp tap" in out and "--upstream" in out and "--close" in out
    with pytest.raises(Exception, match="no open tap named 'nope'"):
        shell.run_line_magic("mcp", "tap nope --close")
    with pytest.raises(Exception, match="not a tap name"):
        shell.run_line_magic("mcp", "tap ../x")


def test_tap_names_complete_where_connection_names_do(shell):
    mcp_notebook.tap("watched", catch_up=False)

    def complete(line: str) -> list[str]:
        return candidates.completions(line)[1]

    assert complete("%mcp trace wa") == ["watched"]
    assert complete("%mcp health --conn w") == ["watched"]
    assert complete("%mcp violations w") == ["watched"]
    assert complete("%mcp tap wat") == ["watched"]
    assert complete("%mcp ping w") == []  # a tap is not a connection to ping
