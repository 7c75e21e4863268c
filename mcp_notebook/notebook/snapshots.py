"""What a live widget leaves behind where no widget can be drawn: a snapshot of its last state.

A saved notebook reopened, or an nbconvert HTML export, has no kernel to draw a widget
from (JupyterLab shows "Loading widget..."; nbconvert keeps the widget view when the
notebook holds widget state, and draws it only with scripts from the network). So each
live panel is displayed as two outputs: the widget, then a plain text/html + text/plain
snapshot with a display id. The widget carries a style that hides its own snapshot while
it is drawn; where it is not, the snapshot shows. After every cell the snapshots of the
panels still followed are brought up to date (`update_display_data`, from the kernel's
main thread, so it belongs to the cell that ran and reaches the saved outputs), the
final state included. Only this module writes snapshots; nothing here prints.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from typing import Any

PENDING: dict[str, Any] = {}  # display id -> panel whose snapshot is still followed
_lock = threading.Lock()
_last: dict[str, str] = {}  # display id -> the snapshot html last sent
_hooked: list[Any] = []  # the shell whose post_run_cell event refreshes the snapshots
_before: list[Callable[[], None]] = []  # run first: the render pump's flush


def before_refresh(flush: Callable[[], None]) -> None:
    """Call `flush` at the end of each cell, before the snapshots are brought up to date."""
    _before.append(flush)


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


def show(panel: Any, widget_bundle: dict[str, Any]) -> None:
    """Display `panel` (its widget bundle, then its snapshot) and follow it after each cell."""
    from IPython.display import display

    display(widget_bundle, raw=True)
    display_id = snapshot_id(panel)
    data = bundle(panel)
    display(data, raw=True, display_id=display_id)
    with _lock:
        PENDING[display_id] = panel
        _last[display_id] = data["text/html"]
    _hook()


def _hook() -> None:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or shell in _hooked:
        return
    shell.events.register("post_run_cell", refresh)
    _hooked.append(shell)


def refresh(*_: Any) -> int:
    """Bring every followed snapshot up to date; let go of those whose view stopped. Returns
    how many were updated."""
    from IPython.display import update_display

    for flush in _before:
        flush()
    with _lock:
        followed = list(PENDING.items())
    updated = 0
    for display_id, panel in followed:
        data = bundle(panel)
        with _lock:
            changed = _last.get(display_id) != data["text/html"]
            _last[display_id] = data["text/html"]
            if panel._view.closed:
                PENDING.pop(display_id, None)
                _last.pop(display_id, None)
        if changed:
            update_display(data, raw=True, display_id=display_id)
            updated += 1
    return updated


def forget(panel: Any) -> None:
    """Stop following `panel` (it was closed)."""
    with _lock:
        PENDING.pop(snapshot_id(panel), None)
        _last.pop(snapshot_id(panel), None)


__all__ = ["before_refresh", "bundle", "forget", "hide_style", "new_id", "refresh", "show", "snapshot_id"]
