"""What the connection doctor found: a `Diagnosis`, a list of `Step`s, and how it reads.

A step is a name, a status (ok, warn, fail, skipped), what happened and what to try. The
rule kept here: a step's words pass through the doctor's `Redactor` when the step is made
(no secret reaches a step, whatever shows it later), server text is stripped of control
sequences in the text form and HTML-escaped in the HTML form. `TextChecklist` is the live
view for terminals and scripts: one line per step as it completes.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, TextIO

from ..base.plural import counted
from ..base.public import public
from ..base.text import clip, esc, one_line
from ..session.redaction import Redactor

STATUSES = ("ok", "warn", "fail", "skipped")
MARKS = {"ok": "✔", "warn": "!", "fail": "✘", "skipped": "·", "running": "…"}
COLOURS = {"ok": "#2b8a3e", "warn": "#e67700", "fail": "#c92a2a", "skipped": "#868e96", "running": "#1971c2"}
DETAIL_LIMIT = 600
NOT_RUN = "not run: "  # how the steps after a failure begin their detail


def not_run_line(steps: list[Step]) -> str:
    """The steps after a failure, on one line."""
    return f"{MARKS['skipped']} not run: {', '.join(step.name for step in steps)}"


@dataclass(frozen=True)
class Step:
    """One step of a diagnosis: `name`, `status` (ok, warn, fail or skipped), `detail` (what
    happened) and `hint` (what to try; empty when there is nothing to do)."""

    name: str
    status: str
    detail: str = ""
    hint: str = ""

    def line(self) -> str:
        """The step on one line, for a terminal: no control sequence of the server's survives."""
        text = f"{MARKS.get(self.status, '?')} {self.name}: {self.status}"
        if self.detail:
            text += f" — {one_line(self.detail)}"
        if self.hint:
            text += f" → try: {one_line(self.hint)}"
        return text


def make_step(redactor: Redactor, name: str, status: str, detail: str = "", hint: str = "") -> Step:
    """A step whose words carry no secret and stay a readable length."""
    if status not in STATUSES:
        raise ValueError(f"unknown step status {status!r}")
    return Step(name, status, clip(redactor.text(detail), DETAIL_LIMIT), clip(redactor.text(hint), DETAIL_LIMIT))


@public
@dataclass
class Diagnosis:
    """What `mcp_notebook.doctor()` found: `.ok` when no step failed, `.steps` in order, and
    `.target` (the server as shown, credentials redacted). It prints as a checklist, and as an
    HTML table in a notebook."""

    target: str
    transport: str  # "stdio" or "http"
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.steps) and not any(step.status == "fail" for step in self.steps)

    @property
    def failed(self) -> Step | None:
        """The step that failed (the doctor stops there), or None."""
        return next((step for step in self.steps if step.status == "fail"), None)

    def step(self, name: str) -> Step:
        """The step called `name`; KeyError if the doctor has no such step."""
        for step in self.steps:
            if step.name == name:
                return step
        raise KeyError(name)

    def summary(self) -> str:
        failed = self.failed
        if failed is not None:
            return f"{one_line(self.target)}: failed at {failed.name}"
        warnings = sum(step.status == "warn" for step in self.steps)
        tail = f", {counted(warnings, 'warning')}" if warnings else ""
        return f"{one_line(self.target)}: ok over {self.transport}{tail}"

    def text(self) -> str:
        run = [step for step in self.steps if not step.detail.startswith(NOT_RUN)]
        lines = [f"doctor {self.summary()}", *(f"  {step.line()}" for step in run)]
        if len(run) < len(self.steps):
            lines.append(f"  {not_run_line(self.steps[len(run) :])}")
        return "\n".join(lines)

    def html(self, running: str | None = None) -> str:
        """The checklist as an HTML table; `running` names the step under way (a live view)."""
        rows = [_row(step.name, step.status, step.detail, step.hint) for step in self.steps]
        if running is not None:
            rows.append(_row(running, "running", "", ""))
        head = esc(self.summary()) if running is None else f"{esc(one_line(self.target))}: checking…"
        return (
            '<div class="mcp-doctor"><div style="font-weight:600;margin-bottom:4px">doctor '
            f'{head}</div><table style="border-collapse:collapse;text-align:left">{"".join(rows)}</table></div>'
        )

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return {"text/plain": self.text(), "text/html": self.html()}

    def _repr_html_(self) -> str:
        return self.html()


def _row(name: str, status: str, detail: str, hint: str) -> str:
    colour = COLOURS.get(status, "inherit")
    said = esc(detail)
    if hint:
        said += f'<br><span style="color:#495057">try: {esc(hint)}</span>'
    cell = "padding:2px 8px;vertical-align:top;text-align:left"  # each cell: JupyterLab right-aligns td
    return (
        f'<tr><td style="{cell};color:{colour}">{esc(MARKS.get(status, "?"))}</td>'
        f'<td style="{cell};white-space:nowrap">{esc(name)}</td>'
        f'<td style="{cell};color:{colour}">{esc(status)}</td><td style="{cell}">{said}</td></tr>'
    )


class Checklist:
    """A live view of a diagnosis under way; front ends extend it. This one shows nothing."""

    def running(self, diagnosis: Diagnosis, name: str) -> None:
        """The step `name` has begun."""

    def step(self, diagnosis: Diagnosis, step: Step) -> None:
        """`step` has completed (it is already the last of `diagnosis.steps`)."""

    def done(self, diagnosis: Diagnosis) -> None:
        """Every step has completed, or one failed."""


class TextChecklist(Checklist):
    """One line per step as it completes, then the summary: for terminals and scripts."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream

    def _print(self, text: str) -> None:
        stream = self.stream or sys.stdout
        stream.write(text + "\n")
        stream.flush()

    def running(self, diagnosis: Diagnosis, name: str) -> None:
        if len(diagnosis.steps) == 0:
            self._print(f"doctor {one_line(diagnosis.target)} ({diagnosis.transport})")

    def step(self, diagnosis: Diagnosis, step: Step) -> None:
        if not step.detail.startswith(NOT_RUN):
            self._print(f"  {step.line()}")

    def done(self, diagnosis: Diagnosis) -> None:
        later = [step for step in diagnosis.steps if step.detail.startswith(NOT_RUN)]
        if later:
            self._print(f"  {not_run_line(later)}")
        self._print(diagnosis.summary())
