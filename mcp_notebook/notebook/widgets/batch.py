"""A `conn.map` under way, in a kernel: one bar and one line (done, failed, calls/s, ETA), in one
output of the waiting cell, updated in place by the caller's (the cell's) thread while it waits,
and left as the batch's summary line when it ends. Where widgets are not drawn (a saved notebook,
an export) the output reads as that line of text. Server text never reaches it: the line is
counts and the tool's name, escaped.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ...api.batch.progress import BatchStats
from ...base.text import esc, plain


class BatchBar:
    """The bar (failed rows count as done) and the batch's line beside it."""

    def __init__(self) -> None:
        self.line = "map: starting"
        self.bar = widgets.FloatProgress(value=0.0, min=0.0, max=1.0, bar_style="info")
        self.text = widgets.HTML(value=esc(self.line))
        self.widget = BatchBox(self, [self.bar, self.text])
        self._shown: Any = None  # the output's display handle

    def show(self) -> BatchBar:
        from IPython.display import display

        self._shown = display(self.widget, display_id=True)
        return self

    def update(self, stats: BatchStats) -> None:
        self.bar.value = stats.fraction
        self.bar.bar_style = "warning" if stats.failed else "info"
        self.line = stats.line()
        self.text.value = esc(self.line)

    def close(self, summary: str, failed: bool) -> None:
        self.bar.bar_style = "warning" if failed else "success"
        self.line = summary
        self.text.value = esc(summary)
        if self._shown is not None:
            self._shown.update(self.widget)  # the output's text becomes the summary


class BatchBox(widgets.HBox):
    """The bar's box, whose text form is the batch's line, not a widget's repr."""

    def __init__(self, bar: BatchBar, children: list[widgets.Widget]) -> None:
        super().__init__(children=children)
        self._bar = bar

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/plain"] = plain(self._bar.line)
        return bundle
