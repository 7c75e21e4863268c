"""`%mcp violations` and `%mcp connect --strict`, driven through a real IPython shell."""

from __future__ import annotations

import shlex
import sys

import pytest
from support.servers import SERVERS_DIR

import mcp_notebook
from mcp_notebook.notebook.magics import show as _show
from mcp_notebook.notebook.render import violations as violations_view
from mcp_notebook.notebook.widgets import pump as _widgets
from mcp_notebook.protocol.frame_rules import Violation

RAW = [sys.executable, str(SERVERS_DIR / "raw_server.py")]


@pytest.fixture
def banner():
    """A connection whose server printed a banner on stdout, and sent a response to nothing."""
    with mcp_notebook.connect(RAW, era="legacy", name="banner") as conn:
        for rule in ("not-json-rpc", "unmatched-response"):
            conn.request("tools/call", {"name": "violate", "arguments": {"rule": rule}})
        yield conn


def test_violations_as_text(module_shell, capsys, banner):
    module_shell.run_line_magic("mcp", "violations banner")
    out = capsys.readouterr().out
    assert out.startswith("banner: 2 violations")
    assert "not-json-rpc" in out and "unmatched-response" in out and "/id" in out
    assert "https://modelcontextprotocol.io/specification/2025-11-25/basic/transports#stdio" in out
    module_shell.run_line_magic("mcp", "violations -c banner --rule unmatched-response")
    out = capsys.readouterr().out
    assert "1 violation" in out and "not-json-rpc" not in out


def test_violations_as_html_in_jupyter(module_shell, capsys, banner, monkeypatch):
    shown: list = []
    monkeypatch.setattr(_widgets, "has_widget_frontend", lambda: True)
    monkeypatch.setattr(_show, "display", shown.append)
    module_shell.run_line_magic("mcp", "violations banner --last 1")
    [table] = shown
    html = table._repr_mimebundle_()["text/html"]
    assert "the last 1 of 2" in html and "<b>unmatched-response</b>" in html and "not-json-rpc" not in html


def test_a_clean_connection_says_so(module_shell, capsys):
    with mcp_notebook.connect(RAW, era="legacy", name="clean") as conn:
        conn.ping()
        module_shell.run_line_magic("mcp", "violations clean")
        assert "clean: no violations" in capsys.readouterr().out


def test_server_text_is_inert_in_html_and_plain_in_text():
    hostile = Violation(
        3,
        "in",
        "tools/list",
        "/result/tools/0/name",
        "duplicate-tool",
        "tool '<script>x</script>\x1b[31m'",
        "javascript:alert(1)",
    )
    html = violations_view.html("c", [hostile], 1)
    assert "<script>" not in html and "&lt;script&gt;" in html and "javascript:" not in html
    assert "\x1b" not in violations_view.text("c", [hostile], 1)


def test_connect_strict(module_shell, capsys):
    command = " ".join(shlex.quote(part) for part in RAW)
    module_shell.run_line_magic("mcp", f"connect strictly --strict -- {command}")
    conn = mcp_notebook.get_connection("strictly")
    try:
        assert conn._session.checker.strict
        with pytest.raises(mcp_notebook.ConnectionClosed, match="not-json-rpc"):
            conn.request("tools/call", {"name": "violate", "arguments": {"rule": "not-json-rpc"}})
    finally:
        conn.close()


def test_the_trace_marks_the_entries_that_broke_a_rule(module_shell, capsys, banner):
    [first, second] = banner.violations
    module_shell.run_line_magic("mcp", "trace banner --last 100")
    lines = capsys.readouterr().out.splitlines()
    marked = [line for line in lines if "⚠" in line]
    assert len(marked) == 2
    assert marked[0].lstrip().startswith(str(first.index)) and "⚠ not-json-rpc" in marked[0]
    assert "⚠ unmatched-response" in marked[1]


def test_the_line_completes_the_subcommand_and_its_rules():
    from mcp_notebook.notebook.completion.candidates import candidates

    assert "violations" in candidates([], "vio")
    assert candidates(["violations", "--rule"], "cur") == ["cursor-loop"]
    assert "--strict" in candidates(["connect", "x"], "--st")
