"""`%mcp doctor` and the doctor's live checklist widget in a kernel."""

from __future__ import annotations

import json
import sys
from typing import Any

import IPython.display
import pytest
from IPython.core.error import UsageError as IPythonUsageError

import mcp_notebook
from mcp_notebook.notebook.magics.mcp import run_line

DEMO = f"{sys.executable} -m mcp_notebook.demo_server"


def test_the_magic_takes_a_command_after_dashes(capsys):
    assert run_line(f"doctor -- {DEMO}") is None  # the checklist is the output
    out = capsys.readouterr().out
    assert "✔ listings: ok" in out and out.rstrip().endswith("ok over stdio")


def test_the_magic_takes_a_url(capsys, port):
    run_line(f"doctor http://127.0.0.1:{port}/mcp --timeout 2")
    assert "✘ TCP connect: fail — nothing is listening" in capsys.readouterr().out


def test_the_magic_needs_a_target():
    with pytest.raises(IPythonUsageError, match="doctor needs a URL"):
        run_line("doctor")
    with pytest.raises(IPythonUsageError, match="not both"):
        run_line(f"doctor http://127.0.0.1:1/mcp -- {DEMO}")


class Handle:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    def update(self, obj: Any) -> None:
        self.updates.append(obj)


def test_in_a_kernel_the_checklist_is_a_widget_updated_per_step(shown_as, monkeypatch):
    shown_as("kernel")
    shown, handle, values, texts = [], Handle(), [], []

    def display(obj: Any, display_id: bool = False) -> Handle:
        shown.append(obj)
        texts.append(obj._repr_mimebundle_()["text/plain"])  # what a front end with no widgets shows
        obj.observe(lambda change: values.append(change["new"]), "value")
        values.append(obj.value)
        return handle

    monkeypatch.setattr(IPython.display, "display", display)
    diagnosis = mcp_notebook.doctor([sys.executable, "-c", "import sys; sys.exit(3)"])
    assert len(shown) == 1  # one widget, redrawn in place
    assert "checking…" in values[0] and "command" in values[0]  # the first step, under way
    assert len(texts) == 1 and texts[0].startswith("doctor ") and texts[0].endswith("… command"), texts  # not HTML(value=...)
    assert any("✘" in value and "process" in value for value in values)
    assert handle.updates == [diagnosis]  # at the end the diagnosis itself replaces it (saved notebooks keep it)
    assert shown[0].comm is None  # the widget is closed


def test_the_magic_diagnoses_a_configured_server_with_consent(config_home, capsys):
    home, _ = config_home
    (home / ".cursor").mkdir()
    entry = {"command": sys.executable, "args": ["-m", "mcp_notebook.demo_server"]}
    (home / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": {"demo-config": entry}}))
    run_line("doctor demo-config --from cursor --consent")
    out = capsys.readouterr().out
    assert "-m mcp_notebook.demo_server (stdio)" in out.splitlines()[0] and out.rstrip().endswith("ok over stdio")
    with pytest.raises(IPythonUsageError, match="for configured servers"):
        run_line("doctor http://127.0.0.1:1/mcp --consent")
