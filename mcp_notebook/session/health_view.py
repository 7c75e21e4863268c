"""How a health snapshot reads by itself: the words of its repr, its text and HTML displays,
the era in a few words, and how a closed connection ended.

Functions of a `session.health.Health` (which imports this module, so it is not named
here). Server text goes through `plain`/`one_line` in text and `esc`/`ansi_html` in HTML.
This is the one rendering of a snapshot: what `conn.health` shows as a cell's value, what
`%mcp health` prints or displays, and what its live widget redraws (which adds round-trip
pictures and the stderr tail around it, `notebook.render.dashboard`).
"""

from __future__ import annotations

import time
from typing import Any

from ..base.plural import counted
from ..base.text import ansi_html, esc, one_line

STDERR_SHOWN = 5  # last stderr lines in a display
# The state's light: green ready, amber degraded, red stale, blue on the way, grey closed.
STATE_COLOURS = {
    "ready": "#2e9e44",
    "degraded": "#e0a100",
    "stale": "#d9480f",
    "reconnecting": "#1c7ed6",
    "connecting": "#1c7ed6",
    "closing": "#868e96",
    "closed": "#868e96",
}
CELL = "text-align:left;white-space:nowrap;padding:1px 0.8em 1px 0"  # one line a row: nothing wraps
VALUE_WIDTH_EM = 44  # a longer value ends in an ellipsis; the whole of it shows on hover


def state_light(state: str) -> str:
    colour = STATE_COLOURS.get(state, "#868e96")
    return f'<span style="color:{colour};font-size:1.3em" title="{esc(state)}">●</span>'


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.3f} ms"


def era_phrase(h: Any) -> str:
    """The era and version in words, e.g. "legacy server (2025-11-25)"; how it was chosen is
    left to `%mcp status`."""
    return f"{h.era} server ({one_line(h.protocol_version or '?')})"


def status_line(h: Any) -> str:
    """The connection in one line, as `%mcp connect` shows it: its server, transport and era while
    it is up, its state when that is not ready, how it ended once closed."""
    server = h.server_info or {}
    who = f"{one_line(server.get('name', '?'))} {one_line(server.get('version', ''))}".rstrip()
    if h.state == "closed":
        return f"closed {h.name!r}: {who} over {h.transport}; {ended(h)}"
    state = "" if h.state == "ready" else f" ({h.state})"
    return f"connected {h.name!r}{state}: {who} over {h.transport}, {era_phrase(h)}"


def probes_word(h: Any) -> str:
    """What our pings are on this connection: modern servers have no ping, we probe liveness."""
    return f"{h.probe}s"


def ended(h: Any, now: float | None = None) -> str | None:
    """How and when a closed connection ended, on one line; None while it is not closed."""
    if h.state != "closed":
        return None
    reason = one_line(h.closed_reason or "closed")
    if h.exit_code is not None and str(h.exit_code) not in reason:
        reason += f" (exit code {h.exit_code})"
    if h.closed_at is None:
        return reason
    ago = max(0.0, (time.time() if now is None else now) - h.closed_at)
    return f"{reason}, at {time.strftime('%H:%M:%S', time.localtime(h.closed_at))} ({ago:.0f} s ago)"


def turned_away(h: Any) -> str:
    """What of the server's was turned away while its handlers' tasks were full (`user_handlers`)."""
    return (
        f"{counted(h.notifications_dropped, 'notification')} dropped, {counted(h.requests_refused, 'request')} "
        "answered 'busy': their handlers were behind"
    )


def summary(h: Any) -> str:
    """The repr's words: how it ended, or its era, transport and last round trip."""
    if h.state == "closed":
        return ended(h) or "closed"
    rtt = "not pinged yet" if h.last_rtt is None else f"rtt {_ms(h.last_rtt)}"
    return f"{h.era} {h.protocol_version or '?'} over {h.transport}, {rtt}"


def _last(verb: str, seconds: float | None) -> str:
    if seconds is None:
        return f"none {verb}"
    return f"{verb} {seconds * 1000:.0f} ms ago" if seconds < 1 else f"{verb} {seconds:.1f} s ago"


def _keepalive(h: Any) -> str:
    if not (h.keepalive and h.keepalive_interval):
        return "off"
    return (
        f"every {h.keepalive_interval:g} s: {counted(h.keepalive_pings, 'ping')}, {h.keepalive_misses} missed in a row, "
        f"{h.keepalive_skips} skipped"
    )


def rows(h: Any) -> list[tuple[str, str]]:
    """(label, plain value) pairs, the same in text and HTML."""
    server = h.server_info or {}
    found = [
        ("protocol", f"{h.era} {h.protocol_version or '-'} over {h.transport} ({h.era_source or '-'})"),
        ("server", f"{server.get('name', '-')} {server.get('version', '')}".rstrip()),
        ("endpoint", h.endpoint),
        ("round trip", f"last {_ms(h.last_rtt)}, min {_ms(h.rtt_min)}, median {_ms(h.rtt_median)}, p95 {_ms(h.rtt_p95)}"),
        (
            f"our {'pings' if h.probe == 'ping' else 'probes'}",  # modern servers have no ping: we probe liveness
            f"{h.pings_sent} sent, {h.pings_answered} answered, {h.ping_failures} failed ({h.ping_timeouts} timed out)",
        ),
        ("server pings", f"{h.server_pings} received, {h.pongs_sent} answered, {counted(h.pong_failures, 'pong')} lost"),
        ("pong latency", f"last {_ms(h.last_pong_latency)}, median {_ms(h.pong_latency_median)}, max {_ms(h.pong_latency_max)}"),
        ("keepalive", _keepalive(h)),
        ("last frame", f"{_last('received', h.since_frame_in)}, {_last('sent', h.since_frame_out)}"),
        ("in flight", f"{counted(h.requests_in_flight, 'request')}; {counted(h.invalid_frames, 'invalid frame')}"),
        ("trace", f"{counted(h.trace_entries, 'entry', 'entries')}, {h.trace_dropped} dropped"),
    ]
    if h.listening is not None:  # the server's way to us between our requests (HTTP)
        found.append(("listening", h.listening))
    if h.notifications_dropped or h.requests_refused:
        found.append(("handlers", turned_away(h)))
    if h.http_keepalive_ticks or h.reconnects or h.session_recoveries:
        found.append(("recovery", recovery(h)))
    if h.restarts:
        found.append(("restarts", f"{counted(h.restarts, 'server restart')} under this connection (conn.reconnect)"))
    if h.violations:
        found.append(("violations", f"{h.violations}: conn.violations, %mcp violations -c {h.name}"))
    if h.state == "closed":
        found.append(("closed", ended(h) or "-"))
    return found


def recovery(h: Any) -> str:
    """What an HTTP connection did to stay up: keepalive ticks, SSE streams resumed, sessions recovered."""
    return (
        f"{counted(h.http_keepalive_ticks, 'keepalive tick')}, {counted(h.reconnects, 'reconnect')}, "
        f"{counted(h.session_recoveries, 'session recovery', 'session recoveries')}"
    )


def text(h: Any) -> str:
    """A few lines for a terminal (`_repr_pretty_`): no control sequence of the server's."""
    reason = f" ({one_line(h.state_reason)})" if h.state_reason and h.state != "closed" else ""
    lines = [f"{h.name}: {h.state}{reason}"] + [f"  {label:<13}{one_line(value)}" for label, value in rows(h)]
    lines += [f"  stderr       {one_line(line)}" for line in h.stderr_tail[-STDERR_SHOWN:]]
    return "\n".join(lines)


def html(h: Any) -> str:
    """A table for a notebook (`_repr_html_`): the state's light, a row a line (long values end in
    an ellipsis, whole on hover), server text escaped, stderr in its colours."""
    reason = f' <span style="color:#868e96">({esc(h.state_reason)})</span>' if h.state_reason else ""
    value = f"{CELL};overflow:hidden;text-overflow:ellipsis;max-width:{VALUE_WIDTH_EM}em"
    cells = "".join(
        f'<tr><th style="{CELL}">{esc(label)}</th><td style="{value}" title="{esc(text)}">{esc(text)}</td></tr>'
        for label, text in rows(h)
    )
    tail = "\n".join(ansi_html(line) for line in h.stderr_tail[-STDERR_SHOWN:])
    stderr = f'<pre style="margin:0.3em 0 0 0">{tail}</pre>' if tail else ""
    return (
        f'<div class="mcp-health" style="overflow-x:auto">{state_light(h.state)} <b>{esc(h.name)}</b> {esc(h.state)}{reason}'
        f'<table style="font-family:monospace;font-size:0.9em;line-height:1.4">{cells}</table>{stderr}</div>'
    )
