"""Which recorded exchange answers a live request.

Modes: "params" (default) wants the same method and params (`_meta` aside: progress tokens
and a modern request's declarations differ per run); "method" takes the next recording of
the method, whatever its params; "order" wants the next recorded request, in order, to be of
the same method. The handshake (initialize, server/discover) is always matched by method: a
client's name and capabilities need not be the recorded one's. A recording is used once
while unused ones match; after that the last one matched answers again, so a notebook cell
run twice still replays. A request nothing answers is a `Miss`, naming the closest recording.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from .tape import HANDSHAKE, Exchange, Tape

MATCH_MODES = ("params", "method", "order")
CLOSEST_TEXT = 200  # characters of the closest recording shown in an error


@dataclass(frozen=True)
class Miss:
    """No recording answers: why, and the closest recorded request (if any)."""

    reason: str
    closest: Exchange | None

    def describe(self) -> str:
        if self.closest is None:
            return self.reason
        return f"{self.reason}; the closest recorded request is {summary(self.closest)}"


def summary(exchange: Exchange) -> str:
    text = f"{exchange.method} {json.dumps(exchange.bare_params(), sort_keys=True)}"
    return text if len(text) <= CLOSEST_TEXT else text[: CLOSEST_TEXT - 1] + "…"


def _canonical(method: str, params: dict[str, Any]) -> str:
    return json.dumps([method, params], sort_keys=True, default=str)


def bare(params: Any) -> dict[str, Any]:
    return {k: v for k, v in params.items() if k != "_meta"} if isinstance(params, dict) else {}


class Matcher:
    def __init__(self, tape: Tape, mode: str = "params") -> None:
        if mode not in MATCH_MODES:
            raise ValueError(f"match must be one of {MATCH_MODES}, not {mode!r}")
        self.mode = mode
        self.requests = [e for e in tape.requests() if e.method != "ping"]  # a keepalive's: not part of the session
        self.notifications = [e for e in tape.exchanges if not e.is_request]
        self._used: set[int] = set()
        self._last: dict[str, Exchange] = {}  # a match key -> the recording that answered it last
        self._next = 0  # "order": the next recording expected

    def request(self, method: str, params: Any) -> Exchange | Miss:
        """The recording that answers this request, or a Miss."""
        wanted = bare(params)
        if method in HANDSHAKE:
            return self._pick(method, [e for e in self.requests if e.method == method], method)
        if self.mode == "order":
            return self._in_order(method, wanted)
        same_method = [e for e in self.requests if e.method == method]
        if self.mode == "method":
            return self._pick(method, same_method, method)
        key = _canonical(method, wanted)
        return self._pick(method, [e for e in same_method if _canonical(e.method, e.bare_params()) == key], key, wanted)

    def notification(self, method: str) -> Exchange | None:
        """The recorded client notification of this method to play what followed it (once each)."""
        for exchange in self.notifications:
            if exchange.method == method and exchange.index not in self._used:
                self._used.add(exchange.index)
                return exchange
        return None

    def _pick(self, method: str, candidates: list[Exchange], key: str, params: Any = None) -> Exchange | Miss:
        for exchange in candidates:
            if exchange.index not in self._used:
                self._used.add(exchange.index)
                self._last[key] = exchange
                return exchange
        if key in self._last:
            return self._last[key]
        if candidates:  # used already, under another key (cannot happen for these modes; be safe)
            return candidates[-1]
        if any(e.method == method for e in self.requests):
            reason = f"no recorded {method} with these params"
        else:
            reason = f"no {method} request was recorded"
        return Miss(reason, self.closest(method, params or {}))

    def _in_order(self, method: str, params: dict[str, Any]) -> Exchange | Miss:
        pending = [e for e in self.requests[self._next :] if e.method not in HANDSHAKE]
        if not pending:
            return Miss(f"the recording has no request left after {self._next} (match='order')", self.closest(method, params))
        expected = pending[0]
        if expected.method != method:
            return Miss(f"the next recorded request is {expected.method}, not {method} (match='order')", expected)
        self._next = self.requests.index(expected) + 1
        return expected

    def closest(self, method: str, params: dict[str, Any]) -> Exchange | None:
        """The recorded request most like this one: its method counts most, then its params."""
        if not self.requests:
            return None
        wanted = _canonical(method, params)

        def likeness(exchange: Exchange) -> float:
            text = _canonical(exchange.method, exchange.bare_params())
            method_alike = difflib.SequenceMatcher(None, method, exchange.method).ratio()
            return 2 * method_alike + difflib.SequenceMatcher(None, wanted, text).ratio()

        return max(self.requests, key=likeness)
