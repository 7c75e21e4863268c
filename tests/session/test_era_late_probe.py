"""A probe that is merely late never makes a modern server legacy (what the conformance suite's
scenarios met under load, #36). Over stdio the handshake offered beside a late probe is no
verdict when a modern-only server refuses it: the probe's answer, however late, still decides.
Over Streamable HTTP, where every server answers a POST, the late answer is waited for and
nothing else goes on the modern wire. Only a definite "not modern" answer or an answered
initialize settles the era legacy.

The servers are scripted (tests/servers/late_probe_server.py): real servers answer late only
under load. Each holds its answer to the probe until released: right after it has refused
initialize (the two answers then race), or, for an order that is certain, once the client's
trace says it is waiting for the probe. A tiny probe timeout makes every probe late at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.http_servers import serving

import mcp_notebook
from mcp_notebook.base.errors import HandshakeError
from mcp_notebook.session.trace import Trace

LATE = [sys.executable, str(Path(__file__).parents[1] / "servers" / "late_probe_server.py")]
PROBE = 0.05  # every probe is late
TIMEOUT = 30  # the longest a held answer could be waited for; never reached
REFUSED = "while server/discover is out: waiting for it"  # stdio: initialize was refused
WAITED = "over HTTP its answer decides, so it is waited for"


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "release"
    os.mkfifo(path)
    return str(path)


@pytest.fixture
def released_once_waiting(monkeypatch: pytest.MonkeyPatch, fifo: str) -> str:
    """The FIFO that releases the server's answer, written once the client's trace says it
    waits for the probe (over stdio: after initialize was refused): the answer comes after."""
    event = Trace.event

    def watching(self: Trace, name: str, note: str | None = None, **detail: Any) -> Any:
        entry = event(self, name, note, **detail)
        if name == "era" and note and (REFUSED in note or WAITED in note):
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # the server holds it open: never blocks
            os.write(fd, b"go")
            os.close(fd)
        return entry

    monkeypatch.setattr(Trace, "event", watching)
    return fifo


@contextlib.contextmanager
def late_http(port: int, release: str, *extra: str) -> Iterator[str]:
    with serving([*LATE, "http", str(port), "--release", release, *extra], port) as base:
        yield base + "/mcp"


def stdio(release: str) -> list[str]:
    return [*LATE, "stdio", "--release", release]


def era_notes(conn: mcp_notebook.Connection) -> list[str]:
    return [entry.note or "" for entry in conn.trace.entries() if entry.kind == "era"]


def sent(conn: mcp_notebook.Connection) -> list[str | None]:
    return [entry.method for entry in conn.trace.frames("out") if entry.kind == "request"]


def assert_modern(conn: mcp_notebook.Connection, source: str) -> None:
    assert conn.era == "modern" and conn.protocol_version == "2026-07-28"
    assert conn.health.era_source == source
    assert f"modern 2026-07-28 ({source})" in era_notes(conn)
    assert conn.call_tool("echo", text="hi").text == "hi"
    assert [tool["name"] for tool in conn.list_tools()] == ["echo"]


def test_stdio_a_probe_answered_after_initialize_was_refused_still_finds_the_server_modern(released_once_waiting):
    with mcp_notebook.connect(stdio(released_once_waiting), name="late", timeout=TIMEOUT, probe_timeout=PROBE) as conn:
        assert_modern(conn, "probe: server/discover answered after the handshake was offered")
        notes = era_notes(conn)
        assert f"no answer to server/discover within {PROBE:g} s; offering the legacy handshake beside it" in notes
        refused = [note for note in notes if note.startswith("initialize failed (") and note.endswith(REFUSED)]
        assert len(refused) == 1 and "Method not found: initialize" in refused[0]


def test_stdio_a_probe_answered_as_initialize_is_refused_finds_the_server_modern():
    """The server answers the probe right after refusing initialize: whichever the client reads
    first, the probe's DiscoverResult decides."""
    with mcp_notebook.connect(stdio("initialize"), name="late", timeout=TIMEOUT, probe_timeout=PROBE) as conn:
        assert_modern(conn, "probe: server/discover answered after the handshake was offered")


def test_stdio_a_refused_initialize_waits_for_the_probe_no_longer_than_the_connect_timeout(fifo):
    """The probe is never answered (nothing writes the FIFO): the refusal is the error, once the
    connection's timeout has passed since the probe went out."""
    with pytest.raises(HandshakeError) as caught:
        mcp_notebook.connect(stdio(fifo), name="late", timeout=1, probe_timeout=PROBE)
    assert str(caught.value).startswith("the server refused initialize: initialize: Method not found")


def test_http_a_late_probe_is_waited_for_and_no_initialize_goes_out(released_once_waiting, port):
    """A modern-only server slow to answer over Streamable HTTP: its DiscoverResult decides when
    it comes, and the modern wire never sees a legacy initialize (nor a GET for HTTP+SSE)."""
    with (
        late_http(port, released_once_waiting) as url,
        mcp_notebook.connect(url, name="late", timeout=TIMEOUT, probe_timeout=PROBE) as conn,
    ):
        assert_modern(conn, "probe: server/discover answered late")
        assert f"no answer to server/discover within {PROBE:g} s: {WAITED}" in era_notes(conn)
        assert "initialize" not in sent(conn)
        assert not [e for e in conn.trace.entries() if e.kind == "http" and e.detail["method"] == "GET"]


def test_http_a_late_answer_that_says_not_modern_falls_back_on_a_clean_slate(released_once_waiting, port):
    """An HTTP+SSE server (2024-11-05) slow to answer: its late 405 says "not modern", and the
    handshake follows, once, falling back to HTTP+SSE."""
    with (
        late_http(port, released_once_waiting, "--sse") as url,
        mcp_notebook.connect(url, name="sse", timeout=TIMEOUT, probe_timeout=PROBE) as conn,
    ):
        assert conn.era == "legacy" and conn._session.transport.kind == "sse"
        assert conn.health.era_source == "probe: server/discover answered HTTP 405"
        assert [tool["name"] for tool in conn.list_tools()] == ["echo"]
        assert [m for m in sent(conn) if m in ("server/discover", "initialize")] == ["server/discover", "initialize"]


def test_http_a_server_that_never_answers_the_probe_connects_legacy_after_the_connect_timeout(fifo, port):
    """A POST never answered (nothing writes the FIFO) is waited for as long as the connection's
    timeout lets a request wait; then the handshake follows, and the server connects."""
    with late_http(port, fifo, "--sse") as url, mcp_notebook.connect(url, name="sse", timeout=1, probe_timeout=PROBE) as conn:
        assert conn.era == "legacy" and conn._session.transport.kind == "sse"
        assert conn.health.era_source == "probe: no answer to server/discover within 1 s"
        assert [tool["name"] for tool in conn.list_tools()] == ["echo"]


def test_a_discover_ttl_too_large_for_a_float_is_clamped():
    """A `ttlMs` of 10**400 (JSON has no limit) keeps the DiscoverResult cached, clamped, rather
    than overflow when it is turned into seconds."""
    with mcp_notebook.connect([*LATE, "stdio", "--release", "now", "--ttl-ms", str(10**400)], name="ttl") as conn:
        assert conn.era == "modern" and conn.discover()["ttlMs"] == 10**400
        assert conn.discover()["supportedVersions"] == ["2026-07-28"]
        discovers = [e for e in conn.trace.frames("out") if e.method == "server/discover"]
        assert len(discovers) == 1  # the probe's answer, still fresh
