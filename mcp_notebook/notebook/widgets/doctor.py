"""The doctor's live checklist in a Jupyter cell: an HTML widget redrawn as each step begins
and completes, replaced when the diagnosis ends by the diagnosis itself (its HTML and text,
which a saved notebook keeps, where a widget's state is not kept).

It runs in the caller's thread (the doctor's steps do), as the progress bar does; the HTML
is the `Diagnosis`'s own, server text escaped there.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ...diagnosis.report import Checklist, Diagnosis, Step


class ChecklistWidget(Checklist):
    """A checklist that updates in place in the cell."""

    def __init__(self) -> None:
        self.widget = widgets.HTML()
        self.handle: Any = None
        self.shown = False

    def _show(self, diagnosis: Diagnosis, running: str | None) -> None:
        self.widget.value = diagnosis.html(running)
        if not self.shown:
            from IPython.display import display

            self.shown = True
            self.handle = display(self.widget, display_id=True)

    def running(self, diagnosis: Diagnosis, name: str) -> None:
        self._show(diagnosis, name)

    def step(self, diagnosis: Diagnosis, step: Step) -> None:
        self._show(diagnosis, None)

    def done(self, diagnosis: Diagnosis) -> None:
        if self.handle is not None:
            self.handle.update(diagnosis)
        self.widget.close()
