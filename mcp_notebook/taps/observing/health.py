"""How a tapped session is doing: `TapHealth`, a snapshot of plain data, and how it reads.

A snapshot says which era and version the two sides settled on, who they are, how much
crossed each way, what is still waiting for an answer each way, how each side's pings were
answered (`PingStats`: sent, answered, errors, results not empty, late, unanswered, cut off
by the session's end, latency median and max in milliseconds), the violations of each side, what the watcher had to drop,
and whether the session is live or ended. Its displays follow `session.health_view`'s house
style: one line as repr, a few lines in a terminal (server and client text stripped of
control sequences), a table in a notebook (escaped; long values end in an ellipsis).
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import Any

from ...base.plural import counted
from ...base.public import public
from ...base.text import clip, esc, one_line
from ...session.health_view import CELL, STATE_COLOURS, VALUE_WIDTH_EM

LIVE, ENDED = "live", "ended"
_COLOURS = {LIVE: STATE_COLOURS["ready"], ENDED: STATE_COLOURS["closed"]}  # the health view's: green live, grey ended


@dataclass(frozen=True, slots=True)
class PingStats:
    """The pings one side sent and how the other side answered (latencies in milliseconds)."""

    sent: int = 0
    answered: int = 0
    errors: int = 0
    not_empty: int = 0
    late: int = 0
    unanswered: int = 0
    cut_off: int = 0  # still waiting, within the lateness bound, when the session ended: no one's violation
    bad_ids: int = 0
    latency_median_ms: float | None = None
    latency_max_ms: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@public
@dataclass(frozen=True, slots=True, repr=False)
class TapHealth:
    """A snapshot of one tapped session (plain data; `as_dict()` has every field).

    `server_pings` are the pings the server sent and how the client answered them;
    `client_pings` the other way. Frames and bytes are counted as they crossed: `out` is
    client to server, `in` server to client."""

    name: str
    transport: str
    state: str  # "live", or "ended" (the client hung up, the server exited, the tap closed)
    era: str | None
    protocol_version: str | None
    client_info: dict[str, Any] | None
    server_info: dict[str, Any] | None
    frames_out: int = 0
    frames_in: int = 0
    bytes_out: int = 0
    bytes_in: int = 0
    requests_in_flight_out: int = 0  # the client's requests the server has not answered
    requests_in_flight_in: int = 0  # the server's requests the client has not answered
    server_pings: PingStats = field(default_factory=PingStats)
    client_pings: PingStats = field(default_factory=PingStats)
    client_violations: int = 0
    server_violations: int = 0
    dropped: int = 0  # records the watcher could not hand on (DROPPED events)
    unchecked: int = 0  # frames left unchecked: they came faster than the rules ran
    exit_code: int | None = None
    stderr_lines: int = 0
    stderr_tail: tuple[str, ...] = ()
    trace_entries: int = 0
    trace_dropped: int = 0
    started: float | None = None  # wall time of the session's first record
    taken_at: float = field(default_factory=time.time)

    @property
    def violations(self) -> int:
        return self.client_violations + self.server_violations

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__} | {
            "server_pings": self.server_pings.as_dict(),
            "client_pings": self.client_pings.as_dict(),
        }

    def __repr__(self) -> str:
        return f"<TapHealth {self.name!r} {self.state}: {clip(summary(self), 90)}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(text(self))

    def _repr_html_(self) -> str:
        return html(self)


def _who(info: dict[str, Any] | None) -> str:
    info = info or {}
    return f"{info.get('name', '-')} {info.get('version', '')}".rstrip()


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f} ms"


def pings_line(p: PingStats) -> str:
    if not p.sent:
        return "none sent"
    line = f"{p.sent} sent, {p.answered} answered ({p.errors} with an error, {p.not_empty} not empty, {p.late} late), "
    line += f"{p.unanswered} unanswered" + (f", {p.cut_off} cut off by the end" if p.cut_off else "")
    line += f"; latency median {_ms(p.latency_median_ms)}, max {_ms(p.latency_max_ms)}"
    return line + (f"; {counted(p.bad_ids, 'id')} neither string nor integer" if p.bad_ids else "")


def summary(h: TapHealth) -> str:
    era = f"{h.era or 'era not known yet'} {h.protocol_version or ''}".rstrip()
    return (
        f"{_who(h.client_info)} -> {_who(h.server_info)} over {h.transport}, {era}; "
        f"{h.frames_out} frames out, {h.frames_in} in; violations: {h.client_violations} client, {h.server_violations} server"
    )


def rows(h: TapHealth) -> list[tuple[str, str]]:
    """(label, plain value) pairs, the same in text and HTML."""
    found = [
        ("protocol", f"{h.era or '-'} {h.protocol_version or '-'} over {h.transport}"),
        ("client", _who(h.client_info)),
        ("server", _who(h.server_info)),
        ("frames", f"{h.frames_out} out ({h.bytes_out} bytes), {h.frames_in} in ({h.bytes_in} bytes)"),
        (
            "in flight",
            f"{counted(h.requests_in_flight_out, 'request')} of the client's, {h.requests_in_flight_in} of the server's",
        ),
        ("server pings", pings_line(h.server_pings)),
        ("client pings", pings_line(h.client_pings)),
        ("violations", f"{h.client_violations} by the client, {h.server_violations} by the server"),
        ("trace", f"{counted(h.trace_entries, 'entry', 'entries')}, {h.trace_dropped} dropped"),
    ]
    if h.dropped:
        found.append(("dropped", f"{counted(h.dropped, 'record')} the watcher could not hand on"))
    if h.unchecked:
        found.append(("unchecked", f"{counted(h.unchecked, 'frame')} not checked: they came faster than the rules ran"))
    if h.exit_code is not None:
        found.append(("exit", f"the server exited with code {h.exit_code}"))
    return found


def text(h: TapHealth) -> str:
    """A few lines for a terminal: no control sequence of either side's."""
    lines = [f"{one_line(h.name)}: {h.state}"] + [f"  {label:<13}{one_line(value)}" for label, value in rows(h)]
    lines += [f"  stderr       {one_line(line)}" for line in h.stderr_tail]
    return "\n".join(lines)


def html(h: TapHealth) -> str:
    """A table for a notebook: the state's light, a row a line, every value escaped."""
    value = f"{CELL};overflow:hidden;text-overflow:ellipsis;max-width:{VALUE_WIDTH_EM}em"
    cells = "".join(
        f'<tr><th style="{CELL}">{esc(label)}</th><td style="{value}" title="{shown}">{shown}</td></tr>'
        for label, shown in ((label, esc(one_line(shown))) for label, shown in rows(h))
    )
    tail = "\n".join(esc(one_line(line)) for line in h.stderr_tail)
    stderr = f'<pre style="margin:0.3em 0 0 0">{tail}</pre>' if tail else ""
    colour = _COLOURS.get(h.state, STATE_COLOURS["closed"])
    light = f'<span style="color:{colour};font-size:1.3em" title="{esc(h.state)}">●</span>'
    return (
        f'<div class="mcp-tap-health" style="overflow-x:auto">{light} '
        f"<b>{esc(one_line(h.name))}</b> {esc(h.state)}"
        f'<table style="font-family:monospace;font-size:0.9em;line-height:1.4">{cells}</table>{stderr}</div>'
    )
