"""A cassette read into exchanges: each client frame with the server's reply and the frames
the server sent around it.

Each request or notification the client sent is one `Exchange`. The server frames that
came after it (until the client's next frame) belong to it: those before its reply are
`during` (progress, a sampling request, a log line), those after are `after` (a list-changed
notification following the call that changed the list). The client's pings are exchanges too,
but nothing is attached to them: a keepalive ping lands anywhere. The client's answers to
server requests are kept by the server request they answer, so a replay waits for the live
client's answer where the recorded one came, and a comparison answers a live server's
request the way the recorded client did.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.about import TRACE_FORMAT
from ..base.text import plain
from ..protocol import jsonrpc as rpc

CLIPPED = re.compile(r"\.\.\. \[clipped: [\d,]+ characters\]$")  # how the trace ends a frame too large to keep
HANDSHAKE = frozenset({"initialize", "server/discover"})


class CassetteError(ValueError):
    """The file is not a cassette (not a trace written by `Trace.to_jsonl`)."""


@dataclass
class ServerFrame:
    """A request or notification the server sent; `answer` is the client's reply to a request."""

    message: dict[str, Any]
    answer: dict[str, Any] | None = None

    @property
    def is_request(self) -> bool:
        return "id" in self.message and "method" in self.message


@dataclass
class Exchange:
    """One client frame as recorded, and what the server did around it."""

    index: int  # its place among the client's frames
    message: dict[str, Any]
    reply: dict[str, Any] | None = None  # the server's response or error (requests only)
    during: list[ServerFrame] = field(default_factory=list)
    after: list[ServerFrame] = field(default_factory=list)

    @property
    def method(self) -> str:
        return str(self.message.get("method"))

    @property
    def is_request(self) -> bool:
        return "id" in self.message

    @property
    def params(self) -> dict[str, Any]:
        return rpc.params_of(self.message)

    @property
    def meta(self) -> dict[str, Any]:
        return rpc.meta_of(self.message)

    def bare_params(self) -> dict[str, Any]:
        """The params without `_meta` (ours differ per run: progress tokens, modern declarations)."""
        return {key: value for key, value in self.params.items() if key != "_meta"}


@dataclass
class Tape:
    """A whole cassette: its header and its exchanges in the order the client sent them."""

    header: dict[str, Any]
    exchanges: list[Exchange]
    clipped: int = 0  # frames too large to have been kept whole: they replay clipped

    @property
    def era(self) -> str | None:
        era = self.header.get("era")
        if isinstance(era, str):
            return era
        if any(e.method == "initialize" and e.reply and "result" in e.reply for e in self.exchanges):
            return "legacy"
        return None

    def requests(self) -> list[Exchange]:
        return [e for e in self.exchanges if e.is_request]

    def handshake(self) -> Exchange | None:
        """The exchange that set the session up: a successful initialize or server/discover."""
        for exchange in self.exchanges:
            if exchange.method in HANDSHAKE and exchange.reply is not None and "result" in exchange.reply:
                return exchange
        return None

    def answers(self) -> dict[str, list[dict[str, Any]]]:
        """The recorded client's replies to server requests, by the request's method, in order."""
        found: dict[str, list[dict[str, Any]]] = {}
        for exchange in self.exchanges:
            for frame in (*exchange.during, *exchange.after):
                if frame.is_request and frame.answer is not None:
                    found.setdefault(str(frame.message["method"]), []).append(frame.answer)
        return found


def _key(value: Any) -> str:
    return json.dumps(value)


def load(path: str | Path) -> Tape:
    """Read a cassette (a trace written by `Trace.to_jsonl`); CassetteError if it is not one."""
    header: dict[str, Any] = {}
    rows: list[dict[str, Any]] = []
    where = plain(path)  # a file name is anyone's text: shown without its escape sequences
    try:
        with open(path, "rb") as source:
            for number, line in enumerate(source, 1):
                if not line.strip():
                    continue
                try:
                    row = json.loads(line.decode("utf-8"))
                except ValueError as exc:  # not UTF-8 either
                    raise CassetteError(f"{where}, line {number}: not JSON ({plain(exc)})") from None
                if not isinstance(row, dict):
                    raise CassetteError(f"{where}, line {number}: not a trace record")
                if row.get("format") == TRACE_FORMAT:
                    header = row
                elif "direction" in row:
                    rows.append(row)
                else:
                    raise CassetteError(f"{where}, line {number}: not a trace record")
    except OSError as exc:
        raise CassetteError(f"cannot read the cassette {where}: {plain(exc.strerror or exc)}") from None
    return build(header, rows)


class _Builder:
    """Folds trace records, oldest first, into a Tape."""

    def __init__(self, tape: Tape) -> None:
        self.tape = tape
        self.open_requests: dict[str, Exchange] = {}  # our request id -> its exchange, until answered
        self.server_requests: dict[str, ServerFrame] = {}  # the server's request id -> its frame, until answered
        self.current: Exchange | None = None  # where server frames are attached

    def client(self, message: dict[str, Any]) -> None:
        if "method" not in message:  # our answer to a server request
            frame = self.server_requests.pop(_key(message.get("id")), None)
            if frame is not None:
                frame.answer = message
            return
        exchange = Exchange(len(self.tape.exchanges), message)
        self.tape.exchanges.append(exchange)
        if exchange.is_request:
            self.open_requests[_key(message["id"])] = exchange
        if exchange.method != "ping":
            self.current = exchange

    def server(self, message: dict[str, Any]) -> None:
        if "method" not in message:  # the reply to one of ours
            answered = self.open_requests.pop(_key(message.get("id")), None)
            if answered is not None:
                answered.reply = message
            return
        frame = ServerFrame(message)
        if frame.is_request:
            self.server_requests[_key(message["id"])] = frame
        current = self.current
        if current is not None:  # (before the client's first frame there is nothing to play it after)
            waiting = current.is_request and current.reply is None
            (current.during if waiting else current.after).append(frame)


def build(header: dict[str, Any], rows: list[dict[str, Any]]) -> Tape:
    """The exchanges of trace records (oldest first)."""
    builder = _Builder(Tape(header, []))
    for row in rows:
        message = row.get("message")
        if row.get("direction") not in ("in", "out") or not isinstance(message, dict):
            continue
        if isinstance(row.get("raw"), str) and CLIPPED.search(row["raw"]):
            builder.tape.clipped += 1
        (builder.client if row["direction"] == "out" else builder.server)(message)
    return builder.tape
