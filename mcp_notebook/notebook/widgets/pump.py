"""The live views' one throttled render pump, and the panel and view every live widget is made of.

The hand-off: a view is built and first rendered by the thread that creates it, then
given to the pump; from then on only the pump (a task on the runtime's event-loop
thread) writes its widgets' values, at most `render_rate` times a second and only when
something changed. Frontend controls (filters, pause, row selection) just record what
the user chose and mark the view dirty. At the end of a cell the kernel's main thread
asks the pump to `flush` (one tick on the loop thread, waited for), then `snapshot_display`
brings the saved-notebook copies up to date. Each tick renders in a fresh context, so the
kernel files the widgets' updates under the cell running then. Nothing here prints.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from collections.abc import Sequence
from typing import Any, TypeVar

import anyio
import ipywidgets as widgets

from ...api.connecting.settings import defaults
from ...runtime import get_runtime
from . import snapshot_display
from . import snapshots as snapshot_registry

MAX_VIEWS = 32  # live views the pump keeps updating; older ones freeze
REFRESH = 1.0  # seconds: re-render at least this often (ages like "last frame 3 s ago")
FLUSH_WAIT = 2.0  # seconds the end of a cell waits for the pump to render the last state


def has_widget_frontend() -> bool:
    """True inside a Jupyter kernel (a frontend can draw widgets); False in terminal IPython or scripts."""
    try:
        from IPython import get_ipython
    except ImportError:  # pragma: no cover - IPython is a dependency
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


class Panel(widgets.VBox):
    """A VBox that leaves its view's last state behind for saved notebooks and exports: its
    bundle carries the view's HTML, and displayed in a kernel it is followed by a snapshot
    output (`snapshot_display`) that its own style hides while the widget is drawn."""

    def __init__(self, view: View, *, children: Sequence[widgets.Widget] = (), **kwargs: Any) -> None:
        self.snapshot_id = snapshot_registry.new_id()
        style = widgets.HTML(value=snapshot_registry.hide_style(self.snapshot_id))
        super().__init__(children=[style, *children], **kwargs)
        self._view = view
        self.add_class("mcp-panel")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/html"] = self._view.html()
            bundle["text/plain"] = self._view.text()
        return bundle

    def _ipython_display_(self) -> None:
        snapshot_display.show(self, super()._repr_mimebundle_(), "(a live view; its last state follows)")

    def close(self) -> None:
        self._view.closed = True
        snapshot_registry.forget(self)
        super().close()


class View:
    """Something the pump re-renders: `key()` says whether it changed, `render()` applies it.

    Each kind sets its `widget`, the `Panel` (or subclass) it is drawn in.
    """

    refresh = REFRESH

    def __init__(self) -> None:
        self.closed = False
        self.renders = 0
        self.render_times: deque[float] = deque(maxlen=1000)
        self.last_error: str | None = None
        self._dirty = False
        self._last_key: Any = None
        self._last_render = 0.0

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


ViewT = TypeVar("ViewT", bound=View)


class Pump:
    """One task on the runtime loop that ticks every view, at most `render_rate` times a second."""

    def __init__(self) -> None:
        self.views: list[View] = []  # touched on the loop thread only
        self.ticks = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._wakeup: anyio.Event | None = None

    def add(self, view: ViewT) -> ViewT:
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

    def flush(self) -> None:
        """Render what changed now, on the loop thread, and wait (at most FLUSH_WAIT): the
        kernel's main thread asks this at the end of a cell, so the last state of every view
        goes out as part of that cell."""
        runtime = get_runtime()
        if not self.views or self._thread is None or not runtime.running or runtime.in_loop_thread():
            return
        try:
            runtime.call_sync(self.tick, time.monotonic(), timeout=FLUSH_WAIT)
        except TimeoutError:
            pass  # the loop is busy: the pump renders it at its next tick

    def tick(self, now: float) -> None:
        """Render what changed (loop thread); a view that fails or was closed is dropped."""
        self.ticks += 1
        for view in list(self.views):
            try:
                if not view.closed:
                    # A fresh context: the kernel then sends the widget's updates as part of
                    # the cell running now, not the one that made the view (the context the
                    # pump was started in), so nbclient records them in the notebook.
                    contextvars.Context().run(view.tick, now)
            except Exception as exc:  # noqa: BLE001 - one broken view never stops the others
                view.last_error = f"{type(exc).__name__}: {exc}"
                view.closed = True
            if view.closed:
                self.views.remove(view)


pump = Pump()
snapshot_display.before_refresh(pump.flush)


def views_of(widget: Panel) -> View:
    return widget._view


__all__: Sequence[str] = ["has_widget_frontend", "pump", "views_of"]
