"""The doctor's live checklist in a Jupyter cell: an HTML widget redrawn as each step begins
and completes, replaced when the diagnosis ends by the diagnosis itself (its HTML and text,
which a saved notebook keeps, where a widget's state is not kept).

It runs in the caller's thread (the doctor's steps do), as the progress bar does; the HTML
is the `Diagnosis`'s own, server text escaped there. Where the widget cannot be drawn, its
output reads as the checklist so far in plain text, never as the widget's repr.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ...base.text import one_line
from ...diagnosis.report import Checklist, Diagnosis, Step


class ChecklistHTML(widgets.HTML):
    """The checklist's HTML widget, whose text form is the checklist so far (`text`), not a repr."""

    text = ""

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        bundle = super()._repr_mimebundle_(**kwargs)
        if isinstance(bundle, dict):
            bundle["text/plain"] = self.text
        return bundle


def checklist_text(diagnosis: Diagnosis, running: str | None) -> str:
    """The checklist in plain text: the diagnosis's own once done, the steps so far while one runs."""
    if running is None:
        return diagnosis.text()
    done = [f"  {step.line()}" for step in diagnosis.steps]
    return "\n".join([f"doctor {one_line(diagnosis.target)}: checking…", *done, f"  … {one_line(running)}"])


class ChecklistWidget(Checklist):
    """A checklist that updates in place in the cell."""

    def __init__(self) -> None:
        self.widget = ChecklistHTML()
        self.handle: Any = None
        self.shown = False

    def _show(self, diagnosis: Diagnosis, running: str | None) -> None:
        self.widget.text = checklist_text(diagnosis, running)
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
