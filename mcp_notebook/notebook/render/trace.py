"""Text and HTML renderings of a trace (the frame table of `%mcp trace` and its live widget).

Everything a server controls (names, versions, messages, raw frames, stderr) goes
through `esc` (`base.text`) before it lands in HTML: a `<script>` in a tool name comes out as
text; and through `one_line` (or `table_text`, which does it) before it lands in a text
rendering: no escape sequence of the server's reaches a terminal.
Plain functions of plain data: nothing here knows of IPython or ipywidgets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

from ...api.display.diagram import flavour
from ...base.text import clip, clip_words, esc, one_line, table_text
from ...session.trace import EVENT, IN, OUT, TraceEntry, pair
from .table import CELL, ms, word_clipped_cell

ARROWS = {IN: "←", OUT: "→", EVENT: "·"}
METHOD_CHARS = 30  # the method/detail column in HTML: one line, clipped at a word's end, whole on hover


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
                method=clip_words(one_line(method), 60),
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
            word_clipped_cell(c, METHOD_CHARS) if column == "method" else f"<td {CELL}>{esc(c)}</td>"
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
