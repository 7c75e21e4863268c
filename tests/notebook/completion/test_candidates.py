"""What Tab offers on a `%mcp` line (`completion.candidates`): a connection's tools, their
arguments and values, prompts and templates with the server's own `completion/complete`, and
paths where a line takes a path."""

from __future__ import annotations

import pytest

from mcp_notebook.notebook.completion import candidates
from mcp_notebook.notebook.magics import mcp as magics  # noqa: F401 - registers the subcommands

pytestmark = [pytest.mark.node]


def test_tab_completion_of_tools_arguments_prompts_and_templates(ev_shell):
    def complete(line: str) -> list[str]:
        return candidates.completions(line)[1]

    assert complete("%mcp call get-s") == ["get-structured-content", "get-sum"]
    assert complete("%mcp call get-sum ") == ["a=", "b="]
    assert complete("%mcp call get-sum a=1 ") == ["b="]
    assert complete("%mcp call get-structured-content location=C") == ["location=Chicago"]
    assert complete("%mcp call get-structured-content location='New Y") == ["location='New York'"]  # an open quote
    assert complete("%mcp prompt completable-prompt department=E") == ["department=Engineering"]
    assert complete("%mcp prompt completable-prompt department=Sales name=") == ["name=David", "name=Eve", "name=Frank"]
    assert "resourceId=1" in complete("%mcp read 'Dynamic Text Resource' resourceId=1")
    assert complete("%mcp call nope ") == []  # never raises
    assert complete("%mcp call -c ev get-sum ") == ["a=", "b="]
    assert complete("%mcp call --conn=ev get-s") == ["get-structured-content", "get-sum"]
    assert complete("%mcp call --conn e") == ["ev"]


def test_paths_complete_where_a_line_takes_paths(tmp_path):
    (tmp_path / "server.py").write_text("")
    (tmp_path / "data").mkdir()
    at = f"{tmp_path}/"
    for line in (f"connect fs --roots {at}", f"roots {at}", f"logs --save {at}", f"connect x -- python {at}"):
        assert candidates.completions(f"%mcp {line}")[1] == [f"{at}data/", f"{at}server.py"], line
    assert candidates.completions(f"%mcp connect fs --roots {at}d")[1] == [f"{at}data/"]
    assert candidates.completions("%mcp connect x --ro")[1] == ["--roots"]
