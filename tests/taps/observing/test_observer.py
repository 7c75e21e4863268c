"""The tap's SessionObserver: real sessions fed as records come out clean on both sides, and the
faults real peers do not make (scripted records) are caught on the side that made them.

Real sessions are our own client's with the demo server (pinging, both eras, stdio and HTTP;
server-everything's is in test_observer_peers), their traces turned into the records a watcher between the two
would have made. The scripted ones move their own clock: lateness is in the records'
timestamps, never in the test's time.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from support.tap_records import Script, records_of
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook import demo_server
from mcp_notebook.taps.observing import health as health_view
from mcp_notebook.taps.observing.observer import LATE_AFTER, SessionObserver
from mcp_notebook.taps.wire import records as rec

PING_URL = "https://modelcontextprotocol.io/specification/2025-11-25/basic/utilities/ping"
MUST = "The receiver MUST respond promptly with an empty response"


def observed(records: list[rec.Record], transport: str = "stdio") -> SessionObserver:
    observer = SessionObserver(transport=transport, name="captured")
    for record in records:
        observer.feed(record)
    observer.close()
    return observer


@pytest.fixture
def observer() -> Iterator[SessionObserver]:
    made = SessionObserver(name="scripted", clock=lambda: 0.0)
    yield made
    made.close()


# ----- real sessions: every frame both ways, zero violations on both sides -----


def test_pings_both_ways_with_the_demo_server_are_counted_and_judged_clean():
    with mcp_notebook.connect(demo_server.command("stdio", "legacy", ping_interval=0.05), name="pings", era="legacy") as conn:
        conn.request("tools/list")
        wait_until(lambda: conn.health.server_pings >= 3, "three server pings")
        conn.ping()
        conn.ping()
    observer = observed(records_of(conn.trace))
    assert observer.violations() == []
    health = observer.health()
    server_pings = sum(1 for e in conn.trace.frames("in") if e.method == "ping" and e.kind == "request")
    assert health.server_pings.sent == health.server_pings.answered == server_pings >= 3
    assert (health.server_pings.errors, health.server_pings.unanswered) == (0, 0)
    assert health.server_pings.latency_median_ms is not None and health.server_pings.latency_max_ms is not None
    assert health.client_pings.sent == health.client_pings.answered == 2


def test_a_modern_session_is_seen_as_modern_and_breaks_no_rule():
    with mcp_notebook.connect(demo_server.command("stdio", "modern"), era="modern", name="modern") as conn:
        conn.request("tools/list")
        conn.call_tool("add", a=2, b=3)
    observer = observed(records_of(conn.trace))
    assert observer.violations() == []
    health = observer.health()
    assert (health.era, health.protocol_version) == ("modern", "2026-07-28")
    assert health.server_info and health.server_info["name"] == "mcp-notebook-demo"


def test_an_http_session_with_server_pings_breaks_no_rule():
    process, url = demo_server.start_http(ping_interval=0.05)
    try:
        with mcp_notebook.connect(url, era="legacy", name="http") as conn:
            conn.request("tools/list")
            wait_until(lambda: conn.health.server_pings >= 2, "two server pings over HTTP")
    finally:
        process.stop()
    observer = observed(records_of(conn.trace, transport="http"), transport="http")
    assert observer.violations() == []
    assert observer.health().server_pings.answered >= 2


# ----- ping judgement: the receiver's MUST, the sender's id -----


def test_a_ping_answered_with_method_not_found_is_the_clients_violation(observer):
    script = Script(observer)
    script.handshake()
    script.server({"jsonrpc": "2.0", "id": 7, "method": "ping"})
    script.client({"jsonrpc": "2.0", "id": 7, "error": {"code": -32601, "message": "Method not found"}})
    (found,) = observer.violations()
    assert (found.side, found.rule, found.direction, found.where) == ("client", "ping-error", "out", "/error")
    assert MUST in found.message and "-32601 Method not found" in found.message and found.url == PING_URL
    assert observer.violations(side="server") == []
    stats = observer.health().server_pings
    assert (stats.sent, stats.answered, stats.errors) == (1, 1, 1)
    assert "ping-error" in observer.trace.marks[found.index]  # the trace entry of the error is marked


def ignored_ping_then(observer: SessionObserver, waited: float, ending: str) -> None:
    """A server ping nobody answers, the session going on, and its end `waited` seconds after the
    ping: an EXIT record then, or (ending "close") the observer closed with its clock there."""
    script = Script(observer)
    script.handshake()
    script.server({"jsonrpc": "2.0", "id": "p-1", "method": "ping"})
    pinged = script.now
    script.client({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    script.server({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    assert observer.violations() == []  # a few milliseconds: not unanswered yet
    if ending == "close":
        observer.clock = lambda: pinged + waited
        observer.close()
    else:
        script.event(rec.EXIT, after=pinged + waited - script.now, code=0)
    assert observer.health().state == "ended"


@pytest.mark.parametrize("ending", ["exit", "close"])
def test_a_ping_ignored_past_the_lateness_bound_is_unanswered_at_the_sessions_end(observer, ending):
    ignored_ping_then(observer, LATE_AFTER + 0.001, ending)
    (found,) = observer.violations()
    assert (found.side, found.rule, found.direction) == ("client", "ping-unanswered", "in")  # it marks the ping itself
    assert "by the session's end (1.001 s after it)" in found.message and MUST in found.message
    pings = observer.health().server_pings
    assert (pings.sent, pings.answered, pings.unanswered, pings.cut_off) == (1, 0, 1, 0)


@pytest.mark.parametrize("ending", ["exit", "close"])
def test_a_ping_the_end_cuts_off_within_the_lateness_bound_is_no_ones_violation(observer, ending):
    """A client may hang up a moment after the server pinged: it could not have answered in time."""
    ignored_ping_then(observer, LATE_AFTER - 0.001, ending)
    assert observer.violations() == []
    health = observer.health()
    pings = health.server_pings
    assert (pings.sent, pings.answered, pings.unanswered, pings.cut_off) == (1, 0, 0, 1)
    assert "0 unanswered, 1 cut off by the end" in health_view.text(health)
    assert "0 unanswered, 1 cut off by the end" in health_view.html(health)


def test_a_ping_is_unanswered_once_its_time_passes_judged_as_records_come_and_as_one_reads():
    script_clock = [0.0]
    observer = SessionObserver(unanswered_after=30.0, clock=lambda: script_clock[0])
    try:
        script = Script(observer)
        script.handshake()
        script.server({"jsonrpc": "2.0", "id": 1, "method": "ping"})
        script.client({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, after=29.0)
        assert observer.violations() == []
        script.client({"jsonrpc": "2.0", "id": 6, "method": "tools/list"}, after=2.0)  # a record 31 s after the ping
        assert [v.rule for v in observer.violations()] == ["ping-unanswered"]
        assert "within 30 s" in observer.violations()[0].message
        script.server({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        script_clock[0] = script.now + 31.0  # no record comes: reading judges it
        assert [v.rule for v in observer.violations()] == ["ping-unanswered", "ping-unanswered"]
        script.client({"jsonrpc": "2.0", "id": 2, "result": {}})  # at last: no second violation for that ping
        observer.close()
        assert [v.rule for v in observer.violations()] == ["ping-unanswered", "ping-unanswered"]
        assert observer.health().server_pings.unanswered == 2
    finally:
        observer.close()


def test_a_late_pong_is_the_clients_violation(observer):
    script = Script(observer)
    script.handshake()
    script.server({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    script.client({"jsonrpc": "2.0", "id": 3, "result": {}}, after=LATE_AFTER + 1.5)
    script.server({"jsonrpc": "2.0", "id": 4, "method": "ping"})
    script.client({"jsonrpc": "2.0", "id": 4, "result": {}}, after=LATE_AFTER / 2)  # in time
    (found,) = observer.violations()
    assert (found.side, found.rule) == ("client", "ping-late")
    assert "after 2.500 s" in found.message and MUST in found.message
    stats = observer.health().server_pings
    assert (stats.answered, stats.late) == (2, 1)
    assert stats.latency_max_ms == pytest.approx(2500.0, abs=1) and stats.latency_median_ms == pytest.approx(1500.0, abs=1)


def test_a_pong_with_a_result_that_is_not_empty_is_the_clients_violation(observer):
    script = Script(observer)
    script.handshake()
    script.server({"jsonrpc": "2.0", "id": 3, "method": "ping"})
    script.client({"jsonrpc": "2.0", "id": 3, "result": {"status": "ok"}})
    script.server({"jsonrpc": "2.0", "id": 4, "method": "ping"})
    script.client({"jsonrpc": "2.0", "id": 4, "result": {"_meta": {"trace": "x"}}})  # _meta is no content
    (found,) = observer.violations()
    assert (found.side, found.rule, found.where) == ("client", "ping-result", "/result")
    assert '"status": "ok"' in found.message
    assert observer.health().server_pings.not_empty == 1


@pytest.mark.parametrize("bad_id", [None, {"n": 1}, 1.5])
def test_a_ping_whose_id_is_no_id_is_the_senders_violation_and_not_answering_it_is_right(observer, bad_id):
    script = Script(observer)
    script.handshake()
    script.server({"jsonrpc": "2.0", "id": bad_id, "method": "ping"})
    observer.close()
    (found,) = observer.violations()
    assert (found.side, found.rule, found.direction, found.where) == ("server", "ping-id", "in", "/id")
    assert "neither a string nor an integer" in found.message
    assert observer.violations(side="client") == []
    assert observer.health().server_pings.bad_ids == 1


def test_the_servers_answers_to_client_pings_are_judged_with_the_sides_swapped(observer):
    script = Script(observer)
    script.handshake()
    script.client({"jsonrpc": "2.0", "id": 10, "method": "ping"})
    script.server({"jsonrpc": "2.0", "id": 10, "error": {"code": -32603, "message": "busy"}})
    script.client({"jsonrpc": "2.0", "id": 11, "method": "ping"})
    script.event(rec.EXIT, after=LATE_AFTER + 0.5, code=0)  # the end, the ping unanswered past the lateness bound
    observer.close()
    assert [(v.side, v.rule, v.direction) for v in observer.violations()] == [
        ("server", "ping-error", "in"),
        ("server", "ping-unanswered", "out"),
    ]
    stats = observer.health().client_pings
    assert (stats.sent, stats.answered, stats.errors, stats.unanswered) == (2, 1, 1, 1)


def test_the_modern_era_has_no_ping_to_judge(observer):
    script = Script(observer)
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "c", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    script.client({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}})
    script.server({"jsonrpc": "2.0", "id": 1, "result": {"tools": [], "resultType": "complete"}})
    script.server({"jsonrpc": "2.0", "id": 9, "method": "ping"})
    script.client({"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"_meta": meta}})
    script.server({"jsonrpc": "2.0", "id": 2, "error": {"code": -32601, "message": "Method not found"}})  # right: no ping
    observer.close()
    assert observer.health().era == "modern"
    assert [v.rule for v in observer.violations() if v.rule.startswith("ping")] == []


def test_a_cancelled_ping_is_owed_no_answer(observer):
    script = Script(observer)
    script.handshake()
    script.server({"jsonrpc": "2.0", "id": 5, "method": "ping"})
    script.server({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 5}})
    observer.close()
    assert observer.violations() == []


# ----- both sides checked against the negotiated version -----


def test_a_client_request_breaking_the_schema_is_the_clients_violation(observer):
    script = Script(observer)
    script.handshake()
    script.client({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"arguments": {}}})  # no name
    (found,) = observer.violations()
    assert (found.side, found.rule, found.direction, found.method) == ("client", "schema", "out", "tools/call")
    assert "'name' is a required property" in found.message
    assert str(found).startswith(f"#{found.index} client tools/call")


def test_a_server_result_breaking_its_schema_is_the_servers_violation(observer):
    script = Script(observer)
    script.handshake()
    script.client({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    script.server({"jsonrpc": "2.0", "id": 1, "result": {"tools": "none"}})
    (found,) = observer.violations()
    assert (found.side, found.rule, found.direction, found.method) == ("server", "result-shape", "in", "tools/list")
    assert observer.violations(side="client") == []


def test_a_clients_answer_breaking_its_result_type_and_one_to_no_request_are_the_clients(observer):
    script = Script(observer)
    script.handshake()
    script.server({"jsonrpc": "2.0", "id": 0, "method": "roots/list"})
    script.client({"jsonrpc": "2.0", "id": 0, "result": {"roots": [{"name": "no uri"}]}})
    script.client({"jsonrpc": "2.0", "id": 42, "result": {}})
    assert [(v.side, v.rule, v.method) for v in observer.violations()] == [
        ("client", "result-shape", "roots/list"),
        ("client", "unmatched-response", None),
    ]


def test_request_ids_of_the_two_directions_are_separate_spaces(observer):
    script = Script(observer)
    script.handshake()
    script.client({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    script.server({"jsonrpc": "2.0", "id": 1, "method": "roots/list"})
    script.client({"jsonrpc": "2.0", "id": 1, "result": {"roots": []}})  # answers the server's 1, not its own
    health = observer.health()
    assert (health.requests_in_flight_out, health.requests_in_flight_in) == (1, 0)
    script.server({"jsonrpc": "2.0", "id": 1, "result": {"tools": []}})
    assert observer.violations() == []
    assert observer.health().requests_in_flight_out == 0
    replies = [(e.direction, e.method) for e in observer.trace.frames() if e.kind == "response" and e.id == 1]
    assert replies == [("out", "roots/list"), ("in", "tools/list")]  # each reply names the request it answers


def test_a_request_the_servers_capabilities_do_not_cover_is_the_clients_violation(observer):
    script = Script(observer)
    script.handshake(server_capabilities={"resources": {}})
    script.client({"jsonrpc": "2.0", "id": 1, "method": "resources/subscribe", "params": {"uri": "demo://a"}})
    (found,) = observer.violations()
    assert (found.side, found.rule) == ("client", "capability")
    assert "capabilities.resources.subscribe" in found.message


def test_an_http_request_header_names_the_version_until_a_frame_does():
    observer = SessionObserver(transport="http")
    try:
        script = Script(observer)
        request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {}}
        script.client(request, detail={rec.PROTOCOL_VERSION: "2025-06-18"})
        (found,) = observer.violations()
        assert found.rule == "schema" and "2025-06-18" in (found.url or "")
        assert observer.health().protocol_version == "2025-06-18"
    finally:
        observer.close()


# ----- events, secrets, health -----


def test_events_stderr_exit_and_drops_reach_the_trace_and_health(observer):
    script = Script(observer)
    script.handshake()
    script.stderr("starting up")
    script.event(rec.DROPPED, count=3)
    script.event(rec.EXIT, code=2)
    kinds = [e.kind for e in observer.trace.entries() if e.direction == "event"]
    assert kinds == ["tap", "stderr", "dropped", "exit"]
    health = observer.health()
    assert (health.dropped, health.exit_code, health.state, health.stderr_tail) == (3, 2, "ended", ("starting up",))


def test_secrets_never_reach_the_trace_the_violations_or_the_health():
    secret = "sk-live-0123456789"
    observer = SessionObserver(secrets=[secret])
    try:
        script = Script(observer)
        script.handshake(server_name=f"server {secret}")
        script.client({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": {"token": secret}}})
        script.stderr(f"token={secret}")
        observer.add_secret("later-secret")
        script.client({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": {"k": "later-secret"}}})
        observer.close()
        found = observer.violations()
        assert len(found) == 2 and all(v.side == "client" for v in found)
        shown = [str(v) for v in found] + [repr(e) for e in observer.trace.entries()]
        health = observer.health()
        shown += [repr(health), health._repr_html_(), repr(health.as_dict())]
        assert "[redacted]" in "".join(shown)
        assert not [text for text in shown if secret in text or "later-secret" in text]
    finally:
        observer.close()


def test_health_shows_either_sides_text_inert(observer):
    script = Script(observer)
    script.handshake(server_name="<script>alert(1)</script>\x1b]52;c;aGk=\x07")
    script.stderr("\x1b[2Jcleared")
    health = observer.health()
    html = health._repr_html_()
    assert "<script>" not in html and "&lt;script&gt;" in html and "\x1b" not in html
    lines: list[str] = []
    health._repr_pretty_(type("Printer", (), {"text": staticmethod(lines.append)})(), False)
    assert "\x1b" not in lines[0] and "<script>alert(1)</script>" in lines[0]


def test_feeding_after_close_is_ignored_and_close_is_idempotent(observer):
    script = Script(observer)
    script.handshake()
    observer.close()
    before = len(observer.trace)
    script.server({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    observer.close()
    assert len(observer.trace) == before


def test_listeners_hear_of_each_record():
    heard: list[int] = []
    observer = SessionObserver()
    try:
        observer.listeners.append(lambda: heard.append(1))
        Script(observer).handshake()
        assert len(heard) == 4
    finally:
        observer.close()


def test_no_checker_thread_outlives_close():
    observer = SessionObserver()
    Script(observer).handshake()
    observer.violations()
    worker = observer.checker._thread
    assert worker is not None and worker.is_alive()
    observer.close()
    assert not worker.is_alive()


def test_a_listener_reading_health_as_a_violation_is_found_does_not_wait_for_itself(monkeypatch):
    observer = SessionObserver()
    read: list[int] = []
    waits_on_worker: list[bool] = []
    settled = observer.checker.settled

    def settled_here(timeout: float | None = 30.0) -> bool:
        waits_on_worker.append(threading.current_thread() is observer.checker._thread)
        return settled(timeout)

    monkeypatch.setattr(observer.checker, "settled", settled_here)
    try:
        script = Script(observer)
        script.handshake()
        observer.listeners.append(lambda: read.append(observer.health().client_violations))
        script.client({"jsonrpc": "2.0", "id": 9, "result": {}})  # answers nothing: the client's violation
        observer.violations()
        assert read and read[-1] == 1 and observer.health().name == "scripted"  # named by the session's HELLO
        assert waits_on_worker and not any(waits_on_worker)
    finally:
        observer.close()


def test_frames_that_come_while_the_checker_is_behind_are_counted_unchecked(observer, monkeypatch):
    script = Script(observer)
    script.handshake()
    monkeypatch.setattr(observer.checker, "behind", lambda: True)
    script.client({"jsonrpc": "2.0", "id": 9, "result": {}})
    assert observer.violations() == []
    assert observer.health().unchecked == 1
    assert "1 frame not checked" in observer.health()._repr_html_()
