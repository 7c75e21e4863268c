"""Third-party clients (tests/support/tap_clients.py), each in its own process, against
server-everything and the demo server over stdio and Streamable HTTP (127.0.0.1): what each one
lists, calls and gets back, and that each answers the demo server's pings while it holds its
session open. The scripted bad clients (tests/servers/bad_ping_client.py) mishandle those pings
as told, and the scripted server's `nameless` listing breaks the schema.

Every test takes `through`: how the client reaches the server. "direct" is the server itself;
the tap's cases run the same tests with the tap in between, so a client's outcome through the
tap is held to the very values it has without it. Over stdio the relay runs between two `tee`
shims, so the bytes each side sent and got are logged by a program that is not the tap, and
compared with each other and with the tap's trace (`crossed_byte_identical`).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.http_servers import everything
from support.servers import SERVERS_DIR, free_port, server_everything_cmd
from support.tap_clients import CLIENTS, Call, Target, outcome_of, run_client
from support.waiting import wait_until

from mcp_notebook import demo_server
from mcp_notebook.taps.observing.observer import LATE_AFTER

pytestmark = pytest.mark.node  # server-everything and the inspector run on Node

BAD_CLIENT = [sys.executable, str(SERVERS_DIR / "bad_ping_client.py")]
RAW_SERVER = [sys.executable, str(SERVERS_DIR / "raw_server.py")]
WAIT = 60.0

DEMO_CALLS: list[Call] = [("echo", {"text": "hello"}), ("add", {"a": 2, "b": 3})]
EVERYTHING_CALLS: list[Call] = [("echo", {"message": "hello"}), ("get-sum", {"a": 2, "b": 3})]
DEMO_RESULTS = [
    ["echo", {"content": [{"text": "hello", "type": "text"}]}],
    ["add", {"content": [{"text": "5", "type": "text"}], "structuredContent": {"sum": 5}}],
]
EVERYTHING_RESULTS = [
    ["echo", {"content": [{"text": "Echo: hello", "type": "text"}]}],
    ["get-sum", {"content": [{"text": "The sum of 2 and 3 is 5.", "type": "text"}]}],
]
# pydantic-ai's TestModel makes its own arguments up (from each tool's schema) and gets the
# results as text; the agent's answer lists them.
AGENT_RESULTS = {
    "demo": [["add", '{"sum":0.0}'], ["echo", "a"]],
    "everything": [["echo", "Echo: a"], ["get-sum", "The sum of 0 and 0 is 0."]],
}


class Direct:
    """The client talks to the server itself."""

    name = "direct"
    tap: Any = None

    def wrap(self, target: Target) -> Target:
        return target

    def sessions(self) -> list[Any]:
        return []

    def wait_pongs(self, log: Any, count: int) -> None:
        """Wait for the server's `count`th pong, as its stderr tells."""
        log.wait_for(rf"pong {count} \(demo-ping-\d+\)", WAIT)


# Byte logs on both sides of the stdio relay, by `tee` (coreutils, not ours): the outer shim
# between the client and the relay logs what the client sent and got, the inner one between the
# relay and the server what the server got and sent, both named by the outer shell's pid (the
# relay passes its environment on to the server's command). Each writes `.done` once its pipeline
# has ended, so a test reads whole logs.
OUTER_TEE = 'export TAP_TEE_ID=$$; tee "$0/$$.client-sent" | "$@" | tee "$0/$$.client-got"; : > "$0/$$.outer.done"'
INNER_TEE = 'tee "$0/$TAP_TEE_ID.server-got" | "$@" | tee "$0/$TAP_TEE_ID.server-sent"; : > "$0/$TAP_TEE_ID.inner.done"'


class Tapped(Direct):
    """The client talks to the server through a tap: the stdio relay for a command, the HTTP
    reverse proxy for a URL; this process watches, as a notebook would. A stdio relay is run
    between the two `tee` shims of `tees` (see `crossed_byte_identical`)."""

    name = "tap"

    def __init__(self, tees: Path) -> None:
        self.tees = tees
        self.over_stdio = False

    def wrap(self, target: Target) -> Target:
        import mcp_notebook

        if target.url:
            self.tap = mcp_notebook.tap("clients", upstream=target.url)
            return Target(url=str(self.tap.url), headers=target.headers)
        self.tap = mcp_notebook.tap("clients")
        self.over_stdio = True
        inner = ["sh", "-c", INNER_TEE, str(self.tees), *target.argv]
        return Target(argv=("sh", "-c", OUTER_TEE, str(self.tees), *self.tap.command(inner)), env=target.env)

    def sessions(self) -> list[Any]:
        return self.tap.sessions if self.tap is not None else []

    def wait_pongs(self, log: Any, count: int) -> None:
        self.tap.wait(lambda tap: sum(s.health.server_pings.answered for s in tap.sessions) >= count, timeout=WAIT)


@pytest.fixture(params=["direct", "tap"])
def through(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Direct]:
    if request.param == "direct":
        yield Direct()
        return
    with tempfile.TemporaryDirectory(prefix="tap-") as short:  # a socket path must stay short
        tapped = Tapped(Path(short) / "tees")
        tapped.tees.mkdir()
        monkeypatch.setenv("MCP_NOTEBOOK_TAP_DIR", str(Path(short) / "t"))
        try:
            yield tapped
        finally:
            if tapped.tap is not None:
                tapped.tap.close()


def every_frame_paired_and_no_violation(through: Direct, sessions: int) -> None:
    """Through the tap: `sessions` sessions seen (the client has exited: all its frames have
    crossed), every request each way answered in the trace, nothing broken on either side."""
    if through.tap is None:
        return
    through.tap.wait(lambda tap: len(tap.sessions) >= sessions and all(not unpaired(s) for s in tap.sessions), timeout=WAIT)
    for session in through.sessions():
        assert session.violations() == [], session
    crossed_byte_identical(through)


def crossed_byte_identical(through: Direct) -> None:
    """Over stdio, by the `tee` logs on both sides of the relay, each session: what the server
    got is byte for byte what the client sent, what the client got is what the server sent (up
    to where the client stopped reading: a ping written as it hung up is the server's only),
    and the tap's trace holds every one of those frames both ways, in their exact text. The
    relay is between the two shims; what it saw is compared with what they saw."""
    if not isinstance(through, Tapped) or not through.over_stdio:
        return
    folder = through.tees
    wait_until(lambda: len(list(folder.glob("*.outer.done"))) == len(through.sessions()), "the shims to end", WAIT)
    logged = {path.name.split(".")[0] for path in folder.glob("*.outer.done")}
    wait_until(lambda: all((folder / f"{i}.inner.done").exists() for i in logged), "the inner shims to end", WAIT)
    crossed = []
    for i in sorted(logged):
        log = {part: (folder / f"{i}.{part}").read_bytes() for part in ("client-sent", "server-got", "server-sent", "client-got")}
        assert log["server-got"] == log["client-sent"]
        assert log["server-sent"].startswith(log["client-got"]) and log["client-got"][-1:] in (b"", b"\n")
        unread = [json.loads(line) for line in log["server-sent"][len(log["client-got"]) :].splitlines()]
        assert all("method" in message for message in unread), unread  # never an answer to the client's request
        crossed.append((log["client-sent"].splitlines(), log["server-sent"].splitlines()))
    traced = [
        (
            [e.raw.encode() for e in session.trace.frames("out")],
            [e.raw.encode() for e in session.trace.frames("in")],
        )
        for session in through.sessions()
    ]
    assert all(sent and got for sent, got in crossed), crossed
    assert sorted(traced) == sorted(crossed)


def unpaired(session: Any) -> set[tuple[str, Any]]:
    """The client's requests in a session's trace with no answer, but for those an error with a
    null id answers (a request the server could not read: a legacy server's answer to a modern
    probe). A server ping in flight when the client hangs up is the observer's to judge."""
    frames = session.trace.frames()
    requests = {(e.direction, e.id) for e in frames if e.kind == "request" and e.direction == "out"}
    answers = {("out" if e.direction == "in" else "in", e.id) for e in frames if e.kind in ("response", "error")}
    unreadable = sum(1 for e in frames if e.kind == "error" and e.id is None)
    left = requests - answers
    return set() if len(left) <= unreadable else left


@pytest.fixture(scope="module")
def demo_url() -> Iterator[str]:
    """The demo server (legacy era) over HTTP on 127.0.0.1, shared by the module."""
    process, url = demo_server.start_http("legacy")
    with process:
        yield url


@pytest.fixture
def pinging() -> Iterator[demo_server.DemoServerProcess]:
    """The demo server over HTTP pinging its clients every 50 ms, for one test."""
    process, _url = demo_server.start_http("legacy", ping_interval=0.05)
    with process:
        yield process


@pytest.fixture(scope="module")
def everything_url() -> Iterator[str]:
    with everything(free_port(), "streamableHttp") as base:
        yield base + "/mcp"


def target_for(server: str, transport: str, request: pytest.FixtureRequest) -> Target:
    if transport == "http":
        if server == "demo":
            return Target.http(request.getfixturevalue("demo_url"))
        return Target.http(request.getfixturevalue("everything_url"))
    return Target.stdio(demo_server.command() if server == "demo" else server_everything_cmd())


def expected_outcome(client: str, server: str) -> dict[str, Any]:
    if client == "pydantic-ai":
        return {"calls": AGENT_RESULTS[server]}
    return {"calls": DEMO_RESULTS if server == "demo" else EVERYTHING_RESULTS}


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("server", ["demo", "everything"])
@pytest.mark.parametrize("client", CLIENTS)
def test_each_client_lists_and_calls(client: str, server: str, transport: str, through: Direct, request: pytest.FixtureRequest):
    calls = DEMO_CALLS if server == "demo" else EVERYTHING_CALLS
    outcome = outcome_of(client, through.wrap(target_for(server, transport, request)), calls)
    every_frame_paired_and_no_violation(through, sessions=1 + len(calls) if client == "inspector" else 1)
    assert outcome["calls"] == expected_outcome(client, server)["calls"]  # the values it gets direct
    assert {name for name, _ in calls} <= set(outcome["tools"])
    if client == "inspector":  # it prints results only
        assert (outcome["server"], outcome["protocol_version"]) == (None, None)
        return
    assert outcome["server"]["name"] == ("mcp-notebook-demo" if server == "demo" else "mcp-servers/everything")
    assert outcome["protocol_version"] == "2025-11-25"  # both servers are of the handshake era


@pytest.mark.parametrize("client", [c for c in CLIENTS if c != "inspector"])
def test_a_held_client_answers_the_servers_pings_over_stdio(client: str, through: Direct):
    """The demo server's stderr reaches the client's (the Python clients pass it on)."""
    target = through.wrap(Target.stdio(demo_server.command(ping_interval=0.05)))
    with run_client(client, target, DEMO_CALLS[:1], hold=True) as run:
        assert run.outcome()["calls"][:1] == (AGENT_RESULTS["demo"][1:] if client == "pydantic-ai" else DEMO_RESULTS[:1])
        through.wait_pongs(run.stderr, 3)
    assert not [line for line in run.stderr.lines if "answered with an error" in line]
    every_frame_paired_and_no_violation(through, sessions=1)


@pytest.mark.parametrize("client", CLIENTS)
def test_a_held_client_answers_the_servers_pings_over_http(client: str, through: Direct, pinging: Any):
    """The inspector cannot idle: it holds with a slow call instead, 40 ping intervals long."""
    hold_call = ("slow", {"seconds": 2})
    with run_client(client, through.wrap(Target.http(pinging.url)), DEMO_CALLS[:1], hold=True, hold_call=hold_call) as run:
        assert run.outcome()["calls"][:1] == (AGENT_RESULTS["demo"][1:] if client == "pydantic-ai" else DEMO_RESULTS[:1])
        through.wait_pongs(pinging.stderr_log, 1 if client == "inspector" else 3)
    assert not [line for line in pinging.stderr_log.lines if "answered with an error" in line]
    every_frame_paired_and_no_violation(through, sessions=3 if client == "inspector" else 1)


# The SDK client's first call of a tool with an outputSchema, in a fresh interpreter: where jsonschema
# is imported, and whether an event loop was running on that thread (it then waits for the import).
SDK_FIRST_CALL = """
import asyncio, json, sys


class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "jsonschema" and "on_a_running_loop" not in seen:
            seen["on_a_running_loop"] = asyncio._get_running_loop() is not None
        return None


seen = {}
sys.meta_path.insert(0, Spy())
from mcp import Client


async def main(url):
    async with Client(url, mode="legacy") as client:
        await client.list_tools()
        seen["before_the_call"] = "jsonschema" in sys.modules
        await client.call_tool("add", {"a": 2, "b": 3})
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1]))
"""


def test_the_sdk_client_imports_jsonschema_on_its_event_loop_at_its_first_tool_call(demo_url: str):
    """Why lesson 10 imports jsonschema before its SDK client's session: the SDK (mcp 2.3.0)
    imports it to check the first structured result, on the client's event loop, and in a
    Jupyter install (jupyter_events brings jsonschema[format-nongpl], whose rfc3987-syntax builds
    a grammar as it loads) that takes a second or more, during which the client answers no
    ping: through the tap, the server's pings then show up late. If this fails, the SDK no
    longer does it: take the import out of the lesson, and this test with it."""
    done = subprocess.run([sys.executable, "-c", SDK_FIRST_CALL, demo_url], capture_output=True, text=True, timeout=WAIT)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"before_the_call": False, "on_a_running_loop": True}


# ------------------------------------------------------------------ the scripted bad peers


def bad_client(answer: str, *where: str) -> dict[str, Any]:
    """The bad client's run: it stops after 3 pings; one that ignores them holds its session past
    the tap's lateness bound first, so those pings are unanswered, not cut off by its end."""
    hold = ["--hold", repr(LATE_AFTER)] if answer == "ignore" else []
    done = subprocess.run(
        [*BAD_CLIENT, "--answer", answer, "--pings", "3", *hold, *where],
        capture_output=True,
        text=True,
        timeout=WAIT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return {"report": json.loads(done.stdout), "stderr": done.stderr}


@pytest.mark.parametrize("answer", ["error", "ignore"])
def test_the_bad_client_mishandles_the_pings_over_stdio(answer: str, through: Direct):
    target = through.wrap(Target.stdio(demo_server.command(ping_interval=0.05)))
    seen = bad_client(answer, "--", *target.argv)
    assert seen["report"]["pings"][:3] == ["demo-ping-1", "demo-ping-2", "demo-ping-3"]
    assert "echo" in seen["report"]["tools"]
    answered_with_errors = "ping demo-ping-1 answered with an error" in seen["stderr"]
    assert answered_with_errors == (answer == "error")
    assert "pong" not in seen["stderr"]
    caught_client_side(through, answer, seen["report"]["pings"][:3])


def caught_client_side(through: Direct, answer: str, pings: list[str]) -> None:
    """Through the tap: each ping mishandled is the client's violation of the ping MUST, and
    nothing is the server's. Answered with errors: the `pings` it answered (ids). Ignored: the
    `pings` it counted and those after them that had waited past the lateness bound when the client hung
    up; any sent within the bound before the end were cut off by it, no one's violation."""
    if through.tap is None:
        return
    through.tap.wait(lambda tap: bool(tap.sessions) and tap.session.ended, timeout=WAIT)
    found = through.tap.violations(side="client")
    assert all("MUST respond promptly" in v.message for v in found), found
    assert through.tap.violations(side="server") == []
    crossed_byte_identical(through)
    stats = through.tap.health.server_pings
    if answer == "error":
        assert [v.rule for v in found] == ["ping-error"] * len(pings), found
        assert (stats.errors, stats.unanswered) == (len(pings), 0)
        return
    assert [v.rule for v in found] == ["ping-unanswered"] * len(found), found
    named = [v.message for v in found[: len(pings)]]
    assert [f'ping "{ping}" by the session\'s end' in text for text, ping in zip(named, pings, strict=True)] == [True] * len(
        pings
    )
    assert (stats.answered, stats.unanswered, stats.unanswered + stats.cut_off) == (0, len(found), stats.sent)


@pytest.mark.parametrize("answer", ["error", "ignore"])
def test_the_bad_client_mishandles_the_pings_over_http(answer: str, through: Direct):
    process, url = demo_server.start_http("legacy", ping_interval=0.05)
    with process:
        seen = bad_client(answer, "--url", through.wrap(Target.http(url)).url)
        assert len(seen["report"]["pings"]) >= 3
        errors = [line for line in process.stderr_log.lines if "answered with an error" in line]
        assert len(errors) == (3 if answer == "error" else 0)
        assert not [line for line in process.stderr_log.lines if ": pong " in line]
        caught_client_side(through, answer, seen["report"]["pings"][:3])


def test_the_scripted_server_lists_a_tool_without_a_name(through: Direct, tmp_path: Path):
    """What the tap must catch server-side: the listing breaks the schema (the SDK refuses it)."""
    target = through.wrap(Target.stdio([*RAW_SERVER, "--tools", "nameless"]))
    with pytest.raises(RuntimeError, match="name"), run_client("sdk-legacy", target, []) as run:
        run.outcome()
    if through.tap is not None:
        through.tap.wait(lambda tap: bool(tap.violations(side="server")), timeout=WAIT)
        assert [v.method for v in through.tap.violations(side="server")] == ["tools/list"]
        assert through.tap.violations(side="client") == []
        crossed_byte_identical(through)
