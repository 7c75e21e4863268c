"""Widgets without a browser: a pretend Jupyter cell (`kernel_cell`, the forms it builds and what it
shows), calls run in the background, markup checked to be inert, and a front end that clicks the
widgets of a real kernel."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest

from mcp_notebook.notebook.widgets import interaction as iw
from support.kernels import Cell, Kernel


@pytest.fixture
def kernel_cell(monkeypatch, shown_as):
    """Pretend the caller is a Jupyter cell: collect what it displays and the forms it builds."""
    shown, forms = [], []

    make_form = iw.question_form

    def form_of(question):
        form = make_form(question)
        forms.append(form)
        return form

    class Handle:  # a displayed output: an update shows its object again
        def update(self, obj, **_):
            shown.append(obj)

    def display(obj, *_, display_id=None, **__):
        shown.append(obj)
        return Handle() if display_id else None

    shown_as("kernel")
    monkeypatch.setattr("IPython.display.display", display)
    monkeypatch.setattr(iw, "question_form", form_of)
    return shown, forms


def in_background(fn, *args, **kwargs):
    box: dict = {}

    def run():
        try:
            box["result"] = fn(*args, **kwargs)
        except Exception as exc:  # noqa: BLE001 - handed to the test
            box["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, box


def replies(conn, method):
    asked = {e.id for e in conn.trace.frames("in") if e.kind == "request" and e.method == method}
    return [e.message for e in conn.trace.frames("out") if e.kind in ("response", "error") and e.id in asked]


XSS = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def assert_inert(markup: str) -> None:
    """No tag a server wrote survives: only our own markup is left."""
    assert not re.search(r"<\s*(script|img)", markup, re.IGNORECASE), markup
    assert 'onerror="' not in markup  # the attribute only as escaped text


WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


class Frontend:
    """The widget side of a browser, for one cell: models by comm id, and the messages to send."""

    def __init__(self, kernel: Kernel, cell: Cell) -> None:
        self.kernel, self.cell = kernel, cell

    def models(self) -> dict[str, dict[str, Any]]:
        """comm id -> widget state, from the cell's comm_open messages so far."""
        return {
            m["content"]["comm_id"]: m["content"]["data"]["state"] for m in self.cell.messages if m["msg_type"] == "comm_open"
        }

    def wait_for_display(self, timeout: float = 30.0) -> None:
        """Read the cell's output until a widget is displayed (the question form)."""

        def shown() -> bool:
            return any(m["msg_type"] == "display_data" and WIDGET_MIME in m["content"]["data"] for m in self.cell.messages)

        self.cell.pump(time.monotonic() + timeout, stop=shown)
        assert shown(), f"no widget displayed; cell output so far:\n{''.join(self.cell.stdout + self.cell.stderr)}"

    def find(self, model: str, **state: Any) -> str:
        """The comm id of the one widget of this model whose state has these values."""
        found = [
            cid
            for cid, s in self.models().items()
            if s.get("_model_name") == model and all(s.get(k) == v for k, v in state.items())
        ]
        assert len(found) == 1, f"{model} {state}: {found}"
        return found[0]

    def field_after(self, label: str) -> str:
        """The input widget beside the HTML label matching the `label` regex (a form row)."""
        models = self.models()
        labels = [
            cid for cid, s in models.items() if s.get("_model_name") == "HTMLModel" and re.search(label, s.get("value", ""))
        ]
        assert len(labels) == 1, labels
        row = next(
            s for s in models.values() if s.get("_model_name") == "HBoxModel" and s["children"][0] == f"IPY_MODEL_{labels[0]}"
        )
        return row["children"][1].removeprefix("IPY_MODEL_")

    def send(self, comm_id: str, data: dict[str, Any]) -> None:
        kc = self.kernel.kc
        kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": comm_id, "data": data}))

    def type_into(self, comm_id: str, value: Any) -> None:
        self.send(comm_id, {"method": "update", "state": {"value": value}, "buffer_paths": []})

    def click(self, comm_id: str) -> None:
        self.send(comm_id, {"method": "custom", "content": {"event": "click"}})
