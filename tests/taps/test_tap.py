"""The Tap in the notebook (`mcp_notebook.tap`): a real relay (`python -m mcp_notebook.tap`) driven
by the official SDK client against server-everything, watched whole both ways; a tap opened late
catching up from the recording; the HTTP tap with its proxy; the entries to paste, read back by
the configs module; the cassette a tap saves, replayed; and no secret anywhere it shows or saves
(an env value of the relayed command's, a bearer token, a session id: in the trace, violations, health,
reprs, the cassette, the recording, `%mcp trace/health/violations NAME`)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.servers import SERVERS_DIR, server_everything_cmd

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.taps import registry
from mcp_notebook.taps.wire import rendezvous
from mcp_notebook.taps.wire.recording import read_recording
from mcp_notebook.taps.wire.records import CLIENT, EVENT, HELLO, SERVER, Record, encode

pytestmark = [pytest.mark.node, pytest.mark.anyio, pytest.mark.filterwarnings("ignore:ping is removed as of 2026-07-28")]
SECRET = "sk-tap-4242-do-not-show"
BAD_CLIENT = [sys.executable, str(SERVERS_DIR / "bad_ping_client.py")]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(autouse=True)
def tap_dir(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private rendezvous directory of the test's own (short: a socket path must fit AF_UNIX);
    the relays the test starts inherit it. Every tap left open is closed after."""
    folder = Path(tempfile.mkdtemp(prefix="tap-", dir="/tmp"))
    monkeypatch.setenv(rendezvous.ENV_DIR, str(folder))
    yield folder
    for left in registry.taps().values():
        left.close()
    shutil.rmtree(folder, ignore_errors=True)


async def drive(
    argv: list[str], env: dict[str, str] | None = None, secret: str = "hello", get_env: bool = False
) -> dict[str, Any]:
    """The official SDK client (legacy era) over stdio through `argv`: tools, a call, a ping
    (with `get_env`, first server-everything's `get-env`, which returns its environment)."""
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, **(env or {})})
    with open(os.devnull, "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            tools = await client.list_tools()
            if get_env:
                await client.call_tool("get-env", {})
            echoed = await client.call_tool("echo", {"message": secret})
            await client.send_ping()
    return {"tools": sorted(t.name for t in tools.tools), "echo": echoed.content[0].text}  # type: ignore[union-attr]


def recorded_frames(tap: mcp_notebook.Tap) -> list[tuple[str, str]]:
    """(direction in the client's view, text) of every frame the relay recorded, in order."""
    session = tap.session
    assert session is not None and session.folder is not None
    return [("out" if r.side == CLIENT else "in", r.text) for r in read_recording(session.folder) if r.is_frame]


def traced_frames(tap: mcp_notebook.Tap) -> list[tuple[str, str]]:
    return [(e.direction, e.raw or "") for e in tap.trace.frames()]


def requests(tap: mcp_notebook.Tap) -> list[str]:
    return [e.method for e in tap.trace.frames("out") if e.kind == "request"]


async def test_a_relayed_session_is_traced_whole_both_ways_with_no_violation():
    tap = mcp_notebook.tap("ev")
    assert mcp_notebook.tap("ev") is tap  # the open one, by name
    direct = await drive(server_everything_cmd())
    relayed = await drive(tap.command(server_everything_cmd()))
    assert relayed == direct
    tap.wait(timeout=30)  # the session ended: the relay said so
    frames = traced_frames(tap)
    assert frames == recorded_frames(tap)  # every frame both ways, in order, as it crossed
    assert requests(tap) == ["initialize", "tools/list", "tools/call", "ping"]
    assert {d for d, _ in frames} == {"in", "out"}
    assert tap.violations("client") == [] and tap.violations("server") == []
    assert len(tap.sessions) == 1 and tap.session is not None and tap.session.ended
    assert "1 session" in repr(tap) or "1 sessions" in repr(tap)
    diagram = tap.diagram()
    assert any(step.label.startswith("tools/call") for step in diagram.arrows)


async def test_a_tap_opened_after_the_session_began_sees_it_from_its_start(tap_dir: Path):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    argv = [sys.executable, "-m", "mcp_notebook.tap", "--name", "late", "--", *server_everything_cmd()]
    with open(os.devnull, "w") as errlog:
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=dict(os.environ))
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            await client.list_tools()  # before any notebook listens: only the recording has it
            tap = mcp_notebook.tap("late")
            # caught up from the recording alone (its recorder writes every 10 ms: waited for, not assumed)
            tap.wait(lambda t: requests(t)[:2] == ["initialize", "tools/list"], timeout=30)
            await client.call_tool("echo", {"message": "after"})
            tap.wait(lambda t: "tools/call" in requests(t), timeout=30)  # live, once the relay attached
    tap.wait(timeout=30)
    assert requests(tap) == ["initialize", "tools/list", "tools/call"]
    assert traced_frames(tap) == recorded_frames(tap)  # nothing twice, nothing missing
    assert len(tap.sessions) == 1


async def test_the_http_tap_proxies_and_sees_both_ways_and_shows_no_credential(url: str, tmp_path: Path, shell: Any, capsys: Any):
    from mcp import Client
    from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

    tap = mcp_notebook.tap("evh", upstream=url)
    assert tap.url is not None and tap.url.startswith("http://127.0.0.1:") and tap.url.endswith("/mcp")
    session_ids: set[str] = set()

    async def note_session_id(response: Any) -> None:
        session_ids.update(v for k, v in response.headers.items() if k.lower() == "mcp-session-id")

    async with create_mcp_http_client(headers={"Authorization": f"Bearer {SECRET}"}) as http:
        http.event_hooks["response"].append(note_session_id)
        async with Client(streamable_http_client(tap.url, http_client=http), mode="legacy") as client:
            echoed = await client.call_tool("echo", {"message": f"through, with {SECRET}"})
    assert SECRET in echoed.content[0].text  # type: ignore[union-attr]  # the proxy changes nothing on the wire
    tap.wait(lambda t: "tools/call" in requests(t) and len(t.trace.frames("in")) >= 2)
    assert requests(tap)[:2] == ["initialize", "tools/call"]
    assert tap.violations("client") == [] and tap.violations("server") == []
    assert tap.session is not None and tap.session.transport == "http"
    assert "/mcp" in repr(tap) and tap.entry("vscode")["servers"]["evh"] == {"type": "http", "url": tap.url}
    assert len(session_ids) == 1  # server-everything gave the session an id: a credential
    assert not leaked(everything_shown(tap, shell, capsys, tmp_path), SECRET, *session_ids)


def test_no_bearer_token_nor_session_id_reaches_a_violation_of_a_client_that_quotes_them(tmp_path: Path, shell: Any, capsys: Any):
    """Over HTTP, a client sending a bearer token and answering the server's pings with errors
    that end in the token and its session id: its violations are shown, neither value."""
    process, upstream = demo_server.start_http("legacy", ping_interval=0.05)
    with process:
        tap = mcp_notebook.tap("secvh", upstream=upstream)
        assert tap.url is not None
        say = f"{SECRET} in session {{session}}"
        argv = [
            *BAD_CLIENT,
            "--answer",
            "error",
            "--pings",
            "2",
            "--say",
            say,
            "--url",
            tap.url,
            "--header",
            f"Authorization: Bearer {SECRET}",
        ]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        tap.wait(lambda t: len(t.violations(side="client")) >= 2, timeout=30)
    found = tap.violations(side="client")
    assert [v.rule for v in found[:2]] == ["ping-error", "ping-error"]
    assert all("Method not found: [redacted] in session [redacted]" in v.message for v in found)
    session_id = json.loads(done.stdout)["session_id"]
    assert len(session_id) >= 8  # the demo server's, a credential
    assert not leaked(everything_shown(tap, shell, capsys, tmp_path), SECRET, session_id)


def test_entries_read_back_as_the_wrapped_command(config_home: tuple[Path, Path]):
    _home, project = config_home
    server = server_everything_cmd()
    tap = mcp_notebook.tap("wrapped", command=server)
    wrapped = tap.command()
    assert wrapped == [sys.executable, "-m", "mcp_notebook.tap", "--name", "wrapped", "--", *server]
    (project / ".mcp.json").write_text(json.dumps(tap.entry("claude-code")))
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text(json.dumps(tap.entry("vscode")))
    (project / ".cursor").mkdir()
    (project / ".cursor" / "mcp.json").write_text(json.dumps(tap.entry("cursor")))
    for client in ("claude-code", "vscode", "cursor"):
        [entry] = mcp_notebook.configured_servers(client)
        assert entry.name == "wrapped" and [entry.command, *entry.args] == wrapped, client
    line = tap.entry("claude-code").line
    assert line is not None and line.startswith("claude mcp add --transport stdio wrapped -- ")
    assert tap.entry("claude-desktop")["mcpServers"]["wrapped"]["command"] == sys.executable


def test_a_configured_server_is_wrapped_with_its_environment_and_its_secret_never_shown(config_home):
    _home, project = config_home
    server = server_everything_cmd()
    configured = {"mcpServers": {"ev": {"command": server[0], "args": server[1:], "env": {"API_TOKEN": SECRET, "MODE": "x"}}}}
    (project / "mcp.json").write_text(json.dumps(configured))
    tap = mcp_notebook.tap("ev")
    entry = tap.entry("cursor")
    spec = entry["mcpServers"]["ev"]
    assert [spec["command"], *spec["args"]] == tap.command(server)
    assert spec["env"] == {"API_TOKEN": SECRET, "MODE": "x"}  # the user's own, to paste
    shown = [repr(tap), tap._repr_html_(), repr(entry), entry._repr_html_(), entry.shown(), _pretty(tap), _pretty(entry)]
    assert not [s for s in shown if SECRET in s]
    assert "[redacted]" in entry.shown() and "MODE" in entry.shown()


def everything_shown(tap: mcp_notebook.Tap, shell: Any, capsys: Any, tmp_path: Path) -> list[str]:
    """What the notebook shows or saves of a tap's newest session: its trace (every entry, events
    and stderr lines with their detail), the violations (repr and messages), the cassette, the
    tap's and the health's reprs (text and HTML), and `%mcp trace/health/violations NAME`."""
    cassette = tmp_path / f"{tap.name}.jsonl"
    tap.trace.to_jsonl(cassette)
    health, violations = tap.health, tap.violations()
    shown = [
        json.dumps([e.to_record() for e in tap.trace.entries()], default=str),
        repr([e.detail for e in tap.trace.entries()]),
        repr(violations),
        *(v.message for v in violations),
        cassette.read_text(),
        repr(tap),
        tap._repr_html_(),
        _pretty(tap),
        repr(health),
        _pretty(health),
        health._repr_html_(),
        json.dumps(health.as_dict(), default=str),
    ]
    capsys.readouterr()
    for command in ("trace", "health", "violations"):
        shell.run_line_magic("mcp", f"{command} {tap.name}")
        shown.append(capsys.readouterr().out)
        assert shown[-1].strip(), f"%mcp {command} {tap.name} showed nothing"
    return shown


def leaked(shown: list[str], *secrets: str) -> list[str]:
    return [text for text in shown for secret in secrets if secret in text]


async def test_no_secret_reaches_the_trace_violations_cassette_or_display(tmp_path: Path, shell: Any, capsys: Any):
    """The relayed command's environment holds API_TOKEN; the server writes it to its stderr and
    returns it from `get-env`, and the client sends it in a call: it crosses unchanged, and
    nothing the notebook shows or saves holds it, nor the relay's recording on disk."""
    server = ["sh", "-c", 'echo "starting with token $API_TOKEN" >&2; exec "$@"', "sh", *server_everything_cmd()]
    tap = mcp_notebook.tap("sec", command=server)
    result = await drive(tap.command(), env={"API_TOKEN": SECRET}, secret=f"the key is {SECRET}", get_env=True)
    assert SECRET in result["echo"]  # the relay changes nothing on the wire
    tap.wait(lambda t: t.session is not None and t.session.ended, timeout=30)
    assert "tools/call" in requests(tap)
    assert any("starting with token [redacted]" in line for line in tap.health.stderr_tail)
    assert any("[redacted]" in (e.raw or "") for e in tap.trace.frames("in"))  # get-env's answer, redacted
    assert tap.session is not None and tap.session.folder is not None
    recording = [encode(r).decode() for r in read_recording(tap.session.folder)]
    assert not leaked(everything_shown(tap, shell, capsys, tmp_path) + recording, SECRET)


def test_no_secret_reaches_a_violation_of_a_client_that_quotes_it(tmp_path: Path, shell: Any, capsys: Any):
    """A client answering the server's pings with errors that end in its API_TOKEN: the client's
    violations say so, the token redacted everywhere the notebook shows it."""
    tap = mcp_notebook.tap("secv")
    argv = [
        *BAD_CLIENT,
        "--answer",
        "error",
        "--pings",
        "2",
        "--say",
        SECRET,
        "--",
        *tap.command(demo_server.command(ping_interval=0.05)),
    ]
    done = subprocess.run(argv, env={**os.environ, "API_TOKEN": SECRET}, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    tap.wait(lambda t: t.session is not None and t.session.ended, timeout=30)
    found = tap.violations(side="client")
    assert [v.rule for v in found] == ["ping-error", "ping-error"] and all(
        "Method not found: [redacted]" in v.message for v in found
    )
    assert not leaked(everything_shown(tap, shell, capsys, tmp_path), SECRET)


async def test_the_cassette_of_a_tapped_session_replays_to_our_client(tmp_path: Path):
    tap = mcp_notebook.tap("tape")
    await drive(tap.command(server_everything_cmd()), secret="replayed")
    tap.wait(timeout=30)
    cassette = tmp_path / "tape.jsonl"
    tap.trace.to_jsonl(cassette)
    with mcp_notebook.replay(cassette, name="tape-replay", load_magics=False) as conn:
        assert "echo" in [t["name"] for t in conn.list_tools()]
        assert "replayed" in conn.call_tool("echo", {"message": "replayed"}).text
    comparison = mcp_notebook.compare(cassette, server_everything_cmd())
    assert comparison.ok, comparison


def test_a_line_that_is_not_a_record_is_counted_and_the_stream_goes_on():
    tap = mcp_notebook.tap("raw", catch_up=False)
    assert tap.socket_path is not None
    hello = Record(1, EVENT, 1.0, 1.0, name=HELLO, detail={"session": "s1", "name": "raw", "transport": "stdio"})
    ping = Record(2, CLIENT, 1.0, 1.0, b'{"jsonrpc":"2.0","id":0,"method":"ping"}')
    pong = Record(3, SERVER, 1.0, 1.0, b'{"jsonrpc":"2.0","id":0,"result":{}}')
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(str(tap.socket_path))
        sock.sendall(encode(hello) + b"not a record\n" + b'{"seq":"x"}\n' + encode(ping) + encode(ping) + encode(pong))
    tap.wait(lambda t: t.garbage == 2, timeout=10)
    assert [(e.direction, e.kind) for e in tap.trace.frames()] == [("out", "request"), ("in", "response")]  # once each
    assert tap.violations() == []


def test_a_second_tap_of_a_name_another_notebook_holds_is_refused_in_one_line(tap_dir: Path):
    held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        held.bind(str(rendezvous.socket_path("busy")))
        held.listen(1)
        with pytest.raises(mcp_notebook.UsageError, match="another notebook is tapping"):
            mcp_notebook.tap("busy")
    finally:
        held.close()
    assert registry.find("busy") is None
    with mcp_notebook.tap("busy") as tap:  # a dead notebook's socket file is cleared
        assert tap.socket_path is not None and tap.socket_path.exists()
    assert not rendezvous.socket_path("busy").exists() and registry.find("busy") is None


def _pretty(obj: object) -> str:
    from IPython.lib.pretty import pretty

    return pretty(obj)
