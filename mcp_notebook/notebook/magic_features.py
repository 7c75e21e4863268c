"""The feature subcommands: `%mcp tools`, `call` (and `%%mcp call`), `resources`, `read`,
`subscribe`, `unsubscribe`, `prompts`, `prompt`, `roots`, `loglevel`, `logs`, `tasks`, `cancel`
(their tab completion is `magic_completion`'s). Each works on one connection, named as
`commands.connection` says. `subscribe` and `logs --live` display live panels
(`live_widgets`) in Jupyter and print text elsewhere.

They return result objects, so `r = %mcp call TOOL ...` keeps the result.
"""

from __future__ import annotations

import json
from argparse import Namespace
from typing import Any

from ..api.apps import host as app_host
from ..api.apps.methods import model_tools
from ..api.calls.progress import LOG_LEVELS
from ..api.results.objects import Listing, PromptResult, ResourceResult, ToolResult
from ..api.tools import pins as tool_pins
from ..api.tools.validate import parse_pairs
from ..base.plural import counted
from .commands import (
    LIVE,
    REFRESH,
    CommandError,
    arg,
    connection,
    connection_of,
    dispatch,
    exclusive,
    flag,
    last,
    pairs,
    save,
    seconds,
    split,
    subcommand,
    timeout,
)
from .magic_configs import DiffView, tools_diff


def _pairs(words: list[str]) -> dict[str, str]:
    out = {}
    for pair in words:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"arguments are key=value pairs; {pair!r} is not one")
        out[key] = value
    return out


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
    from .magic_tool import show_tool, tool_named

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


@subcommand(
    "resources",
    "the server's resources (or resource templates)",
    connection(positional=True),
    flag("--templates", help="the resource templates instead"),
    REFRESH,
)
def _resources(ns: Namespace) -> Listing:
    conn = connection_of(ns)
    return conn.list_resource_templates(refresh=ns.refresh) if ns.templates else conn.list_resources(refresh=ns.refresh)


@subcommand(
    "read",
    "read a resource, or the one a template makes from its variables",
    connection(),
    arg("target", help="a resource URI, or a resource template (its URI template or name)"),
    pairs("var=value", "a template's variables"),
)
def _read(ns: Namespace) -> ResourceResult:
    conn = connection_of(ns)
    if ns.pairs or "{" in ns.target:
        return conn.read_template(ns.target, **_pairs(ns.pairs))
    return conn.read_resource(ns.target)


def _show(obj: Any) -> None:
    from . import magic_health as _magic_health

    _magic_health._display(obj)


def _frontend() -> bool:
    from . import magic_health as _magic_health

    return _magic_health._frontend()


@subcommand(
    "subscribe",
    "subscribe to a resource and show its updates live (--read: re-read it on each update and show the content); "
    "with no URI: every subscription of the connection, live",
    connection(),
    arg("uri", nargs="?", help="the resource to subscribe to"),
    flag("--read", help="re-read the resource on each update"),
)
def _subscribe(ns: Namespace) -> None:
    conn = connection_of(ns)
    if ns.uri is not None:
        conn.subscribe(ns.uri)
    if _frontend():
        _show(conn.subscriptions_panel(ns.uri, read=ns.read))
        return
    if ns.uri is not None:
        print(
            f"subscribed to {ns.uri} on {conn.name!r}; conn.resource_updates(uri) counts its updates"
            + (" (live content needs a Jupyter widget frontend)" if ns.read else "")
        )
    else:
        from ..api.display.panels import subscriptions_snapshot

        print(subscriptions_snapshot(conn)[0])


@subcommand(
    "unsubscribe",
    "stop a resource subscription (its live view says so and stops)",
    connection(),
    arg("uri", help="the resource"),
)
def _unsubscribe(ns: Namespace) -> None:
    conn = connection_of(ns)
    conn.unsubscribe(ns.uri)
    updates = conn.resource_updates(ns.uri)
    print(f"unsubscribed from {ns.uri} on {conn.name!r} after {counted(updates, 'update')}")


@subcommand("prompts", "the server's prompts and their arguments (* required)", connection(positional=True), REFRESH)
def _prompts(ns: Namespace) -> Listing:
    return connection_of(ns).list_prompts(refresh=ns.refresh)


@subcommand(
    "prompt",
    "get a prompt's messages with these arguments",
    connection(),
    arg("prompt", help="the prompt's name"),
    pairs("arg=value", "the prompt's arguments"),
)
def _prompt(ns: Namespace) -> PromptResult:
    return connection_of(ns).get_prompt(ns.prompt, _pairs(ns.pairs))


@subcommand(
    "roots",
    "the roots this client offers; with paths, change them and tell the server (roots/list_changed)",
    connection(),
    arg("paths", nargs="*", default=[], metavar="PATH", help="the new roots"),
)
def _roots(ns: Namespace) -> None:
    conn = connection_of(ns)
    if ns.paths:
        conn.set_roots(ns.paths)
    roots = conn.roots
    if roots is None:
        print(f"{conn.name}: no roots offered (connect with roots=[path, ...] to offer some)")
        return
    print(f"{conn.name}: {len(roots)} root(s)" + "".join(f"\n  {root['uri']}" for root in roots))


@subcommand(
    "loglevel",
    "the least severe server log level to receive (legacy: logging/setLevel; modern: sent with each request)",
    connection(),
    arg("level", choices=LOG_LEVELS, help="the least severe level to receive"),
)
def _loglevel(ns: Namespace) -> None:
    conn = connection_of(ns)
    conn.set_log_level(ns.level)
    if conn.rules.log_level_per_request:
        print(
            f"{conn.name}: server log level {ns.level}, sent with each request as _meta "
            "io.modelcontextprotocol/logLevel (2026-07-28 has no logging/setLevel)"
        )
    else:
        print(f"{conn.name}: server log level {ns.level} (logging/setLevel)")


@subcommand(
    "logs",
    "the server's log messages, those shown in a waiting cell marked (--live: a widget that follows new "
    "ones; --unrouted: only those no cell showed; --save: JSON lines)",
    connection(positional=True),
    LIVE,
    last("how many of the newest (default: 50; live 200; --save all kept)"),
    arg("--level", metavar="LEVEL", choices=LOG_LEVELS, help=f"the least severe level shown: {', '.join(LOG_LEVELS)}"),
    flag("--unrouted", help="only the messages no waiting cell showed"),
    save("log messages"),
)
def _logs(ns: Namespace) -> None:
    from ..api.display.panels import LOG_ROWS, logs_snapshot, write_jsonl

    conn = connection_of(ns)
    if ns.save:
        try:
            written = write_jsonl(conn.log_records(last=ns.last, level=ns.level, unrouted_only=ns.unrouted), ns.save)
        except OSError as exc:
            raise CommandError(f"cannot write {ns.save}: {exc.strerror or exc}") from None
        print(f"saved {counted(written, 'log message')} to {ns.save}")
        return
    if ns.live and _frontend():
        _show(conn.log_panel(level=ns.level, unrouted_only=ns.unrouted, rows=ns.last or LOG_ROWS))
        return
    text, html = logs_snapshot(conn, last=ns.last or 50, level=ns.level, unrouted_only=ns.unrouted)
    if _frontend():
        from .magic_health import _Html

        _show(_Html(html, text))
        return
    if ns.live:
        print("(a live panel needs a Jupyter widget frontend; this is a snapshot)")
    print(text)


@subcommand(
    "tasks", "the server's tasks (tasks/list): id, status, status message, created, last updated", connection(positional=True)
)
def _tasks(ns: Namespace) -> Listing:
    return connection_of(ns).list_tasks()


@subcommand(
    "cancel",
    "cancel one of our in-flight requests (notifications/cancelled)",
    connection(),
    arg("request_id", type=int, help="the request's JSON-RPC id"),
)
def _cancel(ns: Namespace) -> None:
    conn = connection_of(ns)
    print(f"cancelled request {ns.request_id}" if conn.cancel(ns.request_id) else f"no request {ns.request_id} in flight")
