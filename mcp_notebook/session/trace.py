"""The trace: every frame in both directions and the transport events around them.

A bounded ring buffer: it never holds more than `capacity` entries nor more than about
`max_bytes`; the oldest fall out and are counted as dropped. A huge frame is kept as a
clipped copy that still says its size on the wire, and the server's stderr lines have a
small ring of their own, so a flood of either cannot push the frames out or the memory up.
Recording is O(1) (one small object, one append) so the trace can stay on for round-trip
benchmarks. Registered secrets are replaced by "[redacted]" as an entry is recorded, so no
view or export can show them; the session uses the same `Redactor` on errors and text it
hands to people.
"""

from __future__ import annotations

import copy
import functools
import heapq
import itertools
import json
import threading
import time
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple

from ..base.public import public
from ..base.sizes import Ring, bounded, clipped_text, give_back_memory, utf8_size
from .redaction import Redactor
from .trace_file import header, is_header

IN = "in"
OUT = "out"
EVENT = "event"

DEFAULT_CAPACITY = 10_000
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
FRAME_CLIP = 256 * 1024  # characters of a frame's text (and of its parsed message) kept in the trace
ENTRY_COST = 400  # what an entry costs besides its text: the object, its timestamps, its fields
STDERR_ENTRIES = 1000  # server stderr lines kept, in a ring of their own (1/16 of the bytes)
MAX_MARKS = 4096  # marked entries remembered beyond those still in the ring
OWN_RING = frozenset({"stderr"})  # events that could flood: they push out only their own kind
_NO_DETAIL: dict[str, Any] = {}  # shared by every frame entry (frames have no detail): one dict less per frame


@functools.lru_cache(maxsize=256)
def _via_detail(via: str) -> dict[str, Any]:
    """The one shared (never mutated) detail dict of frames read from stream `via`."""
    return {"via": via}


@public
class TraceEntry(NamedTuple):
    """One frame (direction `in` or `out`) or one transport event (direction `event`).

    A named tuple: immutable, and made in a fraction of a frozen dataclass's time, on
    every frame's path."""

    seq: int
    monotonic: float
    wall: float
    direction: str
    kind: str
    method: str | None = None
    id: Any = None
    size: int = 0
    raw: str | None = None
    message: Any = None
    note: str | None = None
    detail: dict[str, Any] = _NO_DETAIL  # shared, never mutated

    def to_record(self) -> dict[str, Any]:
        """A plain dict of the fields; its message and detail are copies, free to change."""
        record = self._asdict()
        record["message"], record["detail"] = copy.deepcopy(self.message), copy.deepcopy(self.detail)
        return record

    @property
    def is_frame(self) -> bool:
        return self.direction != EVENT


@public
class Trace:
    """A bounded, thread-safe timeline of frames and events for one connection.

    `enabled = False` turns frame recording into a near no-op (events are still kept:
    they are rare and carry the state history).
    """

    def __init__(
        self,
        capacity: int = DEFAULT_CAPACITY,
        *,
        max_bytes: int = DEFAULT_MAX_BYTES,
        secrets: Iterable[str] = (),
        enabled: bool = True,
    ) -> None:
        if capacity < 1:
            raise ValueError("a trace needs a capacity of at least 1 (use enabled=False to record no frames)")
        self._ring: Ring[TraceEntry] = Ring(capacity, max_bytes)
        self._stderr: Ring[TraceEntry] = Ring(STDERR_ENTRIES, max(max_bytes // 16, 1))
        self._seq = itertools.count(1)
        self._lock = threading.Lock()
        self.redactor = Redactor(secrets)
        self.enabled = enabled
        self.marks: dict[int, tuple[str, ...]] = {}  # seq -> the rules its frame broke (session.violations)

    @property
    def capacity(self) -> int:
        return self._ring.count

    @property
    def bytes(self) -> int:
        """About how much memory the entries hold."""
        return self._ring.used + self._stderr.used

    @property
    def dropped(self) -> int:
        """Entries that fell out to keep the trace within its bounds."""
        return self._ring.dropped + self._stderr.dropped

    @property
    def last_seq(self) -> int:
        """The seq of the newest entry (0 if none): a cheap change detector for views."""
        return max((ring[-1].seq for ring in (self._ring.items, self._stderr.items) if ring), default=0)

    # ----- recording (any thread; the session thread on the hot path) -----

    def add_secret(self, secret: str) -> None:
        """Redact every later occurrence of `secret` (a token, a password) in the trace."""
        self.redactor.add(secret)

    def redact(self, text: str) -> str:
        """`text` with every registered secret replaced."""
        return self.redactor.text(text) if self.redactor else text

    def _append(self, entry: TraceEntry, cost: int) -> TraceEntry:
        ring = self._stderr if entry.kind in OWN_RING and entry.direction == EVENT else self._ring
        with self._lock:
            ring.add(entry, cost)
        return entry

    def frame(
        self,
        direction: str,
        kind: str,
        raw: str,
        message: Any = None,
        *,
        method: str | None = None,
        id: Any = None,
        note: str | None = None,
        via: str | None = None,
        at: tuple[float, float] | None = None,
    ) -> TraceEntry:
        """Record a frame as it crossed the wire (`via`: the stream it came on, where there are
        several); the entry returned carries its timestamp: now, or `at` (monotonic, wall) when
        someone else saw it cross (a tap's watcher)."""
        if not self.enabled:
            return TraceEntry(0, time.monotonic() if at is None else at[0], 0.0, direction, kind)
        size = utf8_size(raw)
        secrets = self.redactor.secrets
        if secrets and (self.redactor.found_in(raw) or (note is not None and self.redactor.found_in(note))):
            redactor = self.redactor
            raw, message, note = redactor.text(raw), redactor.value(message), note and redactor.text(note)
            method, id = redactor.value(method), redactor.value(id)
        if len(raw) > FRAME_CLIP:  # keep a copy the size of a large frame, saying how large it was
            raw, message = clipped_text(raw, FRAME_CLIP), bounded(message, FRAME_CLIP)[0]
        detail = _NO_DETAIL if via is None else _via_detail(via)
        with self._lock:
            monotonic, wall = (time.monotonic(), time.time()) if at is None else at
            entry = TraceEntry(next(self._seq), monotonic, wall, direction, kind, method, id, size, raw, message, note, detail)
            self._ring.add(entry, ENTRY_COST + 2 * len(raw))  # the text, and about as much again for the parsed message
        return entry

    def event(self, name: str, note: str | None = None, *, at: tuple[float, float] | None = None, **detail: Any) -> TraceEntry:
        """Record a transport or session event (spawn, exit, stderr line, state change, ...), now
        or at `at` (monotonic, wall)."""
        if self.redactor:
            note, detail = (note and self.redactor.text(note)), self.redactor.value(detail)
        if note is not None and len(note) > FRAME_CLIP:
            note = clipped_text(note, FRAME_CLIP)
        cost = ENTRY_COST + len(note or "") + sum(len(v) if isinstance(v, str) else 16 for v in detail.values())
        monotonic, wall = (time.monotonic(), time.time()) if at is None else at
        return self._append(TraceEntry(next(self._seq), monotonic, wall, EVENT, name, note=note, detail=detail), cost)

    def mark(self, seq: int, rule: str) -> None:
        """Note that entry `seq` broke `rule` (the entries themselves are immutable)."""
        with self._lock:
            self.marks[seq] = (*self.marks.get(seq, ()), rule)
            if len(self.marks) > MAX_MARKS and self._ring.items:  # forget the marks of entries dropped
                oldest = self._ring.items[0].seq
                self.marks = {kept: rules for kept, rules in self.marks.items() if kept >= oldest}

    # ----- reading -----

    def entries(self) -> list[TraceEntry]:
        """Every entry, oldest first (the stderr lines merged in by their place in time)."""
        with self._lock:
            kept, stderr = list(self._ring.items), list(self._stderr.items)
        return list(heapq.merge(kept, stderr, key=_seq)) if stderr else kept

    def __iter__(self) -> Iterator[TraceEntry]:
        return iter(self.entries())

    def __len__(self) -> int:
        return len(self._ring) + len(self._stderr)

    def filter(self, **criteria: Any) -> list[TraceEntry]:
        """Entries matching every criterion given: direction, kind, method, id, since, until,
        within, last, frames_only (see `select`)."""
        return select(self.entries(), **criteria)

    def frames(self, direction: str | None = None) -> list[TraceEntry]:
        """Only the frames (no events), optionally in one direction."""
        with self._lock:
            kept = list(self._ring.items)  # no stderr line is a frame
        return [e for e in kept if e.direction != EVENT and (direction is None or e.direction == direction)]

    def pairs(self) -> dict[int, tuple[TraceEntry, float]]:
        """Each reply's seq -> (the request it answers, latency in seconds), within the buffer."""
        return pair(self.entries())

    # ----- export -----

    def to_records(self, **filters: Any) -> list[dict[str, Any]]:
        """Plain dicts (JSON-ready), with `latency` and `reply_to` on replies; takes filter()'s criteria."""
        return records(self.entries(), self.filter(**filters) if filters else None)

    def to_jsonl(self, path: str | Path, **filters: Any) -> int:
        """Write the (filtered) entries as JSON lines after a header line (format, protocol version,
        the redaction note: the file is a cassette, see `mcp_notebook.replay`); returns how many
        entries were written."""
        rows = self.to_records(**filters)
        with open(path, "w", encoding="utf-8") as out:
            session = (entry._asdict() for entry in self.entries()) if filters else rows  # the version: from it all
            out.write(json.dumps(header(session), ensure_ascii=False) + "\n")
            for row in rows:
                out.write(json.dumps(row, default=str, ensure_ascii=False) + "\n")
        return len(rows)

    def to_dataframe(self, **filters: Any) -> Any:
        """A pandas DataFrame of the (filtered) entries; needs pandas (not a dependency)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("Trace.to_dataframe() needs pandas, which is not installed: pip install pandas") from None
        return pd.DataFrame.from_records(self.to_records(**filters), columns=list(RECORD_COLUMNS))

    def clear(self) -> None:
        """Forget every entry, and the memory they held."""
        with self._lock:
            self._ring.clear()
            self._stderr.clear()
            self.marks.clear()
        give_back_memory()

    def __repr__(self) -> str:
        state = "" if self.enabled else ", frames off"
        return f"<Trace {len(self)} entries, {self.dropped} dropped, capacity {self.capacity}{state}>"


RECORD_COLUMNS = (*TraceEntry._fields, "latency", "reply_to")


def _seq(entry: TraceEntry) -> int:
    return entry.seq


def _as_set(value: str | Collection[str] | None) -> Collection[str] | None:
    return (value,) if isinstance(value, str) else value


def select(
    entries: Iterable[TraceEntry],
    *,
    direction: str | Collection[str] | None = None,
    kind: str | Collection[str] | None = None,
    method: str | Collection[str] | None = None,
    id: Any = None,
    since: float | None = None,
    until: float | None = None,
    within: float | None = None,
    last: int | None = None,
    frames_only: bool = False,
) -> list[TraceEntry]:
    """The entries matching every criterion given.

    `direction`, `kind` and `method` take one value or several; a reply matches the method
    of the request it answers. `since`/`until` are `time.monotonic()` values (as in
    `entry.monotonic`); `within` keeps the last that many seconds; `last` the newest N matches.
    """
    directions, kinds, methods = _as_set(direction), _as_set(kind), _as_set(method)
    asked: dict[int, str | None] = {}
    if methods is not None:  # a reply matches the method of the request it answers (pongs: "ping")
        entries = list(entries)
        asked = {seq: request.method for seq, (request, _) in pair(entries).items()}
    if within is not None:
        cutoff = time.monotonic() - within
        since = cutoff if since is None else max(since, cutoff)
    found = [
        e
        for e in entries
        if (directions is None or e.direction in directions)
        and (kinds is None or e.kind in kinds)
        and (methods is None or (e.method or asked.get(e.seq)) in methods)
        and (id is None or (e.id == id and type(e.id) is type(id)))
        and (since is None or e.monotonic >= since)
        and (until is None or e.monotonic <= until)
        and (not frames_only or e.direction != EVENT)
    ]
    return found[-last:] if last else found


def _id_key(value: Any) -> tuple[str, Any] | None:
    return (type(value).__name__, value) if isinstance(value, (int, str)) else None


def pair(entries: Iterable[TraceEntry]) -> dict[int, tuple[TraceEntry, float]]:
    """Match replies to requests: ours with the server's responses, the server's with ours."""
    open_requests: dict[tuple[str, bool, tuple[str, Any]], TraceEntry] = {}
    found: dict[int, tuple[TraceEntry, float]] = {}
    for e in entries:
        if e.direction == EVENT:
            continue
        key = _id_key(e.id)
        if key is None:
            continue
        app = e.detail.get("via") == "app"  # an MCP App's messages: ids of their own
        if e.kind == "request":
            open_requests[(e.direction, app, key)] = e
        elif e.kind in ("response", "error"):
            request = open_requests.pop((OUT if e.direction == IN else IN, app, key), None)
            if request is not None:
                found[e.seq] = (request, e.monotonic - request.monotonic)
    return found


def records(entries: list[TraceEntry], chosen: list[TraceEntry] | None = None) -> list[dict[str, Any]]:
    """Records for `chosen` (default: all of `entries`), paired within `entries`."""
    pairs = pair(entries)
    rows = []
    for e in entries if chosen is None else chosen:
        row = e.to_record()
        matched = pairs.get(e.seq)
        row["latency"] = matched[1] if matched else None
        row["reply_to"] = matched[0].seq if matched else None
        rows.append(row)
    return rows


def load_trace(path: str | Path, capacity: int | None = None) -> Trace:
    """Read a trace written by `Trace.to_jsonl` back into a Trace (filters and exports work)."""
    fields = set(TraceEntry._fields)
    loaded: list[TraceEntry] = []
    with open(path, encoding="utf-8") as source:
        for number, line in enumerate(source, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                if is_header(row):
                    continue
                loaded.append(TraceEntry(**{k: v for k, v in row.items() if k in fields}))
            except (ValueError, TypeError) as exc:
                raise ValueError(f"{path}, line {number}: not a trace record ({exc})") from None
    trace = Trace(max(capacity or 0, len(loaded), 1))
    for entry in loaded:
        trace._append(entry, ENTRY_COST + 2 * len(entry.raw or "") + len(entry.note or ""))
    trace._seq = itertools.count(max((e.seq for e in loaded), default=0) + 1)
    return trace
