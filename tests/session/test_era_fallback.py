"""Era negotiation that never strands a server: every probe answer that is not a DiscoverResult
falls back to the handshake, on a clean slate, within the same connect; versions are retried
or named; the session id comes from the initialize answer only, and must be visible ASCII.

The probe's faults come from a scripted server (tests/servers/era_http_server.py): real peers
produce the 400-with-a-dead-session-id (FastMCP 1.x, tests/api/connecting/test_field_servers.py), but not
a 500, an HTML page, a version list or a malformed session id on demand.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.http_servers import serving

import mcp_notebook
from mcp_notebook.transports.http import HttpTransport

ERA_HTTP = [sys.executable, str(Path(__file__).parents[1] / "servers" / "era_http_server.py")]
TIMEOUT = 10  # a stranded connect would wait this long; none does


@pytest.fixture
def base(port: int) -> Iterator[str]:
    with serving([*ERA_HTTP, str(port)], port) as url:
        yield url


def posts(conn: mcp_notebook.Connection) -> list[tuple[str | None, int | None]]:
    """(method, HTTP status) of each POST, in order: the frame sent, then its answer's status."""
    seen: list[tuple[str | None, int | None]] = []
    for entry in conn.trace.entries():
        if entry.direction == "out" and entry.kind == "request":
            seen.append((entry.method, None))
        elif entry.kind == "http" and entry.detail["method"] == "POST" and seen and seen[-1][1] is None:
            seen[-1] = (seen[-1][0], entry.detail["status"])
    return seen


def era_notes(conn: mcp_notebook.Connection) -> list[str]:
    return [entry.note or "" for entry in conn.trace.entries() if entry.kind == "era"]


@pytest.mark.parametrize(
    ("path", "status", "why"),
    [
        ("probe-500", 500, "server/discover answered HTTP 500"),
        ("probe-html", 200, "server/discover answered HTTP 200, and no JSON-RPC answer"),
        ("probe-rpc", 200, "server/discover refused: Method not found (-32601)"),
        ("probe-dead", 400, "server/discover answered HTTP 400"),
    ],
)
def test_a_probe_answer_that_is_no_discover_result_falls_back_to_the_handshake(base, path, status, why):
    with mcp_notebook.connect(f"{base}/{path}", name="fb", timeout=TIMEOUT) as conn:
        assert conn.era == "legacy" and conn.health.era_source == f"probe: {why}"
        assert [t["name"] for t in conn.list_tools()] == ["echo"]
        assert posts(conn)[:2] == [("server/discover", status), ("initialize", 200)]
        assert f"legacy ({why}): the handshake follows on a clean slate" in era_notes(conn)


def test_the_handshake_keeps_nothing_the_probe_answer_left(base):
    """FastMCP 1.x answers the probe with a 400 naming a session it has already ended; the server
    here also sets a cookie. initialize goes without either (the server refuses both)."""
    with mcp_notebook.connect(f"{base}/probe-dead", name="clean", timeout=TIMEOUT) as conn:
        assert conn._session.transport.session_id == "s-1"  # from the initialize answer, not the probe's
        initialize = next(e for e in conn.trace.frames("out") if e.method == "initialize")
        assert initialize.message["params"]["protocolVersion"] == "2025-11-25"
        assert conn.ping() > 0


def test_an_initialize_that_carried_a_dead_session_id_goes_again_without_it(base, monkeypatch):
    """A 404 to a request carrying a session id means a fresh initialize without one (2025-11-25,
    transports): while the connection opens no recovery comes, so initialize itself goes again."""
    opened = HttpTransport.open

    async def open_with_a_left_over_id(self, task_group, sink):
        await opened(self, task_group, sink)
        self.session_id = "left-over"

    monkeypatch.setattr(HttpTransport, "open", open_with_a_left_over_id)
    with mcp_notebook.connect(f"{base}/forgot", name="forgot", era="legacy", timeout=TIMEOUT) as conn:
        assert posts(conn)[:2] == [("initialize", 404), ("initialize", 200)]
        assert conn._session.transport.session_id == "s-1" and conn.ping() > 0


def test_only_the_answer_to_initialize_sets_the_session_id(base):
    with mcp_notebook.connect(f"{base}/get-other", name="other", timeout=TIMEOUT) as conn:
        assert ("GET", 405) in [(e.detail["method"], e.detail["status"]) for e in conn.trace.entries() if e.kind == "http"]
        assert [t["name"] for t in conn.list_tools()] == ["echo"]
        assert conn._session.transport.session_id == "s-1" and conn.health.session_recoveries == 0


@pytest.mark.parametrize("path", ["id-space", "id-control", "id-utf8"])
def test_a_session_id_outside_visible_ascii_is_refused_at_connect(base, path):
    with pytest.raises(mcp_notebook.HandshakeError) as refused:
        mcp_notebook.connect(f"{base}/{path}", name="badid", timeout=TIMEOUT)
    message = str(refused.value)
    assert "Mcp-Session-Id holding bytes outside visible ASCII (0x21-0x7E)" in message and "\n" not in message
    assert "bad" not in message.replace("bytes", "") and "café" not in message  # the id is a credential: never shown
    assert "badid" not in mcp_notebook.connections()


def test_a_version_refused_with_our_own_in_its_list_is_retried_once(base):
    """The conformance suite's request-metadata scenario: the first request is refused (-32022)
    naming the very version it asked for; the retry at that version is answered."""
    with mcp_notebook.connect(f"{base}/versions-retry", name="retry", timeout=TIMEOUT) as conn:
        assert conn.era == "modern" and conn.protocol_version == "2026-07-28"
        assert posts(conn)[:2] == [("server/discover", 400), ("server/discover", 200)]
        assert "the server refused 2026-07-28: retrying at 2026-07-28" in era_notes(conn)
        assert conn.request("tools/list") == {"resultType": "complete", "tools": []}


def test_versions_that_do_not_overlap_say_which_we_offered_and_which_they_take(base):
    with pytest.raises(mcp_notebook.HandshakeError) as apart:
        mcp_notebook.connect(f"{base}/versions-future", name="future", timeout=TIMEOUT)
    message = str(apart.value)
    assert "the server takes protocol version 2027-01-01; this client offered 2026-07-28" in message, message
    assert "2025-11-25" in message  # and what else it speaks
    with pytest.raises(mcp_notebook.HandshakeError, match="offered 2026-07-28"):
        mcp_notebook.connect(f"{base}/versions-future", name="future", era="modern", timeout=TIMEOUT)


def test_a_version_list_of_handshake_versions_only_falls_back_to_the_handshake(base):
    with mcp_notebook.connect(f"{base}/versions-legacy", name="old", timeout=TIMEOUT) as conn:
        assert conn.era == "legacy" and conn.protocol_version == "2025-11-25"
        assert conn.health.era_source == "probe: server/discover: the server takes 2025-11-25, 2025-06-18, handshake-era versions"
    with pytest.raises(mcp_notebook.HandshakeError, match="connect with era='legacy'"):
        mcp_notebook.connect(f"{base}/versions-legacy", name="old", era="modern", timeout=TIMEOUT)


def test_a_pinned_era_says_so_in_the_trace(base):
    with mcp_notebook.connect(f"{base}/probe-500", name="pinned", era="legacy", timeout=TIMEOUT) as conn:
        assert era_notes(conn) == ["legacy (pinned): no probe"]
        assert not [e for e in conn.trace.frames("out") if e.method == "server/discover"]
