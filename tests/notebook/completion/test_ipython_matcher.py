"""What IPython's completer offers with our matcher registered (`completion.ipython`): never a
blank entry where we have nothing, the tool's argument names before Python's, and the same
tools `%mcp tools` lists."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import mcp_notebook


def offered(shell: Any, code: str) -> list[str]:
    from IPython.core.completer import provisionalcompleter

    with provisionalcompleter():
        return [c.text for c in shell.Completer.completions(code, len(code))]


@pytest.fixture
def demo(shell: Any) -> Iterator[mcp_notebook.Connection]:
    with mcp_notebook.demo("d", apps=True, keepalive=None) as conn:
        shell.user_ns["conn"] = conn
        yield conn


def test_a_line_with_nothing_to_offer_offers_nothing_not_a_blank(shell: Any) -> None:
    for code in ("%mcp ping ", "%mcp call ", "%mcp call nope x"):
        assert offered(shell, code) == [], code  # and no Python name either
    with mcp_notebook.demo("one", keepalive=None), mcp_notebook.demo("two", keepalive=None):
        assert offered(shell, "%mcp ping ") == ["one", "two"]
        assert offered(shell, "%mcp call ") == []  # which connection's tools is not known: nothing, not ""


def test_a_tools_arguments_come_first_then_python_names(shell: Any, demo: mcp_notebook.Connection) -> None:
    found = offered(shell, 'conn.call_tool("add", ')
    assert found[:2] == ["a=", "b="]
    assert "timeout=" in found and "print" in found and "conn" in found  # call_tool's own options and Python's names follow
    assert offered(shell, 'conn.call_tool("add", a=1, ')[0] == "b="
    assert len(found) == len(set(found))


def test_call_offers_exactly_the_tools_that_tools_lists(shell: Any, demo: mcp_notebook.Connection) -> None:
    listed = sorted(shell.run_line_magic("mcp", "tools").names())
    assert "counters" in listed and "counters-poll" not in listed  # the app-only one is the view's
    assert offered(shell, "%mcp call ") == listed
    assert offered(shell, "%mcp call counters-p") == []
