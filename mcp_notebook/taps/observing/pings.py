"""Ping judgement for a tapped session: every ping either side sent, and how the other answered.

The spec's ping page: "The receiver MUST respond promptly with an empty response". A ping
answered with an error (`ping-error`), with a result that is not empty (`ping-result`: any
member but `_meta`), after `late_after` seconds (`ping-late`), or not at all
(`ping-unanswered`: not by `unanswered_after` seconds of the clock, nor by the session's end
when it had waited longer than `late_after` by then) is the RECEIVER's violation; a ping still
within `late_after` when the session ends was cut off by the end (`cut_off`, counted, no one's
violation: a client hanging up a moment after the server pinged cannot have answered in time);
a ping whose id is neither a string nor an integer (`ping-id`) is the SENDER's, and leaving it
unanswered is then correct (no receiver can name it in a reply).
Nothing here runs a timer: `overdue(now)` is called as records arrive and when someone reads
(health, violations), so a thousand pings cost a thousand dict entries, not threads. The
modern era (2026-07-28) has no ping; the observer does not ask this judge there. Pure: no I/O.
"""

from __future__ import annotations

import json
import statistics
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any

from ...base.text import clip
from ...protocol import jsonrpc as rpc
from ...protocol.frame_rules import Violation, url
from ...protocol.versions import LATEST_LEGACY

PING_ERROR = "ping-error"
PING_RESULT = "ping-result"
PING_LATE = "ping-late"
PING_UNANSWERED = "ping-unanswered"
PING_ID = "ping-id"
PING_RULES = (PING_ERROR, PING_RESULT, PING_LATE, PING_UNANSWERED, PING_ID)

MUST = 'the spec: "The receiver MUST respond promptly with an empty response"'
SECTION = "basic/utilities/ping"
PENDING_BOUND = 1000  # pings awaiting an answer kept per sender; the oldest beyond it are forgotten, unjudged
LATENCIES = 1000  # latencies kept per sender, for the median and max

SERVER, CLIENT = "server", "client"
_OTHER = {SERVER: CLIENT, CLIENT: SERVER}
_DIRECTION = {SERVER: "in", CLIENT: "out"}  # a frame's direction in the client's view, by its sender


def id_key(value: Any) -> tuple[str, Any] | None:
    """A request id as a dict key: 1 and "1" are different ids; None for no valid id."""
    return (type(value).__name__, value) if rpc.is_valid_id(value) else None


@dataclass(slots=True)
class _Ping:
    seq: int
    sent: float  # monotonic
    id: Any
    judged: bool = False  # reported unanswered already


@dataclass(slots=True)
class PingCounts:
    """Pings one side sent and how the other side answered them."""

    sent: int = 0
    answered: int = 0
    errors: int = 0
    not_empty: int = 0
    late: int = 0
    unanswered: int = 0
    cut_off: int = 0  # pending when the session ended, within the lateness bound: neither answered nor judged
    bad_ids: int = 0
    latencies: deque[float] = field(default_factory=lambda: deque(maxlen=LATENCIES))  # seconds

    def latency_ms(self) -> tuple[float | None, float | None]:
        """(median, max) of the answers' latencies in milliseconds, or Nones."""
        if not self.latencies:
            return None, None
        return statistics.median(self.latencies) * 1000, max(self.latencies) * 1000


class PingJudge:
    """The pings of one session, both ways."""

    def __init__(self, late_after: float, unanswered_after: float) -> None:
        self.late_after = late_after
        self.unanswered_after = unanswered_after
        self.counts = {SERVER: PingCounts(), CLIENT: PingCounts()}  # by the side that sent the pings
        self._pending: dict[str, OrderedDict[tuple[str, Any], _Ping]] = {SERVER: OrderedDict(), CLIENT: OrderedDict()}

    def _violation(
        self, seq: int, side: str, where: str, rule: str, message: str, version: str | None, sent_by: str | None = None
    ) -> Violation:
        """`side` broke `rule` at frame `seq`, which `sent_by` sent (default: `side` itself)."""
        direction = _DIRECTION[sent_by or side]
        return Violation(seq, direction, "ping", where, rule, message, url(version or LATEST_LEGACY, SECTION), side)

    def sent(self, sender: str, message: Any, seq: int, at: float, version: str | None) -> list[Violation]:
        """A ping request (or a frame shaped like one, with an id that is no id) from `sender`."""
        counts = self.counts[sender]
        counts.sent += 1
        request_id = message.get("id") if isinstance(message, dict) else None
        key = id_key(request_id)
        if key is None:
            counts.bad_ids += 1
            shown = clip(json.dumps(request_id, default=str), 60)
            text = (
                f"the {sender} sent a ping whose id is {shown}, neither a string nor an integer: no receiver can answer "
                "it (a request's id MUST be a string or an integer), so the ping goes unanswered by design"
            )
            return [self._violation(seq, sender, "/id", PING_ID, text, version)]
        pending = self._pending[sender]
        pending[key] = _Ping(seq, at, request_id)
        pending.move_to_end(key)
        while len(pending) > PENDING_BOUND:
            pending.popitem(last=False)
        return []

    def is_pending(self, sender: str, key: tuple[str, Any]) -> bool:
        return key in self._pending[sender]

    def cancelled(self, sender: str, key: tuple[str, Any]) -> None:
        """The sender cancelled its ping: no answer is owed."""
        self._pending[sender].pop(key, None)

    def answered(
        self, answerer: str, key: tuple[str, Any], kind: str, message: Any, seq: int, at: float, version: str | None
    ) -> list[Violation]:
        """A reply from `answerer` to a ping of the other side's (`key`: its id)."""
        sender = _OTHER[answerer]
        ping = self._pending[sender].pop(key, None)
        if ping is None:
            return []
        counts = self.counts[sender]
        counts.answered += 1
        latency = max(0.0, at - ping.sent)
        counts.latencies.append(latency)
        found: list[Violation] = []
        whose = f"the {sender}'s ping {clip(json.dumps(ping.id, default=str), 40)}"
        if kind == rpc.ERROR:
            counts.errors += 1
            error = message.get("error") if isinstance(message, dict) else None
            said = f"{error.get('code')} {clip(str(error.get('message', '')), 120)}" if isinstance(error, dict) else "?"
            text = f"the {answerer} answered {whose} with an error ({said}); {MUST}"
            found.append(self._violation(seq, answerer, "/error", PING_ERROR, text, version))
        elif kind == rpc.RESPONSE:
            result = message.get("result")
            extra = {k: v for k, v in result.items() if k != "_meta"} if isinstance(result, dict) else result
            if extra != {}:
                counts.not_empty += 1
                shown = clip(json.dumps(extra, default=str), 120)
                text = f"the {answerer} answered {whose} with a result that is not empty ({shown}); {MUST}"
                found.append(self._violation(seq, answerer, "/result", PING_RESULT, text, version))
        if latency > self.late_after:
            counts.late += 1
            if not ping.judged:  # already reported as unanswered: one violation a ping
                text = f"the {answerer} answered {whose} after {latency:.3f} s (late after {self.late_after:g} s); {MUST}"
                found.append(self._violation(seq, answerer, "", PING_LATE, text, version))
        return found

    def overdue(self, now: float, version: str | None) -> list[Violation]:
        """The pings still unanswered `unanswered_after` seconds after they were sent, judged once."""
        found: list[Violation] = []
        for sender, pending in self._pending.items():
            for ping in pending.values():
                if not ping.judged and now - ping.sent > self.unanswered_after:
                    found.append(self._unanswered(sender, ping, f"within {self.unanswered_after:g} s", version))
        return found

    def end(self, now: float, version: str | None) -> list[Violation]:
        """The session ended at `now`: a ping still waiting is unanswered if it had waited longer
        than `late_after` (it was late already), else cut off by the end (counted, not judged)."""
        found: list[Violation] = []
        for sender, pending in self._pending.items():
            for ping in pending.values():
                if ping.judged:
                    continue
                waited = now - ping.sent
                if waited > self.late_after:
                    found.append(self._unanswered(sender, ping, f"by the session's end ({waited:.3f} s after it)", version))
                else:
                    self.counts[sender].cut_off += 1
            pending.clear()
        return found

    def _unanswered(self, sender: str, ping: _Ping, when: str, version: str | None) -> Violation:
        ping.judged = True
        self.counts[sender].unanswered += 1
        answerer = _OTHER[sender]
        text = f"the {answerer} did not answer the {sender}'s ping {clip(json.dumps(ping.id, default=str), 40)} {when}; {MUST}"
        return self._violation(ping.seq, answerer, "", PING_UNANSWERED, text, version, sent_by=sender)
