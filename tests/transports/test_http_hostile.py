"""Hostile HTTP servers (tests/servers/hostile_http_server.py): no header leaves the server's
origin, no answer a server stalls holds up another, no mislabelled or unsendable thing is taken
as it came. Each fault is one real peers cannot produce."""

from __future__ import annotations

import json
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.http_servers import serving, text_of

import mcp_notebook
from mcp_notebook.api.connecting.settings import defaults

HOSTILE = [sys.executable, str(Path(__file__).parents[1] / "servers" / "hostile_http_server.py")]
TOKEN = "tok-" + "s3cr3t" * 4


@pytest.fixture
def hostile(port: int) -> Iterator[str]:
    with serving([*HOSTILE, str(port)], port) as base:
        yield base


@pytest.fixture
def short_read_timeout() -> Iterator[float]:
    """The read timeout at half a second for the test (the setting every new connection reads)."""
    old = defaults.http_read_timeout
    defaults.http_read_timeout = 0.5
    yield 0.5
    defaults.http_read_timeout = old


def collected(base: str) -> list[dict]:
    with urllib.request.urlopen(base + "/seen", timeout=10) as answer:
        return json.load(answer)


def test_an_http_sse_endpoint_on_another_origin_is_refused_and_no_header_goes_there(hostile):
    """transport="auto": the POST is answered 405, so the HTTP+SSE stream is opened; its endpoint
    event names another origin (the same port as `localhost`), which is refused in one line."""
    with pytest.raises(mcp_notebook.HandshakeError) as caught:
        mcp_notebook.connect(
            hostile + "/elsewhere",
            era="legacy",
            name="elsewhere",
            headers={"Authorization": f"Bearer {TOKEN}", "X-Api-Key": TOKEN},
            timeout=15,
        )
    message = str(caught.value)
    assert "POST endpoint on another origin" in message and "localhost" in message
    assert "\n" not in message and TOKEN not in message
    assert collected(hostile) == []


def test_a_redirect_to_another_origin_is_not_followed_by_the_get_stream_or_the_delete(hostile):
    with mcp_notebook.connect(hostile + "/hop", era="legacy", name="hop", headers={"X-Api-Key": TOKEN}) as conn:
        assert conn.ping() > 0
        refused = [e for e in conn.trace.entries() if e.kind == "stream-failed"]
        assert refused and "redirected to another origin" in (refused[0].note or "")
    assert collected(hostile) == []


def test_a_stalled_body_holds_up_no_other_frame(hostile):
    """/stall never sends the bodies it announces with its 202s (to notifications/initialized,
    to each pong): our own ping goes out and is answered, and each server ping gets its pong,
    the second while the first pong's answer is still stalled."""
    with mcp_notebook.connect(hostile + "/stall", era="legacy", name="stall") as conn:
        assert conn.ping(timeout=15) > 0
        assert text_of(conn.request("tools/call", {"name": "server-pings"}, timeout=15)) == "2 pongs"


def test_a_body_the_server_stops_sending_fails_with_the_read_timeout(hostile, short_read_timeout):
    with mcp_notebook.connect(hostile + "/mcp", era="legacy", name="stalled") as conn:
        with pytest.raises(mcp_notebook.TransportError, match=r"sent nothing for 0\.5 s.*http_read_timeout") as caught:
            conn.request("tools/call", {"name": "stall"}, timeout=30)
        assert "\n" not in str(caught.value)
        assert conn.ping() > 0


def test_an_event_stream_labelled_json_fails_its_request_at_once_naming_the_mislabel(hostile):
    with mcp_notebook.connect(hostile + "/mcp", era="legacy", name="mislabelled") as conn:
        with pytest.raises(mcp_notebook.TransportError, match="labelled an event stream as JSON") as caught:
            conn.request("tools/call", {"name": "mislabelled"}, timeout=30)
        assert "\n" not in str(caught.value)
        assert conn.ping() > 0


@pytest.mark.parametrize("bad", ["huge", "escape"])
def test_an_event_id_that_cannot_be_sent_back_is_a_violation_and_never_echoed(hostile, bad):
    """The stream is cut after an event with an id of 4 MB (or with a terminal escape): the resume
    goes from the last id that can be sent back, and the bad one is recorded, clipped and escaped."""
    with mcp_notebook.connect(hostile + "/mcp", era="legacy", name="bad-id") as conn:
        result = conn.request("tools/call", {"name": "bad-id", "arguments": {"id": bad}}, timeout=30)
        assert text_of(result) == "resumed after e1"
        found = [v for v in conn.violations if v.rule == "sse-event-id"]
        assert len(found) == 1
        assert len(found[0].message) < 300 and "\x1b" not in found[0].message
        assert found[0].url and "resumability" in found[0].url


class Recorded:
    def __init__(self) -> None:
        self.events: list[tuple] = []
        self.secrets: list[str] = []

    def event(self, *args: object, **detail: object) -> None:
        self.events.append((*args, detail))


async def test_an_authorization_endpoint_that_never_finishes_its_answer_is_given_up_on(hostile, anyio_backend):
    """The OAuth client's exchanges (metadata, registration, tokens) go to URLs the server names:
    each is over within its timeout however slowly the answer comes (here one byte per 50 ms)."""
    from mcp_notebook.auth.exchange import AuthExchange
    from mcp_notebook.base.errors import AuthorizationError

    recorded = Recorded()
    http = AuthExchange(recorded.event, recorded.secrets.append, timeout=1)
    try:
        assert await http.get_json("server metadata", hostile + "/trickle") is None  # as if not there
        with pytest.raises(AuthorizationError, match=r"^token: http://127\.0\.0\.1:\d+/trickle did not answer within 1 s$"):
            await http.post("token", hostile + "/trickle", form={"grant_type": "client_credentials"})
    finally:
        await http.aclose()
    assert [e[1] for e in recorded.events if e[0] == "auth-http"][0].endswith("did not answer within 1 s")
