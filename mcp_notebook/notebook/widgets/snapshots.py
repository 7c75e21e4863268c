"""The panels whose snapshots are followed, and the snapshot HTML each one last sent.

A live panel leaves a plain text/html + text/plain snapshot of itself for where no widget
can be drawn (`snapshot_display` displays it and brings it up to date after each cell). This is
its bookkeeping, as plain data: the display id of each followed panel's snapshot, the HTML
last sent for it, the snapshot bundle itself, and which snapshots changed since they were
sent. The rules kept here: nothing here imports IPython, not even lazily (the display side
is `snapshot_display`); a snapshot counts as changed only when its HTML differs from the one last
sent; a panel whose view stopped is let go of once its final state has been counted.
"""

from __future__ import annotations

import threading
import uuid
from typing import Any

PENDING: dict[str, Any] = {}  # display id -> panel whose snapshot is still followed
_lock = threading.Lock()
_last: dict[str, str] = {}  # display id -> the snapshot html last sent


def new_id() -> str:
    """A display id for one panel's snapshot (also the CSS class that hides it)."""
    return f"mcp-snapshot-{uuid.uuid4().hex}"


def snapshot_id(panel: Any) -> str:
    return str(panel.snapshot_id)


def hide_style(display_id: str) -> str:
    """The style the widget carries: hide its snapshot (and the output that holds it) while drawn."""
    return f"<style>.{display_id}{{display:none}} .jp-OutputArea-child:has(.{display_id}){{display:none}}</style>"


def bundle(panel: Any) -> dict[str, str]:
    display_id = snapshot_id(panel)
    html = panel._view.html()
    return {
        "text/html": f'<div class="{display_id} mcp-snapshot">{html}</div>',
        "text/plain": panel._view.text(),
    }


def follow(panel: Any, sent: dict[str, str]) -> None:
    """Follow `panel`, whose snapshot was just sent as `sent`."""
    with _lock:
        PENDING[snapshot_id(panel)] = panel
        _last[snapshot_id(panel)] = sent["text/html"]


def changed() -> list[tuple[str, dict[str, str]]]:
    """The followed snapshots whose HTML differs from the one last sent, as (display id,
    bundle), each counted as sent from now on; panels whose view stopped are let go of."""
    with _lock:
        followed = list(PENDING.items())
    found = []
    for display_id, panel in followed:
        data = bundle(panel)
        with _lock:
            if _last.get(display_id) != data["text/html"]:
                found.append((display_id, data))
            if panel._view.closed or display_id not in PENDING:
                PENDING.pop(display_id, None)
                _last.pop(display_id, None)
            else:
                _last[display_id] = data["text/html"]
    return found


def forget(panel: Any) -> None:
    """Stop following `panel` (it was closed)."""
    with _lock:
        PENDING.pop(snapshot_id(panel), None)
        _last.pop(snapshot_id(panel), None)


__all__ = ["PENDING", "bundle", "changed", "follow", "forget", "hide_style", "new_id", "snapshot_id"]
