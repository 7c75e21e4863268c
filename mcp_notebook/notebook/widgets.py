"""Live ipywidgets views of health and traces, kept fresh by one throttled render pump.

The hand-off: a view is built and first rendered by the thread that creates it, then
given to the pump; from then on only the pump (a task on the runtime's event-loop
thread) writes its widgets' values, at most `render_rate` times a second and only when
something changed. Frontend controls (filters, pause, row selection) just record what
the user chose and mark the view dirty. Nothing here prints.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

import anyio
import ipywidgets as widgets

from ..api.settings import defaults
from ..base.text import esc
from ..runtime import get_runtime
from ..session.health import CLOSED, Health
from ..session.trace import TraceEntry, select
from . import render

MAX_VIEWS = 32  # live views the pump keeps updating; older ones freeze
REFRESH = 1.0  # seconds: re-render at least this often (ages like "last frame 3 s ago")
TRACE_ROWS = 200
KINDS = ("request", "notification", "response", "error", "invalid", "batch")
DIRECTIONS = (("all", None), ("← in", "in"), ("→ out", "out"), ("· events", "event"))


def has_widget_frontend() -> bool:
    """True inside a Jupyter kernel (a frontend can draw widgets); False in terminal IPython or scripts."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Panel(widgets.VBox):
    """A VBox whose saved-notebook fallback is the view's HTML (text/html beside the widget)."""

    def __init__(self, view: View, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._view = view

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/html"] = self._view.html()
            bundle["text/plain"] = self._view.text()
        return bundle

    def close(self) -> None:
        self._view.closed = True
        super().close()


class View:
    """Something the pump re-renders: `key()` says whether it changed, `render()` applies it."""

    refresh = REFRESH

    def __init__(self) -> None:
        self.closed = False
        self.renders = 0
        self.render_times: deque[float] = deque(maxlen=1000)
        self.last_error: str | None = None
        self._dirty = False
        self._last_key: Any = None
        self._last_render = 0.0
        self.widget: Panel

    def key(self) -> Any:
        raise NotImplementedError

    def render(self) -> None:
        raise NotImplementedError

    def html(self) -> str:
        raise NotImplementedError

    def text(self) -> str:
        raise NotImplementedError

    def touch(self, *_: Any) -> None:
        """A frontend control changed (any thread): render at the next tick."""
        self._dirty = True

    def tick(self, now: float) -> bool:
        """Render if something changed or the refresh is due; True if it rendered."""
        key = self.key()
        if not self._dirty and key == self._last_key and now - self._last_render < self.refresh:
            return False
        self._dirty = False
        self._last_key = key
        self._render_now(now)
        return True

    def _render_now(self, now: float) -> None:
        self.render()
        self.renders += 1
        self._last_render = now
        self.render_times.append(now)


class Pump:
    """One task on the runtime loop that ticks every view, at most `render_rate` times a second."""

    def __init__(self) -> None:
        self.views: list[View] = []  # touched on the loop thread only
        self.ticks = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wakeup: anyio.Event | None = None

    def add(self, view: View) -> View:
        """Hand a view over to the pump (from any thread); it renders it from now on."""
        runtime = get_runtime()
        with self._lock:
            runtime.call_soon(self._add, view)
            if self._thread is None or self._thread is not runtime.thread:
                runtime.spawn(self._run)
                self._thread = runtime.thread
        return view

    def _add(self, view: View) -> None:
        self.views.append(view)
        del self.views[:-MAX_VIEWS]
        if self._wakeup is not None:
            self._wakeup.set()

    async def _run(self) -> None:
        while True:
            if not self.views:
                self._wakeup = anyio.Event()
                await self._wakeup.wait()
                continue
            started = time.monotonic()
            self.tick(started)
            period = 1.0 / max(0.1, defaults.render_rate)
            await anyio.sleep(max(0.0, period - (time.monotonic() - started)))

    def tick(self, now: float) -> None:
        """Render what changed (loop thread); a view that fails or was closed is dropped."""
        self.ticks += 1
        for view in list(self.views):
            try:
                if not view.closed:
                    view.tick(now)
            except Exception as exc:  # noqa: BLE001 - one broken view never stops the others
                view.last_error = f"{type(exc).__name__}: {exc}"
                view.closed = True
            if view.closed:
                self.views.remove(view)


pump = Pump()


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
        return _steady(health), self.stderr_button.value

    def render(self) -> None:
        health = self.health if self.health is not None else self.connection.health
        self.main.value = render.health_html(health)
        self.stderr.value = render.stderr_html(health.stderr_tail) if self.stderr_button.value else ""
        self.health = None
        if health.state == CLOSED:
            self.closed = True  # final state shown: the pump lets go of it

    def html(self) -> str:
        return render.health_html(self.connection.health)

    def text(self) -> str:
        return render.health_text(self.connection.health)


def _steady(health: Health) -> Health:
    """The snapshot without its clock-driven fields, to tell real changes from time passing."""
    return dataclasses.replace(health, since_frame_in=None, since_frame_out=None, taken_at=0.0, taken_monotonic=0.0)


class DashboardView(View):
    """Every open connection in one table."""

    def __init__(self, connections: Callable[[], dict[str, Any]]) -> None:
        super().__init__()
        self.connections = connections
        self.table = _html()
        self.widget = Panel(self, children=[self.table])
        self._healths: list[Health] = []
        self._render_now(time.monotonic())

    def _snapshots(self) -> list[Health]:
        return [conn.health for _, conn in sorted(self.connections().items())]

    def key(self) -> Any:
        self._healths = self._snapshots()
        return [_steady(h) for h in self._healths]

    def render(self) -> None:
        self.table.value = render.dashboard_html(self._healths or self._snapshots())

    def html(self) -> str:
        return render.dashboard_html(self._snapshots())

    def text(self) -> str:
        return render.dashboard_text(self._snapshots())


class TraceView(View):
    """A frame table with filters, pause/resume and the selected row's JSON."""

    def __init__(
        self,
        trace: Any,
        *,
        live: bool = True,
        last: int = TRACE_ROWS,
        method: str | None = None,
        kind: str | None = None,
        direction: str | None = None,
    ) -> None:
        super().__init__()
        self.trace = trace
        self.live = live
        self._frozen: list[TraceEntry] | None = None if live else trace.entries()
        self._selected: int | None = None
        self.method = widgets.Text(value=method or "", placeholder="method", description="method")
        self.kind = widgets.Dropdown(options=[("all", None), *[(k, k) for k in KINDS]], value=kind, description="kind")
        self.direction = widgets.Dropdown(options=list(DIRECTIONS), value=direction, description="direction")
        self.last = widgets.BoundedIntText(value=last, min=1, max=100_000, description="last")
        self.pause = widgets.ToggleButton(value=not live, description="paused" if not live else "pause", disabled=not live)
        self.status = widgets.Label()
        self.rows = widgets.Select(options=[], rows=16, layout=widgets.Layout(width="100%"))
        self.rows.add_class("mcp-trace-rows")
        self.detail = _html()
        style = _html(value="<style>.mcp-trace-rows select { font-family: monospace; }</style>")
        for control in (self.method, self.kind, self.direction, self.last):
            control.observe(self.touch, names="value")
        self.pause.observe(self._toggle_pause, names="value")
        self.rows.observe(self._select, names="value")
        controls = widgets.HBox([self.method, self.kind, self.direction, self.last, self.pause])
        self.widget = Panel(self, children=[style, controls, self.status, self.rows, self.detail])
        self._render_now(time.monotonic())

    # ----- frontend side: record the choice, let the pump render it -----

    def _toggle_pause(self, change: dict[str, Any]) -> None:
        if get_runtime().in_loop_thread():
            return
        self._frozen = self.trace.entries() if change["new"] else None
        self.touch()

    def _select(self, change: dict[str, Any]) -> None:
        if get_runtime().in_loop_thread():
            return  # the pump itself re-set the options
        self._selected = change["new"]
        self.touch()

    # ----- pump side -----

    def _source(self) -> list[TraceEntry]:
        return self._frozen if self._frozen is not None else self.trace.entries()

    def filters(self) -> dict[str, Any]:
        return {
            "method": self.method.value.strip() or None,
            "kind": self.kind.value,
            "direction": self.direction.value,
            "last": self.last.value or TRACE_ROWS,
        }

    def key(self) -> Any:
        source = id(self._frozen) if self._frozen is not None else self.trace.last_seq
        return source, tuple(self.filters().items()), self._selected

    def render(self) -> None:
        entries = self._source()
        shown = select(entries, **self.filters())
        rows = render.trace_rows(shown, entries)
        options = [(" ".join(render.row_cells(r)), r.seq) for r in rows]
        self.rows.options = options
        self.rows.value = self._selected if self._selected in {seq for _, seq in options} else None
        chosen = next((e for e in shown if e.seq == self._selected), None)
        self.detail.value = f"<pre>{esc(render.entry_json(chosen))}</pre>" if chosen is not None else ""
        state = "live" if self.live and self._frozen is None else "paused" if self.live else "snapshot"
        dropped = f", {self.trace.dropped} dropped" if self.trace.dropped else ""
        self.status.value = f"{state}: {len(shown)} of {len(entries)} entries shown{dropped}"

    def html(self) -> str:
        entries = self._source()
        return render.trace_html(select(entries, **self.filters()), entries, dropped=self.trace.dropped)

    def text(self) -> str:
        entries = self._source()
        return render.trace_text(select(entries, **self.filters()), entries, dropped=self.trace.dropped)


def health_widget(connection: Any, *, show_stderr: bool = False) -> Panel:
    """A live health widget for `connection`, updated by the pump while no cell runs."""
    return pump.add(HealthView(connection, show_stderr=show_stderr)).widget


def trace_widget(connection: Any, *, live: bool = True, **filters: Any) -> Panel:
    """A frame-table widget for `connection`'s trace (live follows new frames; else a snapshot)."""
    return pump.add(TraceView(connection.trace, live=live, **filters)).widget


def dashboard_widget(connections: Callable[[], dict[str, Any]]) -> Panel:
    """Every connection `connections()` returns, in one live table."""
    return pump.add(DashboardView(connections)).widget


def views_of(widget: Panel) -> View:
    return widget._view


__all__: Sequence[str] = ["dashboard_widget", "has_widget_frontend", "health_widget", "pump", "trace_widget"]
