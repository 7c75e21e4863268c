"""The notebook's model of one tapped session: `SessionObserver`, fed the records a tap saw.

`feed(record)` takes the records in their order (thread-safe, cheap: parse the frame, note
it in the trace, track the session, hand the checks to a worker). The trace is in the
CLIENT's view, as if the notebook were the client: "out" is client to server, "in" server to
client, every entry stamped with the watcher's clocks, so the trace views, the sequence
diagram, `to_jsonl` and cassettes work as for a connection. Both sides are checked off the
feed path, on one `FrameChecker` worker, in order: the server's frames by `FrameRules`, the
client's by `ClientFrameRules`, against the negotiated version (`tracking.Settled`). Pings
are judged as they are answered (`pings.PingJudge`); unanswered ones when records arrive,
when someone reads (`health()`, `violations()`) and at the session's end, never by a timer.
Registered secrets are redacted from the trace, the violations and the health as they are
recorded. Listeners (callables of no argument) are called after each record and each
violation found: on the feeding thread, or on the checker's.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

from ...protocol import jsonrpc as rpc
from ...protocol.client_rules import ClientFrameRules
from ...protocol.frame_rules import FrameRules, Seen, Violation
from ...protocol.versions import LATEST_LEGACY, accepts_batches
from ...session.trace import DEFAULT_CAPACITY, IN, OUT, Trace
from ...session.violations import FrameChecker, frame_version
from ..wire import records as rec
from .health import ENDED, LIVE, PingStats, TapHealth
from .pings import CLIENT, PING_RULES, SERVER, PingCounts, PingJudge, id_key
from .tracking import Asked, Settled

# A pong needs no work: over a local pipe it takes well under a millisecond, over loopback HTTP a
# few. A second is far beyond "promptly" on any loaded machine, yet well inside every ping
# timeout clients and servers use (10 to 60 s): a pong later than that is a client (or server)
# that answers pings only between its own requests, as the seeds' ruby client did.
LATE_AFTER = 1.0
UNANSWERED_AFTER = 30.0  # seconds without an answer after which a ping is unanswered (the SDKs time out at 10-60 s)
STDERR_TAIL = 5  # stderr lines a health snapshot shows
_RESERVED = frozenset(("note", "at"))  # Trace.event's own parameters (and `name`: see `_detail_key`)

Listener = Callable[[], None]


class _BothSides(FrameRules):
    """The server's rules and the client's, on one worker (one order), by the frame's side."""

    def __init__(self) -> None:
        super().__init__()
        self.client = ClientFrameRules()

    def check(self, seen: Seen) -> list[Violation]:
        return self.client.check(seen) if seen.side == CLIENT else super().check(seen)


class SessionObserver:
    """One tapped session, from the records of the watcher (a stdio relay or the HTTP proxy)."""

    def __init__(
        self,
        *,
        transport: str = "stdio",
        name: str = "",
        secrets: Iterable[str] = (),
        late_after: float = LATE_AFTER,
        unanswered_after: float = UNANSWERED_AFTER,
        capacity: int = DEFAULT_CAPACITY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.transport = transport
        self.name = name
        self.clock = clock  # the watcher's monotonic clock (the same on one machine): unanswered pings are judged by it
        self.trace = Trace(capacity, secrets=secrets)
        self.checker = FrameChecker(self.trace)
        self.checker.rules = _BothSides()
        self.checker.listeners.append(self._found)
        self.settled = Settled()
        self.pings = PingJudge(late_after, unanswered_after)
        self.listeners: list[Listener] = []
        self.state = LIVE
        self.started: float | None = None
        self.exit_code: int | None = None
        self.dropped = 0  # records the watcher dropped (its DROPPED events)
        self.unchecked = 0  # frames not checked because the checker was behind
        self.frames = {OUT: 0, IN: 0}
        self.bytes = {OUT: 0, IN: 0}
        self.stderr_lines = 0
        self._stderr: deque[str] = deque(maxlen=STDERR_TAIL)
        self._clipped = {CLIENT: 0, SERVER: 0}  # frames the watcher recorded clipped, by sender
        self._counts = {CLIENT: 0, SERVER: 0}  # violations, by the side that broke the rule
        self._lock = threading.Lock()
        self._closed = False
        self._last = float("-inf")  # the newest record's monotonic time

    # ----- feeding -----

    def feed(self, record: rec.Record) -> None:
        """Take the next record the watcher saw (in order; any thread)."""
        with self._lock:
            if self._closed:
                return
            self._last = max(self._last, record.monotonic)
            if record.is_frame:
                self._frame(record)
            elif record.side == rec.STDERR:
                self._stderr_line(record)
            else:
                self._event(record)
            if self.state == LIVE and not self.settled.modern:
                self._report(self.pings.overdue(record.monotonic, self.settled.version))
        self._changed()

    def add_secret(self, text: str) -> None:
        """Redact `text` from everything recorded after now (the trace, violations, health)."""
        self.trace.add_secret(text)

    def _frame(self, record: rec.Record) -> None:
        sender = CLIENT if record.side == rec.CLIENT else SERVER
        direction = OUT if sender == CLIENT else IN
        at = (record.monotonic, record.wall)
        via = record.detail.get("via")
        via = via if isinstance(via, str) else None
        self.frames[direction] += 1
        self.bytes[direction] += len(record.data)
        if sender == CLIENT:
            self.settled.header_version(record.detail.get(rec.PROTOCOL_VERSION))
        if _clipped(record):  # not what crossed: shown, neither tracked nor checked
            self._clipped[sender] += 1
            clipped = f"clipped by the watcher: {record.detail.get(rec.SIZE, '?')} bytes crossed"
            self.trace.frame(direction, rpc.INVALID, record.text, None, note=clipped, via=via, at=at)
            return
        problem: str | None = None
        try:
            text = record.data.decode("utf-8")
        except UnicodeDecodeError as exc:
            text, problem = record.text, rpc.utf8_problem(exc)
        frame = rpc.decode(text, problem)
        kind, message = frame.kind, frame.message
        note: str | None = frame.problem
        if kind == rpc.BATCH and not accepts_batches(self.settled.version):
            kind, note = rpc.INVALID, f"batches are not allowed in protocol {self.settled.version or '(none yet)'}"
        other = SERVER if sender == CLIENT else CLIENT
        answers = frame.answers if kind in (rpc.RESPONSE, rpc.ERROR, rpc.INVALID) and message is not None else None
        if answers is None and kind == rpc.INVALID and message is None:
            answers = rpc.id_in_text(text)
        key = id_key(answers)
        asked = self.settled.flights[other].take(key)
        method = asked.method if asked is not None else frame.method
        ident = frame.id if isinstance(message, dict) else None
        entry = self.trace.frame(direction, kind, text, message, method=method, id=ident, note=note, via=via, at=at)
        version = self._track(sender, kind, message, asked, key, entry.seq, record.monotonic)
        if kind == rpc.INVALID and _ping_with_bad_id(message):
            self._report(self.pings.sent(sender, message, entry.seq, record.monotonic, version or LATEST_LEGACY))
            return  # the ping-id violation says it all
        if _http_error_text(record, kind, message):
            return  # an HTTP error's plain-text body: the status, not a frame, is the answer
        # An error with a null id answers a request whose id could not be read (JSON-RPC 2.0, section 5).
        excused = (kind == rpc.ERROR and ident is None) or self._clipped[other] > 0  # or a request recorded clipped
        matched = asked is not None or kind not in (rpc.RESPONSE, rpc.ERROR) or excused
        seen = Seen(
            entry.seq, kind, message, version, method, asked.params if asked is not None else None, matched,
            note if kind == rpc.INVALID else None, self.settled.server_capabilities, self.settled.client_capabilities,
            self.transport == "stdio", sender,
        )  # fmt: skip
        if self.checker.behind():
            self.unchecked += 1
            return
        self.checker.submit(seen, len(text))

    def _track(
        self, sender: str, kind: str, message: Any, asked: Asked | None, key: tuple[str, Any] | None, seq: int, at: float
    ) -> str | None:
        """Note what the frame settles (requests in flight, era, pings); the version it is judged by.
        `asked` is the other side's request it answers (its id: `key`)."""
        settled = self.settled
        if sender == CLIENT:
            version = settled.request_version(message) if kind in (rpc.REQUEST, rpc.NOTIFICATION) else settled.version
        else:
            version = frame_version(settled.version, asked.method if asked else None, message, settled.requested or LATEST_LEGACY)
        judge_pings = not settled.modern  # the modern era has no ping
        if kind == rpc.REQUEST:
            settled.request(sender, message, seq)
            if message["method"] == "ping" and judge_pings:
                self._report(self.pings.sent(sender, message, seq, at, version))
        elif kind == rpc.NOTIFICATION:
            cancelled = settled.notification(sender, message)
            if cancelled is not None:
                self.pings.cancelled(sender, cancelled)
        elif kind in (rpc.RESPONSE, rpc.ERROR, rpc.INVALID):
            if kind != rpc.INVALID:
                settled.response(sender, asked, kind, message)
            if asked is not None and asked.method == "ping" and key is not None and judge_pings:
                # an invalid answer is judged late at most here: the rules say what else is wrong with it
                self._report(self.pings.answered(sender, key, kind, message, seq, at, version))
        elif kind == rpc.BATCH:
            self._batch(sender, message, seq)
        return version

    def _batch(self, sender: str, items: list[Any], seq: int) -> None:
        other = SERVER if sender == CLIENT else CLIENT
        for item in items:
            inner = rpc.classify(item)
            if inner.kind == rpc.REQUEST:
                self.settled.request(sender, item, seq)
            elif inner.kind in (rpc.RESPONSE, rpc.ERROR):
                self.settled.response(sender, self.settled.flights[other].take(id_key(inner.id)), inner.kind, item)

    def _stderr_line(self, record: rec.Record) -> None:
        line = record.text
        self.stderr_lines += 1
        self._stderr.append(line)
        self.trace.event("stderr", line=line, at=(record.monotonic, record.wall))

    def _event(self, record: rec.Record) -> None:
        detail = {_detail_key(key): value for key, value in record.detail.items()}
        at = (record.monotonic, record.wall)
        if record.name == rec.HELLO:
            self.started = record.wall
            named = record.detail.get("name")
            self.name = self.name or (named if isinstance(named, str) else "")
            self.trace.event("tap", note="the tapped session began", at=at, **detail)
        elif record.name == rec.DROPPED:
            count = record.detail.get("count")
            self.dropped += count if isinstance(count, int) else 0
            self.trace.event("dropped", note="records the watcher could not hand on", at=at, **detail)
        elif record.name in (rec.EXIT, rec.CLOSED):
            if record.name == rec.EXIT:
                code = record.detail.get("code")
                self.exit_code = code if isinstance(code, int) else None
            self.trace.event(record.name, at=at, **detail)
            self._end(record.monotonic)
        else:
            self.trace.event(record.name or "event", at=at, **detail)

    def _end(self, at: float) -> None:
        """The session is over (at `at`, the watcher's monotonic clock): the pings still waiting
        are judged (`PingJudge.end`)."""
        if self.state == ENDED:
            return
        self.state = ENDED
        if not self.settled.modern:
            self._report(self.pings.end(at, self.settled.version))

    # ----- what was found -----

    def _report(self, found: list[Violation]) -> None:
        for violation in found:
            self.checker.report(violation)

    def _found(self, violation: Violation) -> None:
        """A violation the checker kept (on its worker thread)."""
        self._counts[violation.side] = self._counts.get(violation.side, 0) + 1
        self._changed()

    def _changed(self) -> None:
        for listener in list(self.listeners):
            listener()

    def _overdue(self) -> None:
        with self._lock:
            if self.state == LIVE and not self._closed and not self.settled.modern:
                self._report(self.pings.overdue(self.clock(), self.settled.version))

    def _settle(self) -> None:
        """Wait until every frame fed so far is checked, unless this is the checker's own thread
        (a listener reading health as a violation is found: it would wait for itself)."""
        if threading.current_thread() is not self.checker._thread:
            self.checker.settled()

    def violations(self, side: str | None = None) -> list[Violation]:
        """The rules broken so far, oldest first (by the trace entry they name): both sides', or
        `side`'s ("client" or "server"), once every frame fed is checked."""
        if side not in (None, CLIENT, SERVER):
            raise ValueError(f"side must be 'client', 'server' or None, not {side!r}")
        self._overdue()
        self._settle()
        return [v for v in self.checker.found if side is None or v.side == side]

    def ping_violations(self, side: str | None = None) -> list[Violation]:
        """Only the ping judgement's violations."""
        return [v for v in self.violations(side) if v.rule in PING_RULES]

    def health(self, *, settle: bool = True) -> TapHealth:
        """A snapshot of the session now: every frame fed so far checked, or (`settle=False`, for
        a reader that must never wait, the render pump on the loop an HTTP tap relays on) the
        violations found so far."""
        self._overdue()
        if settle:
            self._settle()
        with self._lock:
            settled, redact = self.settled, self.trace.redactor
            return TapHealth(
                name=self.name,
                transport=self.transport,
                state=self.state,
                era=settled.era,
                protocol_version=settled.version,
                client_info=redact.value(settled.client_info) if redact else settled.client_info,
                server_info=redact.value(settled.server_info) if redact else settled.server_info,
                frames_out=self.frames[OUT],
                frames_in=self.frames[IN],
                bytes_out=self.bytes[OUT],
                bytes_in=self.bytes[IN],
                requests_in_flight_out=len(settled.flights[CLIENT].open),
                requests_in_flight_in=len(settled.flights[SERVER].open),
                server_pings=_stats(self.pings.counts[SERVER]),
                client_pings=_stats(self.pings.counts[CLIENT]),
                client_violations=self._counts[CLIENT],
                server_violations=self._counts[SERVER],
                dropped=self.dropped,
                unchecked=self.unchecked,
                exit_code=self.exit_code,
                stderr_lines=self.stderr_lines,
                stderr_tail=tuple(self.trace.redact(line) for line in self._stderr),
                trace_entries=len(self.trace),
                trace_dropped=self.trace.dropped,
                started=self.started,
            )

    def close(self) -> None:
        """The session is over for this observer: judge what is still waiting, check what is
        queued, end the checker's worker. Records fed later are ignored. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._end(max(self.clock(), self._last))
            self._closed = True
        self.checker.stop()
        self._changed()

    def __enter__(self) -> SessionObserver:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<SessionObserver {self.name!r} over {self.transport}: {self.state}, {len(self.trace)} trace entries>"


def _stats(counts: PingCounts) -> PingStats:
    median, longest = counts.latency_ms()
    return PingStats(
        counts.sent, counts.answered, counts.errors, counts.not_empty, counts.late, counts.unanswered, counts.cut_off,
        counts.bad_ids, median, longest,
    )  # fmt: skip


def _clipped(record: rec.Record) -> bool:
    """Whether the watcher recorded the frame clipped (too long to record whole)."""
    size = record.detail.get(rec.SIZE)
    return bool(record.detail.get(rec.CLIPPED)) or (isinstance(size, int) and size > len(record.data))


def _ping_with_bad_id(message: Any) -> bool:
    """A ping request whose id is there but is neither a string nor an integer (null, an object, a float)."""
    return (
        isinstance(message, dict) and message.get("method") == "ping" and "id" in message and not rpc.is_valid_id(message["id"])
    )


def _http_error_text(record: rec.Record, kind: str, message: Any) -> bool:
    status = record.detail.get("status")
    return kind == rpc.INVALID and message is None and isinstance(status, int) and status >= 400


def _detail_key(key: str) -> str:
    """A record's detail key as a trace event's: its `name` (the tap's) is `tap`; a key the event
    itself takes (`note`, `at`) gets a trailing underscore."""
    if key == "name":
        return "tap"
    return f"{key}_" if key in _RESERVED else key
