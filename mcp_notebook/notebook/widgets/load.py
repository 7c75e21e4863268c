"""A load test's live view in a Jupyter cell: its tables (calls/s, percentiles per method and tool,
errors by code, the sessions' health) redrawn by the render pump while the cell blocks.

It follows the pump's hand-off (`pump`): built and first rendered here, then re-rendered only by
the pump on the runtime's loop thread, which keeps running while the load's cell waits. Once
the load has ended the pump draws its last state and lets go of it. Nothing here prints.
"""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets

from .pump import Panel, View, pump


class LoadPanel(Panel):
    """The view's panel; its repr is the tables as text."""

    def __repr__(self) -> str:
        return self._view.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self._view.text())


class LoadView(View):
    """The tables of a `workloads.run.Live`, redrawn as records arrive (and each second, for the clock)."""

    def __init__(self, live: Any) -> None:
        super().__init__()
        self.live = live
        self.table = widgets.HTML()
        self.widget = LoadPanel(self, children=[self.table])
        self._render_now(time.monotonic())

    def key(self) -> Any:
        return self.live.key()

    def render(self) -> None:
        self.table.value = self.live.html()
        if self.live.done:
            self.closed = True  # its last state drawn: the pump lets go of it

    def html(self) -> str:
        return str(self.live.html())

    def text(self) -> str:
        return str(self.live.text())

    def done(self) -> None:
        """The load has ended: the pump draws the last state at its next tick (or the cell's flush)."""
        self.touch()


def load_widget(live: Any) -> LoadView:
    """Show a live view of the load `live` in the cell now; the pump keeps it current."""
    from IPython.display import display

    view = pump.add(LoadView(live))
    display(view.widget)
    return view
