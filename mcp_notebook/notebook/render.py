"""Text and HTML renderings of health snapshots and traces, shared by magics and widgets.

Everything a server controls (names, versions, messages, raw frames, stderr) goes
through `esc` (`base.text`) before it lands in HTML: a `<script>` in a tool name comes out as
text; and through `one_line` (or `table_text`, which does it) before it lands in a text
rendering: no escape sequence of the server's reaches a terminal.
Plain functions of plain data: nothing here knows of IPython or ipywidgets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ..api.display.diagram import flavour
from ..base.plural import counted
from ..base.text import ansi_html, clip, esc, one_line, table_text
from ..session.health import CLOSED, CLOSING, CONNECTING, DEGRADED, READY, RECONNECTING, STALE, Health
from ..session.health_view import recovery, turned_away
from ..session.trace import EVENT, IN, OUT, TraceEntry, pair
from .diagram_svg import histogram_svg, spark_svg

STATE_COLOURS = {
    READY: "#2e9e44",
    DEGRADED: "#e0a100",
    STALE: "#d9480f",
    RECONNECTING: "#1c7ed6",
    CONNECTING: "#1c7ed6",
    CLOSING: "#868e96",
    CLOSED: "#868e96",
}
ARROWS = {IN: "←", OUT: "→", EVENT: "·"}
SPARK_BLOCKS = "▁▂▃▄▅▆▇█"


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.3f} ms"


def ago(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return f"{seconds * 1000:.0f} ms ago" if seconds < 1 else f"{seconds:.1f} s ago"


def _last(verb: str, seconds: float | None) -> str:
    return f"none {verb}" if seconds is None else f"{verb} {ago(seconds)}"


def server_label(health: Health) -> str:
    server = health.server_info or {}
    return f"{server.get('name', '-')} {server.get('version', '')}".rstrip()


# ----- sparklines -----


def spark_text(values: Sequence[float], width: int = 40) -> str:
    """A text sparkline of the last `width` values."""
    values = list(values)[-width:]
    if not values:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    return "".join(SPARK_BLOCKS[min(7, int((v - low) / span * 7.999))] for v in values)


# ----- health -----


def health_rows(h: Health) -> list[tuple[str, str]]:
    """(label, plain text value) pairs, the same in the text and HTML renderings."""
    rows = [
        ("protocol", f"{h.era} {h.protocol_version or '-'} ({h.era_source or 'negotiating'})"),
        ("transport", f"{h.transport}  {h.endpoint}"),
        ("server", server_label(h)),
        ("round trip", f"last {ms(h.last_rtt)}, min {ms(h.rtt_min)}, median {ms(h.rtt_median)}, p95 {ms(h.rtt_p95)}"),
        (
            f"our {'pings' if h.probe == 'ping' else 'probes'}",  # modern servers have no ping: we probe liveness
            f"{h.pings_sent} sent, {h.pings_answered} answered, {h.ping_failures} failed ({h.ping_timeouts} timed out)",
        ),
        ("server pings", f"{h.server_pings} received, {h.pongs_sent} answered, {counted(h.pong_failures, 'pong')} lost"),
        ("pong latency", f"last {ms(h.last_pong_latency)}, median {ms(h.pong_latency_median)}, max {ms(h.pong_latency_max)}"),
        (
            "keepalive",
            (
                f"every {h.keepalive_interval:g} s: {counted(h.keepalive_pings, 'ping')}, {h.keepalive_misses} missed in a row, "
                f"{h.keepalive_skips} skipped"
            )
            if h.keepalive and h.keepalive_interval
            else "off",
        ),
        ("last frame", f"{_last('received', h.since_frame_in)}, {_last('sent', h.since_frame_out)}"),
        ("in flight", f"{counted(h.requests_in_flight, 'request')}; {counted(h.invalid_frames, 'invalid frame')}"),
        ("violations", f"{h.violations} (%mcp violations -c {h.name})" if h.violations else "none"),
        ("trace", f"{counted(h.trace_entries, 'entry', 'entries')}, {h.trace_dropped} dropped"),
    ]
    if h.listening is not None:  # the server's way to us between our requests (HTTP)
        rows.insert(2, ("listening", h.listening))
    if h.notifications_dropped or h.requests_refused:
        rows.append(("handlers", turned_away(h)))
    if h.http_keepalive_ticks or h.reconnects or h.session_recoveries:
        rows.append(("recovery", recovery(h)))
    if h.exit_code is not None or h.closed_reason:
        rows.append(("closed", (h.closed_reason or "-") + (f" (exit code {h.exit_code})" if h.exit_code is not None else "")))
    return rows


def health_text(h: Health, stderr: bool = False) -> str:
    """A readable block of lines about one connection (each server-controlled value on one line,
    with no control sequence)."""
    lines = [f"{h.name}: {h.state}" + (f" ({one_line(h.state_reason)})" if h.state_reason else "")]
    lines += [f"  {label:<13}{one_line(value)}" for label, value in health_rows(h)]
    if h.rtt_history:
        scale = f"  {ms(min(h.rtt_history))} .. {ms(max(h.rtt_history))}"
        lines.append(f"  {'rtt history':<13}{spark_text(h.rtt_history)}{scale}")
    if stderr:
        tail = "\n".join(f"    {one_line(line)}" for line in h.stderr_tail)
        lines.append(f"  {'stderr':<13}" + ("\n" + tail if tail else "(none)"))
    elif h.stderr_tail:
        lines.append(f"  {'stderr':<13}{clip(one_line(h.stderr_tail[-1]))}  ({len(h.stderr_tail)} lines kept)")
    return "\n".join(lines)


CELL = 'style="text-align:left;white-space:nowrap;padding:1px 0.8em 1px 0"'  # one line a row: nothing wraps
DASHBOARD_CELL = CELL.replace("0.8em", "0.55em")  # eleven columns in the width of a notebook


def clipped_cell(text: str, max_em: float, tag: str = "td") -> str:
    """A one-line cell at most `max_em` wide, so the table fits the notebook: what does not fit
    ends in an ellipsis, and the whole text shows on hover."""
    style = "text-align:left;white-space:nowrap;padding:1px 0.8em 1px 0;overflow:hidden;text-overflow:ellipsis"
    style += f";max-width:{max_em:g}em"
    return f'<{tag} style="{style}" title="{esc(text)}">{esc(text)}</{tag}>'


def state_light(state: str) -> str:
    colour = STATE_COLOURS.get(state, "#868e96")
    return f'<span style="color:{colour};font-size:1.3em" title="{esc(state)}">●</span>'


def health_html(h: Health) -> str:
    """One connection's health as an HTML block (every server-controlled value escaped)."""
    reason = f' <span style="color:#868e96">({esc(h.state_reason)})</span>' if h.state_reason else ""
    rows = "".join(f"<tr><th {CELL}>{esc(label)}</th>{clipped_cell(value, 44)}</tr>" for label, value in health_rows(h))
    pictures = ""
    if len(h.rtt_history) >= 2:
        pictures = (
            f'<div class="mcp-rtt" style="display:flex;gap:2em;align-items:flex-end;flex-wrap:wrap">'
            f"<div>round trips, oldest to newest<br>{spark_svg(h.rtt_history, 260, 40)}</div>"
            f"<div>round trips by duration<br>{histogram_svg(h.rtt_history)}</div></div>"
        )
    return (
        f'<div class="mcp-health" style="overflow-x:auto">{state_light(h.state)} <b>{esc(h.name)}</b> {esc(h.state)}{reason}'
        f'{pictures}<table style="font-family:monospace;font-size:0.9em;line-height:1.4">{rows}</table></div>'
    )


def pin_warning_html(warning: str | None) -> str:
    """The standing warning of a connection whose tools changed since their pin ("" without one)."""
    if not warning:
        return ""
    return (
        f'<div class="mcp-pin-warning" style="border-left:4px solid #f08c00;padding:2px 8px;color:#d9480f">⚠ {esc(warning)}</div>'
    )


def stderr_html(lines: Iterable[str]) -> str:
    body = "\n".join(ansi_html(line) for line in lines)  # the server's colours, as colours
    return f'<pre style="max-height:16em;overflow:auto">{body or "(no stderr output)"}</pre>'


def dashboard_rows(healths: Sequence[Health]) -> list[list[str]]:
    return [
        [
            h.name,
            h.state,
            f"{h.era} {h.protocol_version or '-'}",
            h.transport,
            server_label(h),
            ms(h.last_rtt),
            f"{h.pings_answered}/{h.pings_sent}",
            f"{h.pongs_sent}/{h.server_pings}",
            str(h.requests_in_flight),
            ago(h.since_frame_in),
        ]
        for h in healths
    ]


DASHBOARD_HEAD = ["name", "state", "protocol", "transport", "server", "last rtt", "pings ok", "pongs", "in flight", "last in"]


def dashboard_text(healths: Sequence[Health]) -> str:
    if not healths:
        return "no open connections"
    return table_text(DASHBOARD_HEAD, [[clip(cell, 40) for cell in row] for row in dashboard_rows(healths)])


def dashboard_html(healths: Sequence[Health]) -> str:
    if not healths:
        return "<i>no open connections</i>"
    head = "".join(f"<th {DASHBOARD_CELL}>{esc(x)}</th>" for x in ["", *DASHBOARD_HEAD, "rtt trend"])
    body = "".join(
        f"<tr><td {DASHBOARD_CELL}>{state_light(h.state)}</td>"
        + "".join(
            clipped_cell(c, 9) if column == "server" else f"<td {DASHBOARD_CELL}>{esc(clip(c, 40))}</td>"
            for column, c in zip(DASHBOARD_HEAD, row, strict=True)
        )
        + f"<td {DASHBOARD_CELL}>{spark_svg(h.rtt_history, 72, 24)}</td></tr>"
        for h, row in zip(healths, dashboard_rows(healths), strict=True)
    )
    style = "font-family:monospace;font-size:0.85em;line-height:1.4"
    return f'<div style="overflow-x:auto"><table class="mcp-dashboard" style="{style}"><tr>{head}</tr>{body}</table></div>'


# ----- traces -----


@dataclass(frozen=True, slots=True)
class Row:
    """One trace entry as a table shows it (plain text; escape before HTML)."""

    seq: int
    time: str
    arrow: str
    kind: str
    method: str
    id: str
    size: str
    latency: str
    flavour: str  # "ping", "pong", "event", "invalid", "error" or ""
    broke: str = ""  # the rules its frame broke (conn.violations), comma-separated


NO_MARKS: Mapping[int, tuple[str, ...]] = MappingProxyType({})
TRACE_HEAD = ["#", "time", "", "kind", "method", "id", "size", "latency"]


def trace_rows(
    entries: Sequence[TraceEntry], context: Sequence[TraceEntry] | None = None, marks: Mapping[int, tuple[str, ...]] = NO_MARKS
) -> list[Row]:
    """Rows for `entries`, replies paired with requests found in `context` (default: `entries`);
    `marks` (`Trace.marks`) names the rules each entry's frame broke."""
    pairs = pair(context if context is not None else entries)
    rows = []
    for e in entries:
        matched = pairs.get(e.seq)
        request = matched[0] if matched else None
        clock = time.strftime("%H:%M:%S", time.localtime(e.wall)) + f".{int(e.wall % 1 * 1000):03d}"
        method = e.method or (request.method if request is not None else None) or (e.note or "" if e.direction == EVENT else "")
        if e.direction == EVENT and e.detail:
            method = (method + " " + " ".join(f"{k}={v}" for k, v in e.detail.items())).strip()
        elif e.detail.get("via"):
            method = f"{method} ({e.detail['via']})".strip()
        rows.append(
            Row(
                seq=e.seq,
                time=clock,
                arrow=ARROWS.get(e.direction, "?"),
                kind=e.kind,
                method=clip(one_line(method), 60),
                id="" if e.id is None else clip(json.dumps(e.id, default=str), 24),
                size=str(e.size) if e.direction != EVENT else "",
                latency=ms(matched[1]) if matched else "",
                flavour=flavour(e, request),
                broke=", ".join(marks.get(e.seq, ())),
            )
        )
    return rows


def row_cells(row: Row) -> list[str]:
    glyph = {"ping": " ♡", "pong": " ♥"}.get(row.flavour, "") + (f" ⚠ {row.broke}" if row.broke else "")
    return [str(row.seq), row.time, row.arrow, row.kind + glyph, row.method, row.id, row.size, row.latency]


def trace_text(
    entries: Sequence[TraceEntry],
    context: Sequence[TraceEntry] | None = None,
    *,
    dropped: int = 0,
    marks: Mapping[int, tuple[str, ...]] = NO_MARKS,
) -> str:
    rows = trace_rows(entries, context, marks)
    if not rows:
        return "(no matching trace entries)"
    tail = f"\n{len(rows)} entries" + (f", {dropped} older ones dropped from the ring buffer" if dropped else "")
    return table_text(TRACE_HEAD, [row_cells(r) for r in rows]) + tail


ROW_STYLES = {
    "ping": "background:#e7f5ff",
    "pong": "background:#ebfbee",
    "event": "color:#868e96",
    "invalid": "background:#fff5f5",
    "error": "background:#fff4e6",
}


def entry_json(e: TraceEntry) -> str:
    """The entry's message pretty-printed (events: their details), as plain text."""
    if e.direction == EVENT:
        return json.dumps({"event": e.kind, "note": e.note, **e.detail}, indent=2, default=str, ensure_ascii=False)
    if e.message is not None:
        return json.dumps(e.message, indent=2, default=str, ensure_ascii=False)
    return e.raw or ""


def trace_html(
    entries: Sequence[TraceEntry],
    context: Sequence[TraceEntry] | None = None,
    *,
    dropped: int = 0,
    json_column: bool = True,
    selected: int | None = None,
    rows: Sequence[Row] | None = None,
    marks: Mapping[int, tuple[str, ...]] = NO_MARKS,
) -> str:
    """A static HTML table; each row's JSON unfolds from a <details> (no script needed).
    Without `json_column` (the live table, which shows the `selected` row's JSON below it),
    it scrolls inside a box that stays at its newest row. `rows`: `trace_rows` already made."""
    rows = trace_rows(entries, context, marks) if rows is None else rows
    head = "".join(f"<th {CELL}>{esc(x)}</th>" for x in [*TRACE_HEAD, *(["JSON"] if json_column else [])])
    body = []
    for e, row in zip(entries, rows, strict=True):
        cells = "".join(
            clipped_cell(c, 18) if column == "method" else f"<td {CELL}>{esc(c)}</td>"
            for column, c in zip(TRACE_HEAD, row_cells(row), strict=True)
        )
        if json_column:
            note = f" ({esc(clip(e.note, 12))})" if e.note and e.direction != EVENT else ""
            cells += (
                f'<td {CELL}><details><summary style="white-space:nowrap">show{note}</summary>'
                f'<pre style="white-space:pre-wrap;max-width:60em">{esc(entry_json(e))}</pre></details></td>'
            )
        mark = ";outline:2px solid #1c7ed6" if row.seq == selected else ";outline:2px solid #e03131" if row.broke else ""
        body.append(f'<tr style="{ROW_STYLES.get(row.flavour, "")}{mark}">{cells}</tr>')
    footer = f"<div>{len(rows)} entries" + (f", {dropped} older ones dropped" if dropped else "") + "</div>"
    style = "font-family:monospace;font-size:0.85em;line-height:1.4"
    table = f'<table class="mcp-trace" style="{style}"><tr>{head}</tr>{"".join(body)}</table>'
    if not json_column:  # column-reverse keeps the scroll position at the bottom, where the newest row is
        box = "max-height:24em;overflow:auto;display:flex;flex-direction:column-reverse"
        return f'<div class="mcp-trace-live" style="{box}"><div>{table}</div></div>'
    return f'<div style="overflow-x:auto">{table}</div>' + footer
