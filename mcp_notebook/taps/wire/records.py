"""What a tap saw, one record at a time: the contract between what watches a session (the stdio
relay, `python -m mcp_notebook.tap`, or the HTTP reverse proxy) and the notebook that shows it.

A record is one frame as it crossed (its exact bytes, without the stdio line end), one line of
the server's stderr, or one event of the watcher (the session began, the server exited, records
were dropped). Records travel as JSON lines, to the notebook and into the on-disk recording;
bytes that are not UTF-8 travel as base64, so a record decodes to exactly the bytes that crossed.
This module knows nothing of MCP and imports nothing of ours: the relay, which a client starts
for every session, must start fast.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

CLIENT = "client"  # a frame the client sent to the server
SERVER = "server"  # a frame the server sent to the client
STDERR = "stderr"  # a line the server wrote to its stderr
EVENT = "event"  # something the watcher saw happen: `name` says what, `detail` the rest
SIDES = (CLIENT, SERVER, STDERR, EVENT)

# Event names (a record of side EVENT):
HELLO = "hello"  # the first record of every session: detail {session, name, transport, argv, pid, started}
# (HTTP: {session, transport, url (redacted), http (the method that opened it), started, via if "legacy-sse"})
EXIT = "exit"  # the server process ended: detail {code}
DROPPED = "dropped"  # records the watcher could not hand on: detail {count} (the relayed session was never slowed)
CLOSED = "closed"  # the session ended (the client hung up, or the HTTP session was deleted)

# Keys of a frame record's `detail` the notebook reads, besides the HTTP ones (session, http, status, via, event_id):
PROTOCOL_VERSION = "protocol_version"  # HTTP: the MCP-Protocol-Version header of the client's request
CLIPPED = "clipped"  # true: `data` is the frame's start only (too long to record whole); "size" then says its length
SIZE = "size"  # the frame's length in bytes as it crossed, where `data` is not all of it

MAX_RECORD_BYTES = 64 * 1024 * 1024  # a line longer than this is not a record (a reader's bound)


@dataclass(frozen=True, slots=True)
class Record:
    """One thing a tap saw. `wall` and `monotonic` are the watcher's clocks when it read the
    bytes (on one machine, `time.monotonic()` is the same clock in every process).

    A frame larger than its watcher's bound is recorded clipped: `data` holds its first bytes and
    `detail["size"]` its full size in bytes (absent when the frame is whole)."""

    seq: int
    side: str
    wall: float
    monotonic: float
    data: bytes = b""
    name: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_frame(self) -> bool:
        return self.side in (CLIENT, SERVER)

    @property
    def text(self) -> str:
        """The bytes as text (invalid UTF-8 replaced)."""
        return self.data.decode("utf-8", "replace")


def encode(record: Record) -> bytes:
    """One JSON line, ending in a newline."""
    out: dict[str, Any] = {"seq": record.seq, "side": record.side, "wall": record.wall, "mono": record.monotonic}
    try:
        out["data"] = record.data.decode("utf-8")
    except UnicodeDecodeError:
        out["b64"] = base64.b64encode(record.data).decode("ascii")
    if record.name:
        out["name"] = record.name
    if record.detail:
        out["detail"] = dict(record.detail)
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"


def decode(line: bytes | str) -> Record:
    """The record a line of `encode` holds; ValueError for anything else."""
    if len(line) > MAX_RECORD_BYTES:
        raise ValueError(f"a record line of {len(line)} bytes, over the bound of {MAX_RECORD_BYTES}")
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not a record: {exc}") from None
    if not isinstance(raw, dict) or raw.get("side") not in SIDES or not isinstance(raw.get("seq"), int):
        raise ValueError("not a record: it needs an integer seq and a side of " + ", ".join(SIDES))
    if "b64" in raw:
        data = base64.b64decode(str(raw["b64"]), validate=True)
    else:
        data = str(raw.get("data", "")).encode("utf-8")
    detail = raw.get("detail") or {}
    if not isinstance(detail, dict):
        raise ValueError("not a record: its detail is not an object")
    return Record(
        raw["seq"], raw["side"], float(raw.get("wall", 0.0)), float(raw.get("mono", 0.0)), data, str(raw.get("name", "")), detail
    )
