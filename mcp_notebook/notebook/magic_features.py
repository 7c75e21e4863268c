"""The feature subcommands: `%mcp tools`, `call` (and `%%mcp call`), `resources`, `read`,
`subscribe`, `unsubscribe`, `prompts`, `prompt`, `loglevel`, `logs`, `tasks`, `cancel`, and tab
completion of tool, prompt and template names and arguments. `subscribe` and `logs --live`
display live panels (`live_widgets`) in Jupyter and print text elsewhere.

They return result objects, so `r = %mcp call TOOL ...` keeps the result.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from ..api.progress import LOG_LEVELS
from ..api.results import Listing, PromptResult, ResourceResult, ToolResult
from ..api.validate import parse_pairs
from .commands import CommandError, Parser, count, pick, seconds, subcommand


def _pairs(pairs: list[str]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise CommandError(f"arguments are key=value pairs; {pair!r} is not one")
        out[key] = value
    return out


@subcommand("tools", "[NAME] [--refresh]", "the server's tools: name, title, description, arguments (* required), annotations")
def _tools(args: list[str]) -> Listing:
    parser = Parser("tools")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--refresh", action="store_true")
    ns = parser.parse_args(args)
    return pick(ns.name).list_tools(refresh=ns.refresh)


CALL_USAGE = "TOOL [key=value ...] [--conn NAME] [--timeout S] [--max-total S] [--no-progress]; %%mcp call TOOL with a JSON or YAML body"


def _call_parser() -> Parser:
    parser = Parser("call")
    parser.add_argument("tool")
    parser.add_argument("pairs", nargs="*")
    parser.add_argument("--conn", metavar="NAME")
    parser.add_argument("--timeout", type=seconds)
    parser.add_argument("--max-total", type=seconds)
    parser.add_argument("--no-progress", action="store_true")
    return parser


@subcommand("call", CALL_USAGE, "call a tool; values are parsed by its input schema; returns the result")
def _call(args: list[str], body: dict[str, Any] | None = None) -> ToolResult:
    ns = _call_parser().parse_args(args)
    conn = pick(ns.conn)
    arguments = dict(body or {})
    arguments.update(parse_pairs(ns.pairs, conn.tool(ns.tool).get("inputSchema")))
    return conn.call_tool(ns.tool, arguments, timeout=ns.timeout, max_total=ns.max_total,
                          progress=False if ns.no_progress else None)


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
            raise CommandError(f"the cell body is not JSON ({json_error}); YAML bodies need PyYAML (pip install pyyaml)") from None
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise CommandError(f"the cell body is neither JSON nor YAML: {' '.join(str(exc).split())}") from None
    if not isinstance(value, dict):
        raise CommandError("the cell body must be an object of arguments (JSON or YAML mapping)")
    return value


def run_cell(line: str, cell: str) -> Any:
    """`%%mcp call TOOL [key=value ...]` with the arguments in the cell body."""
    try:
        args = shlex.split(line)
    except ValueError as exc:
        raise CommandError(f"cannot parse the line: {exc}") from None
    if not args or args[0] != "call":
        raise CommandError("as a cell magic, %%mcp only runs `call TOOL`, with the arguments in the cell body")
    from ..base.errors import McpNotebookError

    try:
        return _call(args[1:], parse_body(cell))
    except CommandError:
        raise
    except McpNotebookError as exc:
        raise CommandError(str(exc)) from None


@subcommand("resources", "[NAME] [--templates] [--refresh]", "the server's resources (or resource templates)")
def _resources(args: list[str]) -> Listing:
    parser = Parser("resources")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--templates", action="store_true")
    parser.add_argument("--refresh", action="store_true")
    ns = parser.parse_args(args)
    conn = pick(ns.name)
    return conn.list_resource_templates(refresh=ns.refresh) if ns.templates else conn.list_resources(refresh=ns.refresh)


@subcommand("read", "URI | TEMPLATE var=value ... [--conn NAME]", "read a resource, or the one a template makes from its variables")
def _read(args: list[str]) -> ResourceResult:
    parser = Parser("read")
    parser.add_argument("target")
    parser.add_argument("pairs", nargs="*")
    parser.add_argument("--conn", metavar="NAME")
    ns = parser.parse_args(args)
    conn = pick(ns.conn)
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
    "subscribe", "[URI] [--conn NAME] [--read]",
    "subscribe to a resource and show its updates live (--read: re-read it on each update and show the content); "
    "with no URI: every subscription of the connection, live",
)
def _subscribe(args: list[str]) -> None:
    parser = Parser("subscribe")
    parser.add_argument("uri", nargs="?")
    parser.add_argument("--conn", metavar="NAME")
    parser.add_argument("--read", action="store_true", help="re-read the resource on each update")
    ns = parser.parse_args(args)
    conn = pick(ns.conn)
    if ns.uri is not None:
        conn.subscribe(ns.uri)
    if _frontend():
        _show(conn.subscriptions_panel(ns.uri, read=ns.read))
        return
    if ns.uri is not None:
        print(f"subscribed to {ns.uri} on {conn.name!r}; conn.resource_updates(uri) counts its updates"
              + (" (live content needs a Jupyter widget frontend)" if ns.read else ""))
    else:
        from ..api.panels import subscriptions_snapshot

        print(subscriptions_snapshot(conn.feature_state)[0])


@subcommand("unsubscribe", "URI [--conn NAME]", "stop a resource subscription (its live view says so and stops)")
def _unsubscribe(args: list[str]) -> None:
    parser = Parser("unsubscribe")
    parser.add_argument("uri")
    parser.add_argument("--conn", metavar="NAME")
    ns = parser.parse_args(args)
    conn = pick(ns.conn)
    conn.unsubscribe(ns.uri)
    updates = conn.resource_updates(ns.uri)
    print(f"unsubscribed from {ns.uri} on {conn.name!r} after {updates} update{'s' if updates != 1 else ''}")


@subcommand("prompts", "[NAME] [--refresh]", "the server's prompts and their arguments (* required)")
def _prompts(args: list[str]) -> Listing:
    parser = Parser("prompts")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--refresh", action="store_true")
    ns = parser.parse_args(args)
    return pick(ns.name).list_prompts(refresh=ns.refresh)


@subcommand("prompt", "PROMPT [arg=value ...] [--conn NAME]", "get a prompt's messages with these arguments")
def _prompt(args: list[str]) -> PromptResult:
    parser = Parser("prompt")
    parser.add_argument("prompt")
    parser.add_argument("pairs", nargs="*")
    parser.add_argument("--conn", metavar="NAME")
    ns = parser.parse_args(args)
    return pick(ns.conn).get_prompt(ns.prompt, _pairs(ns.pairs))


@subcommand("roots", "[PATH ...] [--conn NAME]",
            "the roots this client offers; with paths, change them and tell the server (roots/list_changed)")
def _roots(args: list[str]) -> None:
    parser = Parser("roots")
    parser.add_argument("paths", nargs="*", metavar="PATH")
    parser.add_argument("--conn", metavar="NAME")
    ns = parser.parse_args(args)
    conn = pick(ns.conn)
    if ns.paths:
        conn.set_roots(ns.paths)
    roots = conn.roots
    if roots is None:
        print(f"{conn.name}: no roots offered (connect with roots=[path, ...] to offer some)")
        return
    print(f"{conn.name}: {len(roots)} root(s)" + "".join(f"\n  {root['uri']}" for root in roots))


@subcommand("loglevel", "LEVEL [--conn NAME]",
            "the least severe server log level to receive (legacy: logging/setLevel; modern: sent with each request)")
def _loglevel(args: list[str]) -> None:
    parser = Parser("loglevel")
    parser.add_argument("level", choices=LOG_LEVELS)
    parser.add_argument("--conn", metavar="NAME")
    ns = parser.parse_args(args)
    conn = pick(ns.conn)
    conn.set_log_level(ns.level)
    if conn.era == "modern":
        print(f"{conn.name}: server log level {ns.level}, sent with each request as _meta "
              "io.modelcontextprotocol/logLevel (2026-07-28 has no logging/setLevel)")
    else:
        print(f"{conn.name}: server log level {ns.level} (logging/setLevel)")


@subcommand(
    "logs", "[NAME] [--last N] [--level LEVEL] [--unrouted] [--live] [--save PATH]",
    "the server's log messages, those shown in a waiting cell marked (--live: a widget that follows new "
    "ones; --unrouted: only those no cell showed; --save: JSON lines)",
)
def _logs(args: list[str]) -> None:
    from ..api.panels import LOG_ROWS, logs_snapshot, write_jsonl

    parser = Parser("logs")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--last", type=count, help="how many of the newest (default: 50; live 200; --save all kept)")
    parser.add_argument("--level", choices=LOG_LEVELS, help="the least severe level shown")
    parser.add_argument("--unrouted", action="store_true", help="only the messages no waiting cell showed")
    parser.add_argument("--live", action="store_true")
    parser.add_argument("--save", metavar="PATH")
    ns = parser.parse_args(args)
    conn = pick(ns.name)
    if ns.save:
        try:
            written = write_jsonl(conn.log_records(last=ns.last, level=ns.level, unrouted_only=ns.unrouted), ns.save)
        except OSError as exc:
            raise CommandError(f"cannot write {ns.save}: {exc.strerror or exc}") from None
        print(f"saved {written} log message{'s' if written != 1 else ''} to {ns.save}")
        return
    if ns.live and _frontend():
        _show(conn.log_panel(level=ns.level, unrouted_only=ns.unrouted, rows=ns.last or LOG_ROWS))
        return
    text, html = logs_snapshot(conn.feature_state, last=ns.last or 50, level=ns.level, unrouted_only=ns.unrouted)
    if _frontend():
        from .magic_health import _Html

        _show(_Html(html, text))
        return
    if ns.live:
        print("(a live panel needs a Jupyter widget frontend; this is a snapshot)")
    print(text)


@subcommand("tasks", "[NAME]", "the server's tasks (tasks/list): id, status, status message, created, last updated")
def _tasks(args: list[str]) -> Listing:
    parser = Parser("tasks")
    parser.add_argument("name", nargs="?")
    ns = parser.parse_args(args)
    return pick(ns.name).list_tasks()


@subcommand("cancel", "REQUEST_ID [--conn NAME]", "cancel one of our in-flight requests (notifications/cancelled)")
def _cancel(args: list[str]) -> None:
    parser = Parser("cancel")
    parser.add_argument("request_id", type=int)
    parser.add_argument("--conn", metavar="NAME")
    ns = parser.parse_args(args)
    conn = pick(ns.conn)
    print(f"cancelled request {ns.request_id}" if conn.cancel(ns.request_id) else f"no request {ns.request_id} in flight")


# ----- tab completion -----


def completions(line: str, symbol: str) -> list[str]:
    """Candidates for the word being typed in a `%mcp` line (never raises)."""
    try:
        return _completions(line, symbol)
    except Exception:  # noqa: BLE001 - a completer must never break the shell
        return []


def _completions(line: str, symbol: str) -> list[str]:
    try:
        words = shlex.split(line)
    except ValueError:  # an unfinished quote
        words = line.split()
    if words and words[0].lstrip("%") == "mcp":
        words = words[1:]
    typed = len(words) - (0 if line.endswith(" ") else 1)  # words before the one being typed
    if not words or typed < 1:
        return []
    sub, conn = words[0], None
    if "--conn" in words[:-1]:
        conn = words[words.index("--conn") + 1]
    if sub not in ("call", "prompt", "read"):
        return []
    connection = pick(conn)
    if typed == 1:
        source = {"call": connection.list_tools, "prompt": connection.list_prompts,
                  "read": lambda: [*connection.list_resources(), *connection.list_resource_templates()]}[sub]()
        names = [item.get("name") if sub != "read" else item.get("uri") or item.get("name") for item in source]
        return [n for n in names if isinstance(n, str) and n.startswith(symbol)]
    target = words[1]
    given = dict(w.partition("=")[::2] for w in words[2:] if "=" in w and w != symbol)
    key, has_eq, value = symbol.partition("=")
    if sub == "call":
        props = (connection.tool(target).get("inputSchema") or {}).get("properties") or {}
        if not has_eq:
            return [f"{n}=" for n in props if n.startswith(key) and n not in given]
        enum = (props.get(key) or {}).get("enum") or []
        return [f"{key}={v}" for v in enum if str(v).startswith(value)]
    if sub == "prompt":
        prompt = connection.list_prompts().get(target) or {}
        names = [a.get("name") for a in prompt.get("arguments") or []]
        ref = f"prompt:{target}"
    else:
        template = connection.template(target)
        import re

        names = re.findall(r"[\w.]+", " ".join(re.findall(r"\{([^}]*)\}", template["uriTemplate"])))
        ref = f"resource:{template['uriTemplate']}"
    if not has_eq:
        return [f"{n}=" for n in names if isinstance(n, str) and n.startswith(key) and n not in given]
    return [f"{key}={v}" for v in connection.complete(ref, key, value, given or None)]


def register_completer(ipython: Any) -> None:
    """Offer tool, prompt and template names and arguments on Tab after `%mcp`."""
    ipython.set_hook("complete_command", lambda _self, event: completions(event.line, event.symbol), str_key="%mcp")
