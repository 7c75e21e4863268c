"""The live trace: a frame table (or a sequence diagram) that follows new frames.

It keeps the hand-off of `pump`: built and first rendered by the creating thread, then
re-rendered only by the throttled render pump. The table is an HTML table like the static
`%mcp trace` one (every server value escaped by `render.trace`), scrolled to its newest row; the
"JSON of" picker shows one entry's message under it, and "diagram" swaps the table for the
conversation as a sequence diagram. Frontend controls only record what the user chose. It reads
the trace of its source (a connection, a tap: anything with a `name` and a `trace`) at each tick,
so a tap's follows its newest session.
"""

from __future__ import annotations

import time
from typing import Any

import ipywidgets as widgets

from ...api.display.diagram import Diagram as DiagramData
from ...api.display.diagram import steps_of
from ...base.text import esc
from ...runtime import get_runtime
from ...session.trace import TraceEntry, select
from ..render import trace as render
from ..render.svg import diagram_html
from .pump import Panel, View, pump

TRACE_ROWS = 200
DIAGRAM_ROWS = 60  # the diagram shows the newest of the rows the table would
KINDS = ("request", "notification", "response", "error", "invalid", "batch")
DIRECTIONS = (("all", ""), ("← in", "in"), ("→ out", "out"), ("· events", "event"))
NO_ROW = 0  # the "JSON of" choice that shows none (no entry has seq 0)
SHOWS = ("table", "diagram")


def _fit(**kwargs: Any) -> dict[str, Any]:
    """Options that size a control to its content: its description on one line, no fixed width."""
    return {"style": {"description_width": "initial"}, "layout": widgets.Layout(width="auto"), **kwargs}


class TraceView(View):
    """A frame table with filters, pause/resume, the chosen row's JSON, and a diagram view."""

    def __init__(
        self,
        source: Any,
        *,
        live: bool = True,
        last: int = TRACE_ROWS,
        method: str | None = None,
        kind: str | None = None,
        direction: str | None = None,
        show: str = "table",
    ) -> None:
        super().__init__()
        self.source = source
        self.name = str(source.name)
        self.live = live
        self._frozen: list[TraceEntry] | None = None if live else self.trace.entries()
        self._selected: int | None = None
        self.method = widgets.Text(value=method or "", placeholder="any", description="method", **_fit())
        self.method.layout.width = "14em"
        kinds = [("all", ""), *[(k, k) for k in KINDS]]
        self.kind = widgets.Dropdown(options=kinds, value=kind or "", description="kind", **_fit())
        self.direction = widgets.Dropdown(options=list(DIRECTIONS), value=direction or "", description="direction", **_fit())
        self.last = widgets.BoundedIntText(value=last, min=1, max=100_000, description="last", **_fit())
        self.last.layout.width = "9em"
        self.pause = widgets.ToggleButton(
            value=not live, description="paused" if not live else "pause", disabled=not live, **_fit()
        )
        self.show = widgets.ToggleButtons(options=list(SHOWS), value=show, **_fit())
        self.show.style.button_width = "auto"
        self.status = widgets.Label()
        self.rows = widgets.Dropdown(options=[("(pick a row)", NO_ROW)], value=NO_ROW, description="JSON of", **_fit())
        self.rows.layout.max_width = "100%"
        self.table = widgets.HTML()
        self.detail = widgets.HTML()
        for control in (self.method, self.kind, self.direction, self.last, self.show):
            control.observe(self.touch, names="value")
        self.pause.observe(self._toggle_pause, names="value")
        self.rows.observe(self._select, names="value")
        row = widgets.Layout(flex_flow="row wrap", align_items="center", width="100%")
        controls = widgets.HBox([self.method, self.kind, self.direction, self.last, self.pause, self.show], layout=row)
        self.widget = Panel(self, children=[controls, self.status, self.table, self.rows, self.detail])
        self.widget.add_class("mcp-trace-widget")
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

    @property
    def trace(self) -> Any:
        """The source's trace now: a tap's is its newest session's, so the table follows new sessions."""
        return self.source.trace

    def _source(self) -> list[TraceEntry]:
        return self._frozen if self._frozen is not None else self.trace.entries()

    def filters(self) -> dict[str, Any]:
        return {
            "method": self.method.value.strip() or None,
            "kind": self.kind.value or None,
            "direction": self.direction.value or None,
            "last": self.last.value or TRACE_ROWS,
        }

    def key(self) -> Any:
        trace = self.trace
        shown = id(self._frozen) if self._frozen is not None else (id(trace), trace.last_seq)
        return shown, len(trace.marks), tuple(self.filters().items()), self._selected, self.show.value

    def diagram(self, shown: list[TraceEntry], entries: list[TraceEntry]) -> DiagramData:
        chosen = shown[-DIAGRAM_ROWS:]
        wall = chosen[0].wall if chosen else None
        return DiagramData(self.name, tuple(steps_of(chosen, entries)), len(entries), self.trace.dropped, wall)

    def render(self) -> None:
        entries = self._source()
        shown = select(entries, **self.filters())
        rows = render.trace_rows(shown, entries, self.trace.marks)
        options = [(" ".join(render.row_cells(r)), r.seq) for r in rows]
        self.rows.options = [("(pick a row)", NO_ROW), *options]
        self.rows.value = self._selected if self._selected in {seq for _, seq in options} else NO_ROW
        chosen = next((e for e in shown if e.seq == self._selected), None)
        if self.show.value == "diagram":
            self.table.value = diagram_html(self.diagram(shown, entries))
        else:
            self.table.value = render.trace_html(shown, entries, json_column=False, selected=self._selected, rows=rows)
        self.detail.value = f"<pre>{esc(render.entry_json(chosen))}</pre>" if chosen is not None else ""
        state = "live" if self.live and self._frozen is None else "paused" if self.live else "snapshot"
        dropped = f", {self.trace.dropped} dropped" if self.trace.dropped else ""
        self.status.value = f"{state}: {len(shown)} of {len(entries)} entries shown{dropped}"

    def html(self) -> str:
        entries = self._source()
        shown = select(entries, **self.filters())
        if self.show.value == "diagram":
            return diagram_html(self.diagram(shown, entries))
        return render.trace_html(shown, entries, dropped=self.trace.dropped, marks=self.trace.marks)

    def text(self) -> str:
        entries = self._source()
        return render.trace_text(select(entries, **self.filters()), entries, dropped=self.trace.dropped, marks=self.trace.marks)


def trace_widget(source: Any, *, live: bool = True, **filters: Any) -> Panel:
    """A frame-table widget for the trace of `source` (anything with a `name` and a `trace`: a
    connection, a tap); live, it follows new frames (and the trace `source` has now); else a snapshot."""
    return pump.add(TraceView(source, live=live, **filters)).widget


__all__ = ["TraceView", "trace_widget"]
