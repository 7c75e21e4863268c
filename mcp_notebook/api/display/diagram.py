"""The conversation as a sequence diagram, in plain data: who said what to whom, when.

`build` turns trace entries into one `Step` per frame (an arrow between the client's and
the server's lane) or transport event (a note at the side), with each reply joined to the
request it answers and the latency between them, and pings and pongs told apart. `Diagram`
holds the steps and renders itself as text; pictures are the front end's (`display.frontend`
asks it through `draw_diagram`), so this module neither escapes nor draws: every label is
the server's plain text, one line each. `histogram` bins round trips the same way.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...base.public import public
from ...base.text import clip, one_line
from ...session.trace import EVENT, IN, OUT, TraceEntry, pair, select
from . import frontend

CLIENT = "client"
SERVER = "server"
DIAGRAM_ROWS = 60  # newest entries a diagram shows unless asked for more
LABEL_CLIP = 48


@dataclass(frozen=True, slots=True)
class Step:
    """One row of the diagram: an arrow (`source` -> `target`) or an event (no lanes)."""

    seq: int
    at: float  # seconds since the first row
    source: str | None  # CLIENT or SERVER; None for an event
    target: str | None
    kind: str  # the entry's kind: request, notification, response, error, invalid, batch, or the event's name
    label: str  # plain text, one line
    flavour: str = ""  # "ping", "pong", "error", "invalid", "event" or ""
    reply_to: int | None = None  # the seq of the request this reply answers
    latency: float | None = None  # seconds from that request to this reply
    size: int = 0

    @property
    def is_event(self) -> bool:
        return self.source is None


@public
@dataclass(frozen=True, slots=True)
class Diagram:
    """A sequence diagram of part of a connection's trace (displays as a picture in Jupyter)."""

    name: str
    steps: tuple[Step, ...]
    total: int  # entries the trace held when the diagram was built
    dropped: int = 0
    start_wall: float | None = None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def arrows(self) -> list[Step]:
        return [s for s in self.steps if not s.is_event]

    @property
    def events(self) -> list[Step]:
        return [s for s in self.steps if s.is_event]

    @property
    def replies(self) -> list[Step]:
        return [s for s in self.steps if s.reply_to is not None]

    def caption(self) -> str:
        older = f", {self.dropped} older dropped" if self.dropped else ""
        return f"{self.name}: {len(self.arrows)} frames and {len(self.events)} events of {self.total} entries{older}"

    def text(self) -> str:
        """One line a row: time, the arrow between the lanes, the label, the latency."""
        lines = [self.caption(), f"{'ms':>9}  client        server"]
        for s in self.steps:
            if s.is_event:
                lines.append(f"{s.at * 1000:9.1f}  {'':22}· {s.label}")
                continue
            arrow = "──────────▶" if s.source == CLIENT else "◀──────────"
            latency = f"  ({s.latency * 1000:.3f} ms)" if s.latency is not None else ""
            lines.append(f"{s.at * 1000:9.1f}  │ {arrow} │  {s.label}{latency}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Diagram {self.caption()}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return frontend.current().draw_diagram(self)

    def _repr_html_(self) -> str | None:
        return self._repr_mimebundle_().get("text/html")

    def _repr_svg_(self) -> str | None:
        return self._repr_mimebundle_().get("image/svg+xml")


def flavour(e: TraceEntry, request: TraceEntry | None = None) -> str:
    """How a frame stands out: pings and pongs (a reply paired with a ping), events, failures."""
    if e.direction == EVENT:
        return "event"
    if e.kind in ("invalid", "error"):
        return e.kind
    if e.kind == "request" and e.method == "ping":
        return "ping"
    if e.kind == "response" and (e.note == "pong" or (request is not None and request.method == "ping")):
        return "pong"
    return ""


def _event_label(e: TraceEntry) -> str:
    if e.kind == "state" and e.detail.get("state"):
        text = f"state {e.detail['state']}" + (f": {e.note}" if e.note else "")
    elif e.kind == "stderr" and "line" in e.detail:
        text = f"stderr: {e.detail['line']}"
    else:
        details = " ".join(f"{k}={v}" for k, v in e.detail.items() if k != "state")
        text = " ".join(part for part in (e.kind, e.note or "", details) if part)
    return clip(one_line(text), LABEL_CLIP * 2)


def _frame_label(e: TraceEntry, request: TraceEntry | None) -> str:
    ident = "" if e.id is None else f" #{clip(json.dumps(e.id, default=str), 16)}"
    if e.kind in ("response", "error"):
        asked = request.method if request is not None else None
        word = "error" if e.kind == "error" else ("pong" if asked == "ping" else "result")
        text = f"{word}{ident}" + (f" ({asked})" if asked and asked != "ping" else "")
    elif e.kind == "invalid":
        text = "invalid frame" + (f": {e.note}" if e.note else f" ({e.size} bytes)")
    else:
        text = f"{e.method or e.kind}{ident}"
    return clip(one_line(text), LABEL_CLIP)


def steps_of(entries: Sequence[TraceEntry], context: Sequence[TraceEntry] | None = None) -> list[Step]:
    """A step for each entry, replies joined to requests found in `context` (default: `entries`)."""
    pairs = pair(context if context is not None else entries)
    start = entries[0].monotonic if entries else 0.0
    steps = []
    for e in entries:
        at = max(0.0, e.monotonic - start)
        if e.direction == EVENT:
            steps.append(Step(e.seq, at, None, None, e.kind, _event_label(e), "event"))
            continue
        matched = pairs.get(e.seq)
        request = matched[0] if matched else None
        source, target = (CLIENT, SERVER) if e.direction == OUT else (SERVER, CLIENT)
        steps.append(
            Step(
                e.seq,
                at,
                source,
                target,
                e.kind,
                _frame_label(e, request),
                flavour(e, request),
                request.seq if request is not None else None,
                matched[1] if matched else None,
                e.size,
            )
        )
    return steps


def build(name: str, trace: Any, *, last: int | None = DIAGRAM_ROWS, events: bool = True, **filters: Any) -> Diagram:
    """The diagram of `trace`'s newest `last` entries matching `filters` (those of `select`);
    `events=False` leaves the transport events out."""
    entries = trace.entries()
    chosen = select(entries, last=None, **filters)
    if not events:
        chosen = [e for e in chosen if e.direction != EVENT]
    chosen = chosen[-last:] if last else chosen
    wall = chosen[0].wall if chosen else None
    options = {"last": last, "events": events, **filters}
    return Diagram(name, tuple(steps_of(chosen, entries)), len(entries), getattr(trace, "dropped", 0), wall, options)


# ----- round-trip histograms -----


@dataclass(frozen=True, slots=True)
class Bin:
    low: float
    high: float
    count: int


def histogram(values: Sequence[float], bins: int = 12) -> list[Bin]:
    """`values` in `bins` equal-width bins from their minimum to their maximum (none if empty)."""
    values = [float(v) for v in values]
    if not values:
        return []
    low, high = min(values), max(values)
    if high == low:
        return [Bin(low, high, len(values))]
    width = (high - low) / bins
    counts = [0] * bins
    for v in values:
        counts[min(bins - 1, int((v - low) / width))] += 1
    return [Bin(low + i * width, high if i == bins - 1 else low + (i + 1) * width, n) for i, n in enumerate(counts)]


__all__ = ["CLIENT", "IN", "OUT", "SERVER", "Bin", "Diagram", "Step", "build", "flavour", "histogram", "steps_of"]
