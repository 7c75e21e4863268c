"""How a tap shows itself: where it listens, the entries to paste into each client (a compact
block each in HTML), and what it has seen (sessions, frames each way, violations per side).

Functions of a `taps.tap.Tap` (which imports this module, so it is not named here). Everything
shown goes through the entries' own redaction (`PasteEntry.shown`) and `esc`/`one_line`; an
upstream URL is shown redacted.
"""

from __future__ import annotations

import shlex
from typing import Any

from ..base.text import esc, one_line
from ..transports.urls import redact_url
from .paste import LABELS, WHERE, PasteEntry
from .wire.records import CLIENT, SERVER

BLOCK = "margin:0.2em 0;padding:0.3em 0.5em;background:rgba(127,127,127,0.08);font-size:0.85em;white-space:pre-wrap"


def where(tap: Any) -> str:
    if tap.closed:
        return "closed"
    if tap.url is not None:
        return f"proxy on {tap.url} -> {redact_url(tap.upstream or '')}"
    return f"listening for stdio relays on {tap.socket_path}"


def seen(tap: Any, *, settle: bool = True) -> str:
    """Sessions, frames each way and violations per side, in one line (`settle=False`: the
    violations found so far, without waiting for the frames still being checked)."""
    sessions = tap.sessions
    client = sum(s.frames[CLIENT] for s in sessions)
    server = sum(s.frames[SERVER] for s in sessions)
    line = f"{len(sessions)} session{'s' * (len(sessions) != 1)}, frames: {client} from the client, {server} from the server"
    newest = tap.session
    if newest is None:
        return line + "; no session yet"
    state = "ended" if newest.ended else "live"
    health = newest.observer.health(settle=settle)
    counts = f"violations: client {health.client_violations}, server {health.server_violations}"
    return f"{line}; newest: {one_line(newest.label)}, {state}, {counts}"


def _entries(tap: Any) -> list[tuple[str, PasteEntry | str]]:
    try:
        return list(tap.entries().items())
    except Exception as exc:  # noqa: BLE001 - a display never raises: it says what is missing
        return [("", one_line(exc))]


def _hint(tap: Any) -> str:
    return f"configure a client to run: {shlex.join(tap.command(['COMMAND', 'ARGS...']))}"


def tap_text(tap: Any) -> str:
    lines = [f"tap {tap.name!r}: {where(tap)}", f"  {seen(tap)}"]
    if tap.closed:
        return "\n".join(lines)
    if tap.url is None and not tap.server_command:
        lines.append(f"  {_hint(tap)}; tap.entry(CLIENT, command=[...]) gives the entry to paste")
        return "\n".join(lines)
    lines.append("paste into a client:")
    for client, found in _entries(tap):
        label = LABELS.get(client, client)
        if isinstance(found, str):
            lines.append(f"  # {label}: {found}")
            continue
        lines.append(f"  # {label}: {WHERE[client]}")
        lines += [f"  {line}" for line in found.shown().split("\n")]
    return "\n".join(lines)


def tap_html(tap: Any) -> str:
    return head_html(tap) + paste_html(tap)


def head_html(tap: Any, *, settle: bool = True) -> str:
    """Where it listens and what it has seen (what a live view redraws)."""
    line = esc(seen(tap, settle=settle))
    return f'<div><b>tap {esc(tap.name)}</b>: {esc(where(tap))}</div><div style="color:#495057">{line}</div>'


def paste_html(tap: Any) -> str:
    """The entries to paste into each client (none once the tap is closed)."""
    if tap.closed:
        return ""
    if tap.url is None and not tap.server_command:
        return f"<div>{esc(_hint(tap))}; <code>tap.entry(CLIENT, command=[...])</code> gives the entry to paste</div>"
    blocks = []
    for client, found in _entries(tap):
        label = esc(LABELS.get(client, client))
        if isinstance(found, str):
            blocks.append(f'<div style="margin-top:0.4em"><b>{label}</b>: <span style="color:#868e96">{esc(found)}</span></div>')
            continue
        blocks.append(
            f'<div style="margin-top:0.4em"><b>{label}</b> <span style="color:#868e96">{esc(WHERE[client])}</span>'
            f'<pre style="{BLOCK}">{esc(found.shown())}</pre></div>'
        )
    return '<div style="margin-top:0.3em">Paste into a client:</div>' + "".join(blocks)
