"""The tool subcommands: `%mcp tools`, `call` (and `%%mcp call`, its arguments in the cell body),
and `tool NAME` (also `%mcp tools NAME` when NAME is no connection's): one tool's own view, with
in Jupyter a form that calls it (`widgets.tool_form`). Each works on one connection, named as
`commands.connection` says; they return result objects, so `r = %mcp call TOOL ...` keeps the result.
"""

from __future__ import annotations

import json
from argparse import Namespace
from typing import Any

from ...api.apps import host as app_host
from ...api.apps.methods import model_tools
from ...api.connecting import connect as api
from ...api.connection import Connection
from ...api.results.objects import Listing, ToolResult
from ...api.tools import pins as tool_pins
from ...api.tools.arguments import parse_pairs
from ...base.errors import McpNotebookError
from . import show
from .commands import (
    REFRESH,
    CommandError,
    arg,
    connection,
    connection_of,
    dispatch,
    exclusive,
    flag,
    pairs,
    pick,
    seconds,
    split,
    subcommand,
    timeout,
)
from .configs import DiffView, tools_diff


@subcommand(
    "tools",
    "the server's tools: name, title, description, arguments (* required), annotation badges, output schema, view (MCP Apps); "
    "a warning if they changed since they were pinned (--diff: how; --accept: pin them as they are now); "
    "with a tool's name instead of a connection's (or after -c CONN), that tool's own view (as %mcp tool NAME)",
    connection(positional=True, or_other="tool"),
    REFRESH,
    exclusive(
        flag("--diff", help="how the tools differ from their pin (the definitions first seen of this server)"),
        flag("--accept", help="pin the tools as they are now: later changes are measured from these"),
    ),
    flag("--all", help='also list app-only tools (MCP Apps: visibility ["app"]), hidden by default'),
)
def _tools(ns: Namespace) -> Listing | DiffView | None:
    if ns.tool is not None:  # `%mcp tools -c ev get-sum`
        show_tool(connection_of(ns), ns.tool)
        return None
    if ns.conn is not None and (owner := tool_named(ns.conn)) is not None:
        show_tool(owner, ns.conn)  # `%mcp tools get-sum`: that tool's own view, as `%mcp tool get-sum`
        return None
    conn = connection_of(ns)
    if ns.diff or ns.accept:
        return tools_diff(conn, accept=ns.accept)
    listing = conn.list_tools(refresh=ns.refresh)
    tool_pins.check(conn, refresh=ns.refresh)
    return model_tools(listing, everything=ns.all, views=app_host.of(conn).enabled)


@subcommand(
    "call",
    "call a tool; values are parsed by its input schema; returns the result",
    connection(),
    arg("tool", help="the tool's name"),
    pairs("key=value", "the tool's arguments, each value parsed by the tool's input schema"),
    timeout("how long to wait for the result (default: the connection's)"),
    arg("--max-total", type=seconds, metavar="S", help="give up after this long even while progress comes"),
    flag("--no-progress", help="show no progress bar"),
    epilog="As a cell magic, %%mcp call TOOL [key=value ...] takes the arguments from the cell body: a JSON object "
    "or (with PyYAML) a YAML mapping; arguments on the line are added to those.",
)
def _call(ns: Namespace, body: dict[str, Any] | None = None) -> ToolResult:
    conn = connection_of(ns)
    arguments = dict(body or {})
    arguments.update(parse_pairs(ns.pairs, conn.tool(ns.tool).get("inputSchema")))
    return conn.call_tool(
        ns.tool, arguments, timeout=ns.timeout, max_total=ns.max_total, progress=False if ns.no_progress else None
    )


def parse_body(cell: str) -> dict[str, Any]:
    """A `%%mcp call` cell body: a JSON object, or YAML when PyYAML is installed."""
    text = cell.strip()
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError as json_error:
        try:
            import yaml
        except ImportError:
            raise CommandError(
                f"the cell body is not JSON ({json_error}); YAML bodies need PyYAML (pip install pyyaml)"
            ) from None
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CommandError(f"the cell body is neither JSON nor YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(value, dict):
        raise CommandError("the cell body must be an object of arguments (JSON or YAML mapping)")
    return value


def run_cell(line: str, cell: str) -> Any:
    """`%%mcp call TOOL [key=value ...]` with the arguments in the cell body."""
    args = split(line)
    if not args or args[0] != "call":
        raise CommandError("as a cell magic, %%mcp only runs `call TOOL`, with the arguments in the cell body")
    return dispatch(args, body=parse_body(cell))


def show_tool(conn: Connection, name: str, form: bool = True) -> None:
    """Display the tool's view (and, in Jupyter, its form); in a terminal, print the view's text."""
    view = conn.describe_tool(name)
    if not show.frontend():
        print(view._text())
        return
    show.display(view)
    if form:
        from ..widgets.tool_form import ToolForm

        show.display(ToolForm(conn, view.tool).widget)


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
