"""A probe that is merely late never makes a modern server legacy: the era probe's answer that
comes after the handshake was offered beside it still decides, even after a modern-only server
refused that handshake (what the conformance suite's scenarios met under load, #36). Only a
definite "not modern" answer or an answered initialize settles the era legacy.

The server is scripted (tests/servers/late_probe_server.py): real servers answer late only
under load. It holds its DiscoverResult until released: right after it has refused initialize
(the two answers then race), or, for an order that is certain, once the client's trace says it
saw the refusal and waits for the probe. A tiny probe timeout sends the handshake at once.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_http import serving

import mcp_notebook
from mcp_notebook.base.errors import HandshakeError, McpNotebookError
from mcp_notebook.session.trace import Trace

LATE = [sys.executable, str(Path(__file__).parents[1] / "servers" / "late_probe_server.py")]
PROBE = 0.05  # the handshake goes beside the probe at once
TIMEOUT = 30  # the longest a held answer could be waited for; never reached
WAITING = "while server/discover is out: waiting for it"
LATE_SOURCE = "probe: server/discover answered after the handshake was offered"


@pytest.fixture
def fifo(tmp_path: Path) -> str:
    path = tmp_path / "release"
    os.mkfifo(path)
    return str(path)


@pytest.fixture
def released_once_waiting(monkeypatch: pytest.MonkeyPatch, fifo: str) -> str:
    """The FIFO that releases the server's answer, written once the client's trace says it saw
    initialize refused and waits for the probe: the answer comes after the refusal for sure."""
    event = Trace.event

    def watching(self: Trace, name: str, note: str | None = None, **detail: Any) -> Any:
        entry = event(self, name, note, **detail)
        if name == "era" and note and WAITING in note:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # the server holds it open: never blocks
            os.write(fd, b"go")
            os.close(fd)
        return entry

    monkeypatch.setattr(Trace, "event", watching)
    return fifo


@contextlib.contextmanager
def late_server(transport: str, release: str, port: int) -> Iterator[str | list[str]]:
    """The scripted modern-only server: its command (stdio) or URL (HTTP)."""
    if transport == "stdio":
        yield [*LATE, "stdio", "--release", release]
    else:
        with serving([*LATE, "http", str(port), "--release", release], port) as base:
            yield base + "/mcp"


def era_notes(conn: mcp_notebook.Connection) -> list[str]:
    return [entry.note or "" for entry in conn.trace.entries() if entry.kind == "era"]


def assert_modern_after_a_late_probe(conn: mcp_notebook.Connection) -> None:
    assert conn.era == "modern" and conn.protocol_version == "2026-07-28"
    assert conn.health.era_source == LATE_SOURCE
    assert f"modern 2026-07-28 ({LATE_SOURCE})" in era_notes(conn)
    assert conn.call_tool("echo", text="hi").text == "hi"
    assert [tool["name"] for tool in conn.list_tools()] == ["echo"]


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_probe_answered_after_initialize_was_refused_still_finds_the_server_modern(transport, released_once_waiting, port):
    with (
        late_server(transport, released_once_waiting, port) as target,
        mcp_notebook.connect(target, name="late", timeout=TIMEOUT, probe_timeout=PROBE) as conn,
    ):
        assert_modern_after_a_late_probe(conn)
        notes = era_notes(conn)
        assert f"no answer to server/discover within {PROBE:g} s; offering the legacy handshake beside it" in notes
        assert any(note.startswith("initialize failed (") and note.endswith(WAITING) for note in notes)
        if transport == "http":  # the refusal was no sign of HTTP+SSE: no GET stream was tried
            gets = [e for e in conn.trace.entries() if e.kind == "http" and e.detail["method"] == "GET"]
            assert not gets and conn.session.transport.kind == "http"


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_probe_answered_as_initialize_is_refused_finds_the_server_modern(transport, port):
    """The server releases its answer right after refusing initialize: whichever the client reads
    first, the probe's DiscoverResult decides."""
    with (
        late_server(transport, "initialize", port) as target,
        mcp_notebook.connect(target, name="late", timeout=TIMEOUT, probe_timeout=PROBE) as conn,
    ):
        assert_modern_after_a_late_probe(conn)


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_refused_initialize_waits_for_the_probe_no_longer_than_the_connect_timeout(transport, fifo, port):
    """The probe is never answered (nothing writes the FIFO): the refusal is the error, once the
    connection's timeout has passed since the probe went out."""
    with late_server(transport, fifo, port) as target, pytest.raises(McpNotebookError) as caught:
        mcp_notebook.connect(target, name="late", timeout=1, probe_timeout=PROBE)
    assert isinstance(caught.value, HandshakeError) and str(caught.value).startswith("the server refused initialize: ")


def test_a_late_probe_that_says_not_modern_after_a_refused_initialize_falls_back_afresh(released_once_waiting, port):
    """An HTTP+SSE server (2024-11-05) under load: initialize POSTed to its URL gets 405 while
    the probe is out, which is no verdict (no GET stream is tried yet); the probe's own 405
    then says "not modern", and the handshake goes again, on a clean slate, and falls back
    to HTTP+SSE."""
    argv = [*LATE, "http", str(port), "--release", released_once_waiting, "--sse"]
    with (
        serving(argv, port) as base,
        mcp_notebook.connect(base + "/mcp", name="sse", timeout=TIMEOUT, probe_timeout=PROBE) as conn,
    ):
        assert conn.era == "legacy" and conn.protocol_version == "2024-11-05"
        assert conn.session.transport.kind == "sse"
        assert conn.health.era_source == "probe: server/discover answered HTTP 405"
        assert [tool["name"] for tool in conn.list_tools()] == ["echo"]
        opened = [e.method for e in conn.trace.frames("out") if e.method in ("server/discover", "initialize")]
        assert opened == ["server/discover", "initialize", "initialize"]
        assert "legacy (server/discover answered HTTP 405): the handshake follows on a clean slate" in era_notes(conn)


def test_a_discover_ttl_too_large_for_a_float_is_clamped():
    """A `ttlMs` of 10**400 (JSON has no limit) keeps the DiscoverResult cached, clamped, rather
    than overflow when it is turned into seconds."""
    with mcp_notebook.connect([*LATE, "stdio", "--release", "now", "--ttl-ms", str(10**400)], name="ttl") as conn:
        assert conn.era == "modern" and conn.discover()["ttlMs"] == 10**400
        assert conn.discover()["supportedVersions"] == ["2026-07-28"]
        discovers = [e for e in conn.trace.frames("out") if e.method == "server/discover"]
        assert len(discovers) == 1  # the probe's answer, still fresh
