"""What a live widget leaves behind where no widget can be drawn: a snapshot of its last state.

A saved notebook reopened, or an nbconvert HTML export, has no kernel to draw a widget
from (JupyterLab shows "Loading widget..."; nbconvert keeps the widget view when the
notebook holds widget state, and draws it only with scripts from the network). So each
live panel is displayed as two outputs: the widget, then a plain text/html + text/plain
snapshot with a display id. The widget carries a style that hides its own snapshot while
it is drawn; where it is not, the snapshot shows. After every cell the snapshots of the
followed panels that changed are brought up to date (`update_display_data`, from the
kernel's main thread, so it belongs to the cell that ran and reaches the saved outputs),
the final state included; a panel nothing changed is left as it is.

This module is IPython's side only (`display`, `update_display`, the `post_run_cell`
hook); which panels are followed and what changed is `snapshots`'. Only this
module writes snapshots; nothing here prints.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import snapshots as registry

_hooked: list[Any] = []  # the shell whose post_run_cell event refreshes the snapshots
_before: list[Callable[[], None]] = []  # run first: the render pump's flush


def before_refresh(flush: Callable[[], None]) -> None:
    """Call `flush` at the end of each cell, before the snapshots are brought up to date."""
    _before.append(flush)


def show(panel: Any, widget_bundle: dict[str, Any] | None, text: str) -> None:
    """Display `panel` (its widget bundle, then its snapshot) and follow it after each cell.

    The widget's output has `text` as its plain text and no HTML: the snapshot carries that.
    `widget_bundle` is what the widget's `_repr_mimebundle_()` gave (None for a widget with no view).
    """
    from IPython.display import display

    bundle = {key: value for key, value in (widget_bundle or {}).items() if key != "text/html"}
    bundle["text/plain"] = text
    display(bundle, raw=True)
    data = registry.bundle(panel)
    display(data, raw=True, display_id=registry.snapshot_id(panel))
    registry.follow(panel, data)
    _hook()


def _hook() -> None:
    from IPython import get_ipython

    shell = get_ipython()
    if shell is None or shell in _hooked:
        return
    shell.events.register("post_run_cell", refresh)
    _hooked.append(shell)


def refresh(*_: Any) -> int:
    """Bring the followed snapshots that changed up to date; let go of those whose view
    stopped. Returns how many were updated."""
    from IPython.display import update_display

    for flush in _before:
        flush()
    updates = registry.changed()
    for display_id, data in updates:
        update_display(data, raw=True, display_id=display_id)
    return len(updates)


__all__ = ["before_refresh", "refresh", "show"]
