"""Live health widgets: one connection's health, and every connection in one dashboard.

They keep the hand-off of `pump`: built and first rendered by the creating thread, then
re-rendered only by the pump. A health panel shows the snapshot's own rendering
(`session.health_view`, what `conn.health` shows), with the round-trip pictures, a pin
warning and the stderr tail around it (`render.dashboard`); nothing here renders a snapshot.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ...api.tools import pins as tool_pins
from ...base.text import one_line
from ...session import health_view
from ...session.health import CLOSED, Health
from ..render import dashboard as render
from .pump import Panel, View, pump


def _html(**kwargs: Any) -> widgets.HTML:
    return widgets.HTML(**kwargs)


class HealthView(View):
    """A live health panel for one connection."""

    def __init__(self, connection: Any, *, show_stderr: bool = False) -> None:
        super().__init__()
        self.connection = connection
        self.main = _html()
        self.stderr_button = widgets.ToggleButton(value=show_stderr, description="stderr tail", icon="terminal")
        self.stderr = _html()
        self.stderr_button.observe(self.touch, names="value")
        self.widget = Panel(self, children=[self.main, self.stderr_button, self.stderr])
        self.health: Health | None = None
        self._render_now(time.monotonic())

    def key(self) -> Any:
        health = self.connection.health
        self.health = health
        return _steady(health), self.stderr_button.value, tool_pins.warning(self.connection)

    def render(self) -> None:
        health = self.health if self.health is not None else self.connection.health
        self.main.value = self._main(health)
        self.stderr.value = render.stderr_html(health.stderr_tail) if self.stderr_button.value else ""
        self.health = None
        if health.state == CLOSED:
            self.closed = True  # final state shown: the pump lets go of it

    def html(self) -> str:
        return self._main(self.connection.health)

    def _main(self, health: Health) -> str:
        warning = render.pin_warning_html(tool_pins.warning(self.connection))
        return warning + health_view.html(health) + render.rtt_pictures(health.rtt_history)

    def text(self) -> str:
        warning = tool_pins.warning(self.connection)
        return (f"warning: {one_line(warning)}\n" if warning else "") + health_view.text(self.connection.health)


def _steady(health: Health) -> Health:
    """The snapshot without its clock-driven fields, to tell real changes from time passing."""
    return dataclasses.replace(health, since_frame_in=None, since_frame_out=None, taken_at=0.0, taken_monotonic=0.0)


class DashboardView(View):
    """Every open connection in one table; one that closes while the table is shown stays in
    it, closed, until a connection of the same name opens (the table keeps what it showed)."""

    def __init__(self, connections: Callable[[], dict[str, Any]]) -> None:
        super().__init__()
        self.connections = connections
        self.table = _html()
        self.widget = Panel(self, children=[self.table])
        self._healths: list[Health] = []
        self._lock = threading.Lock()  # the pump and the end of a cell both ask for rows
        self._open: dict[str, Any] = {}
        # Those that left while shown: the connection while it is still closing, then its last state.
        self._ended: dict[str, Any] = {}
        self._render_now(time.monotonic())

    def _snapshots(self) -> list[Health]:
        with self._lock:
            current = dict(self.connections())
            for name, conn in self._open.items():
                if current.get(name) is not conn:
                    self._ended[name] = conn
            self._open = current
            rows = {name: conn.health for name, conn in current.items()}
            for name, ended in list(self._ended.items()):
                if name in current:
                    del self._ended[name]  # the name opened again: the open one shows
                    continue
                health = ended if isinstance(ended, Health) else ended.health
                if health.state == CLOSED:
                    self._ended[name] = health  # its last state; the connection itself is let go
                rows[name] = health
        return [rows[name] for name in sorted(rows)]

    def key(self) -> Any:
        self._healths = self._snapshots()
        return [_steady(h) for h in self._healths]

    def render(self) -> None:
        self.table.value = render.dashboard_html(self._healths or self._snapshots())

    def html(self) -> str:
        return render.dashboard_html(self._snapshots())

    def text(self) -> str:
        return render.dashboard_text(self._snapshots())


def health_widget(connection: Any, *, show_stderr: bool = False) -> Panel:
    """A live health widget for `connection`, updated by the pump while no cell runs."""
    return pump.add(HealthView(connection, show_stderr=show_stderr)).widget


def dashboard_widget(connections: Callable[[], dict[str, Any]]) -> Panel:
    """Every connection `connections()` returns, in one live table."""
    return pump.add(DashboardView(connections)).widget
