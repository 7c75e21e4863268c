"""What the health panels show around a health snapshot: the dashboard of every connection (a text
and an HTML table), the round-trip pictures, the pin warning and the stderr tail.

One snapshot by itself is rendered once, by the session layer (`session.health_view`: what
`conn.health` shows, what `%mcp health` shows, what its live widget redraws); nothing here
renders it again. Everything a server controls goes through `esc` before it lands in HTML
and through `clip`/`table_text` (which makes it one line) before it lands in text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ...base.text import ansi_html, clip, esc, table_text
from ...session.health import Health
from ...session.health_view import state_light
from .svg import histogram_svg, spark_svg
from .table import CELL, ago, clipped_cell, ms

DASHBOARD_CELL = CELL.replace("0.8em", "0.55em")  # eleven columns in the width of a notebook


def server_label(health: Health) -> str:
    server = health.server_info or {}
    return f"{server.get('name', '-')} {server.get('version', '')}".rstrip()


def rtt_pictures(history: Sequence[float]) -> str:
    """The round trips as a sparkline and a histogram ("" with fewer than two)."""
    if len(history) < 2:
        return ""
    last = f"round-trip times, last {len(history)}"
    return (  # the titles on one line at the top, whatever each picture's height
        f'<div class="mcp-rtt" style="display:flex;gap:2em;align-items:flex-start;flex-wrap:wrap">'
        f"<div>{last}, oldest to newest<br>{spark_svg(history, 260, 40)}</div>"
        f"<div>{last}, by duration<br>{histogram_svg(history)}</div></div>"
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
