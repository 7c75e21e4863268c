"""`%mcp tool NAME` (and `%mcp tools NAME` when NAME is no connection's): one tool's own view.

It shows the tool's full description, its argument and output schemas as trees, its
annotations and example calls to copy (`conn.describe_tool`), and in Jupyter, below that, a
form built from the input schema that calls the tool (`tool_form_widget`). Elsewhere it prints text.
"""

from __future__ import annotations

from argparse import Namespace

from ...api.connecting import connect as api
from ...api.connection import Connection
from ...base.errors import McpNotebookError
from .commands import arg, connection, connection_of, flag, pick, subcommand


def show_tool(conn: Connection, name: str, form: bool = True) -> None:
    """Display the tool's view (and, in Jupyter, its form); in a terminal, print the view's text."""
    from . import health as _magic_health

    view = conn.describe_tool(name)
    if not _magic_health._frontend():
        print(view._text())
        return
    _magic_health._display(view)
    if form:
        from ..widgets.tool_form import ToolForm

        _magic_health._display(ToolForm(conn, view.tool).widget)


def tool_named(name: str) -> Connection | None:
    """For `%mcp tools NAME`: the connection to show tool NAME of, when NAME names no connection
    and exactly one is open (None: NAME is to be read as a connection's name)."""
    if name in api.connections() or len(api.connections()) != 1:
        return None
    conn = pick(None)
    try:
        return conn if name in conn.list_tools().names() else None
    except McpNotebookError:  # no tools there: NAME was meant as a connection's name
        return None


@subcommand(
    "tool",
    "one tool: full description, arguments and output as trees, annotations, an example call; in Jupyter, a form that calls it",
    connection(),
    arg("tool", help="the tool's name"),
    flag("--no-form", help="the description only, no form"),
)
def _tool(ns: Namespace) -> None:
    show_tool(connection_of(ns), ns.tool, form=not ns.no_form)
