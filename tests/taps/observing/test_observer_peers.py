"""The tap's SessionObserver fed a real session with server-everything (a Node peer): every frame
both ways in the trace, with the watcher's clocks, and zero violations on both sides."""

from __future__ import annotations

import pytest
from support.recordings import ask_all, sample
from support.servers import server_everything_cmd
from support.tap_records import records_of

import mcp_notebook
from mcp_notebook.taps.observing.observer import SessionObserver
from mcp_notebook.taps.wire import records as rec

pytestmark = [pytest.mark.node]


def observed(records: list[rec.Record]) -> SessionObserver:
    observer = SessionObserver(name="captured")
    for record in records:
        observer.feed(record)
    observer.close()
    return observer


@pytest.fixture(scope="module")
def everything() -> list[rec.Record]:
    """Our client with server-everything: tools, a sampling request (a server request with id 0), roots/list."""
    with mcp_notebook.connect(server_everything_cmd(), name="everything", era="legacy", sampling=sample, roots=["/tmp"]) as conn:
        ask_all(conn)
    return records_of(conn.trace)


def test_a_session_with_server_everything_is_traced_whole_and_breaks_no_rule(everything):
    observer = observed(everything)
    assert observer.violations() == []
    frames = [r for r in everything if r.is_frame]
    traced = observer.trace.frames()
    assert [(e.direction, e.raw) for e in traced] == [("out" if r.side == rec.CLIENT else "in", r.text) for r in frames]
    assert [(e.monotonic, e.wall) for e in traced] == [(r.monotonic, r.wall) for r in frames]  # the watcher's clocks
    sampling = [e for e in traced if e.direction == "in" and e.method == "sampling/createMessage" and e.kind == "request"]
    assert sampling and sampling[0].id == 0  # a falsy id, answered: nothing is left in flight
    health = observer.health()
    assert (health.era, health.protocol_version, health.state) == ("legacy", "2025-11-25", "ended")
    assert health.server_info and health.server_info["name"] == "mcp-servers/everything"
    assert health.client_info and health.client_info["name"] == "mcp-notebook"
    assert health.requests_in_flight_out == 0 and health.requests_in_flight_in == 0
    assert health.frames_out == sum(r.side == rec.CLIENT for r in frames)
    assert health.bytes_in == sum(len(r.data) for r in frames if r.side == rec.SERVER)
    assert (health.client_violations, health.server_violations) == (0, 0)
