"""A connection's server log and resource subscriptions as plain data, text and HTML.

Everything here reads what the session thread recorded in the features' own state (the
server log, `client_side.logs`; subscriptions, `resources.updates`); nothing prints or sends.
The snapshots and records take the connection; the rows take the live store a panel holds.
The live panels that show these (`conn.logs.panel()`) are the front end's: widgets in a
notebook (`notebook.widgets.live`), text elsewhere.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...base.errors import UsageError
from ...base.text import clip, esc, one_line, table_text
from ..calls.core import Featured
from ..calls.progress import LOG_LEVELS
from ..client_side import logs as server_log
from ..client_side.logs import KeptLog
from ..resources import updates as resource_updates
from ..resources.updates import ResourceUpdates

LOG_ROWS = 200  # newest log messages a panel shows (the connection keeps LOG_HISTORY)
MESSAGE_CLIP = 300  # characters of a message shown in a row; longer ones unfold
DETAIL_CLIP = 20_000  # characters of a message shown unfolded
CONTENT_CLIP = 2_000  # characters of a resource's latest content shown
LEVEL_COLOURS = {
    "debug": "#868e96",
    "info": "#1c7ed6",
    "notice": "#0c8599",
    "warning": "#e67700",
    "error": "#e03131",
    "critical": "#c92a2a",
    "alert": "#a61e4d",
    "emergency": "#862e9c",
}
STATE_COLOURS = {"subscribed": "#2e9e44", "unsubscribed": "#868e96", "ended": "#868e96", "not subscribed": "#e67700"}


def clock(wall: float | None, millis: bool = True) -> str:
    """Local wall-clock time of day, `HH:MM:SS.mmm` (or "-")."""
    if wall is None:
        return "-"
    text = time.strftime("%H:%M:%S", time.localtime(wall))
    return text + f".{int(wall % 1 * 1000):03d}" if millis else text


def check_level(level: str | None) -> str | None:
    if level is not None and level not in LOG_LEVELS:
        raise UsageError(f"unknown log level {level!r}; use one of: {', '.join(LOG_LEVELS)}")
    return level


# ----- server log messages -----


@dataclass(frozen=True, slots=True)
class LogRow:
    """One server log message as a panel shows it (plain text: escape before HTML)."""

    wall: float
    level: str
    logger: str
    message: str
    data: Any
    in_cell: bool  # shown in the cell whose call was waiting when it arrived


def message_text(data: Any) -> str:
    return data if isinstance(data, str) else json.dumps(data, default=str, ensure_ascii=False)


def _at_least(level: str, minimum: str | None) -> bool:
    if minimum is None or level not in LOG_LEVELS:
        return True  # a level the spec does not know is never filtered away
    return LOG_LEVELS.index(level) >= LOG_LEVELS.index(minimum)


def log_rows(fx: KeptLog, *, level: str | None = None, unrouted_only: bool = False) -> list[LogRow]:
    """The connection's kept log messages, oldest first, filtered by minimum level and by
    whether a waiting cell already showed them."""
    records, unrouted = list(fx.logs), {id(r) for r in list(fx.unrouted)}
    rows = []
    for r in records:
        in_cell = id(r) not in unrouted
        if (unrouted_only and in_cell) or not _at_least(r.level, level):
            continue
        rows.append(LogRow(r.wall, r.level, r.logger or "", message_text(r.data), r.data, in_cell))
    return rows


def log_key(fx: KeptLog) -> tuple[Any, ...]:
    """Changes whenever a log message is recorded (the deques are bounded, so not their lengths alone)."""
    logs, unrouted = fx.logs, fx.unrouted
    return len(logs), id(logs[-1]) if logs else None, len(unrouted), id(unrouted[-1]) if unrouted else None


def log_record(row: LogRow) -> dict[str, Any]:
    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(row.wall)) + f".{int(row.wall % 1 * 1000):03d}",
        "wall": row.wall,
        "level": row.level,
        "logger": row.logger or None,
        "data": row.data,
        "in_cell": row.in_cell,
    }


LOG_HEAD = ["time", "level", "logger", "message", "where"]


def logs_text(rows: Sequence[LogRow], total: int) -> str:
    if not rows:
        return "(no server log messages)" if not total else f"(none of the {total} server log messages match)"
    table = table_text(
        LOG_HEAD,
        [
            [
                clock(r.wall),
                one_line(clip(r.level, 12)),
                one_line(clip(r.logger, 30)),
                clip(one_line(r.message), 100),
                "cell" if r.in_cell else "-",
            ]
            for r in rows
        ],
    )
    return table + f"\n{len(rows)} of {total} messages; where: cell = shown in the cell that was waiting"


def level_badge(level: str) -> str:
    colour = LEVEL_COLOURS.get(level, "#495057")  # never the server's text inside a style
    return f'<span style="color:{colour};font-weight:bold">{esc(level)}</span>'


def _message_html(text: str) -> str:
    if len(text) <= MESSAGE_CLIP:
        return f'<span style="white-space:pre-wrap">{esc(text)}</span>'
    return (
        f"<details><summary>{esc(clip(text, MESSAGE_CLIP))}</summary>"
        f'<pre style="white-space:pre-wrap">{esc(clip(text, DETAIL_CLIP))}</pre></details>'
    )


def logs_html(rows: Sequence[LogRow], total: int) -> str:
    """A log table that stays scrolled to its newest (bottom) row; every server value escaped."""
    if not rows:
        return f"<i>{esc(logs_text(rows, total))}</i>"
    body = "".join(
        f'<tr style="{"color:#868e96" if r.in_cell else ""}">'
        f'<td style="text-align:left;white-space:nowrap">{esc(clock(r.wall))}</td>'
        f'<td style="text-align:left">{level_badge(r.level)}</td>'
        f'<td style="text-align:left">{esc(clip(r.logger, 40))}</td>'
        f'<td style="text-align:left">{_message_html(r.message)}</td>'
        f'<td style="text-align:left" title="shown in the cell that was waiting when it arrived">'
        f"{'↳ cell' if r.in_cell else ''}</td></tr>"
        for r in rows
    )
    head = "".join(f'<th style="text-align:left">{esc(h)}</th>' for h in LOG_HEAD)
    # column-reverse keeps the scroll position at the bottom, where the newest row is
    return (
        '<div class="mcp-logs" style="max-height:24em;overflow:auto;display:flex;flex-direction:column-reverse">'
        f'<div><table style="font-family:monospace;font-size:0.85em"><tr>{head}</tr>{body}</table></div></div>'
    )


# ----- resource subscriptions -----


@dataclass(frozen=True, slots=True)
class SubscriptionRow:
    """One subscribed (or updated) resource: its state and how many updates arrived."""

    uri: str
    state: str  # "subscribed", "unsubscribed" (seen subscribed, then not) or "not subscribed"
    updates: int
    last_update: float | None


def subscription_rows(
    fx: ResourceUpdates, uris: Iterable[str] | None = None, was_subscribed: Iterable[str] = ()
) -> list[SubscriptionRow]:
    """Every subscription (or just `uris`), then the resources that were subscribed (`was_subscribed`)
    or updated without a subscription, in that order."""
    with fx.lock:
        subscribed = list(fx.subscriptions)
        counts = dict(fx.counts)
    last: dict[str, float] = {}
    for uri, wall in list(fx.updates):
        last[uri] = wall
    earlier, current = set(was_subscribed), set(subscribed)
    wanted = list(uris) if uris is not None else subscribed + sorted((set(counts) | earlier) - current)
    live = "ended" if fx.session.closed else "subscribed"  # a subscription lasts as long as its connection
    return [
        SubscriptionRow(
            uri,
            live if uri in current else "unsubscribed" if uri in earlier else "not subscribed",
            counts.get(uri, 0),
            last.get(uri),
        )
        for uri in wanted
    ]


def subscription_record(row: SubscriptionRow) -> dict[str, Any]:
    return {"uri": row.uri, "subscribed": row.state == "subscribed", "updates": row.updates, "last_update": row.last_update}


SUBSCRIPTION_HEAD = ["uri", "state", "updates", "last update"]


def subscriptions_text(rows: Sequence[SubscriptionRow], contents: dict[str, str] | None = None) -> str:
    if not rows:
        return "(no resource subscriptions)"
    head = SUBSCRIPTION_HEAD + (["content"] if contents is not None else [])
    table = [
        [one_line(clip(r.uri, 60)), r.state, str(r.updates), clock(r.last_update, millis=False)]
        + ([clip(one_line((contents or {}).get(r.uri, "")), 60)] if contents is not None else [])
        for r in rows
    ]
    return table_text(head, table)


def subscriptions_html(rows: Sequence[SubscriptionRow], contents: dict[str, str] | None = None, now: float | None = None) -> str:
    """The subscriptions as an HTML table; `contents` (uri -> latest read, as text) adds a column."""
    if not rows:
        return "<i>(no resource subscriptions)</i>"
    now = time.time() if now is None else now
    pad = "text-align:left;padding:2px 1.2em 2px 0"  # the columns apart: with no padding their headers ran together
    head = "".join(
        f'<th style="{pad};white-space:nowrap">{esc(h)}</th>'
        for h in SUBSCRIPTION_HEAD + (["content"] if contents is not None else [])
    )
    body = []
    for r in rows:
        ago = f" ({max(0.0, now - r.last_update):.0f} s ago)" if r.last_update is not None else ""
        cells = [
            f"<code>{esc(clip(r.uri, 120))}</code>",
            f'<span style="color:{STATE_COLOURS.get(r.state, "#495057")}">{esc(r.state)}</span>',
            esc(r.updates),
            esc(clock(r.last_update, millis=False) + ago),
        ]
        if contents is not None:
            text = contents.get(r.uri, "")
            cells.append(f'<pre style="max-height:12em;overflow:auto;margin:0">{esc(clip(text, CONTENT_CLIP))}</pre>')
        body.append("<tr>" + "".join(f'<td style="{pad};vertical-align:top">{c}</td>' for c in cells) + "</tr>")
    return (
        f'<table class="mcp-subscriptions" style="font-family:monospace;font-size:0.9em"><tr>{head}</tr>{"".join(body)}</table>'
    )


def write_jsonl(records: Iterable[dict[str, Any]], path: str | Path) -> int:
    """Write one JSON object a line; returns how many."""
    written = 0
    with open(path, "w", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, default=str, ensure_ascii=False) + "\n")
            written += 1
    return written


def logs_snapshot(
    conn: Featured, *, last: int = LOG_ROWS, level: str | None = None, unrouted_only: bool = False
) -> tuple[str, str]:
    """(text, html) of the connection's newest `last` matching log messages, now."""
    kept = server_log.of(conn)
    rows = log_rows(kept, level=check_level(level), unrouted_only=unrouted_only)[-last:]
    return f"{conn.name}: {logs_text(rows, len(kept.logs))}", logs_html(rows, len(kept.logs))


def subscriptions_snapshot(conn: Featured) -> tuple[str, str]:
    """(text, html) of the connection's subscriptions, now."""
    rows = subscription_rows(resource_updates.of(conn))
    return f"{conn.name}: {subscriptions_text(rows)}", subscriptions_html(rows)


def log_records(
    conn: Featured, *, last: int | None = None, level: str | None = None, unrouted_only: bool = False
) -> list[dict[str, Any]]:
    rows = log_rows(server_log.of(conn), level=check_level(level), unrouted_only=unrouted_only)
    return [log_record(r) for r in (rows[-last:] if last else rows)]


def subscription_records(conn: Featured) -> list[dict[str, Any]]:
    return [subscription_record(r) for r in subscription_rows(resource_updates.of(conn))]
