"""What Tab offers on the text before the cursor: on `%mcp` lines, and for the names a
connection's methods take. Pure logic; `completion.ipython` plugs it into IPython.

On a `%mcp` line (also `r = %mcp ...` and the first line of `%%mcp`) the candidates are ours
alone: subcommands, their options and option values, connection names, the tools, prompts,
resources and templates of the connection the line names (by `-c/--conn`, by its leading name,
or the only one open), argument names, enum values and booleans, and the server's own
`completion/complete` for prompt and template arguments, all read from the subcommands'
parsers (`commands`). Inside `conn.call_tool("`, `conn.get_prompt("`, `conn.read_resource("`
and their kin, the names those methods take; after `conn.call_tool("TOOL", `, its arguments.

The rules kept here: nothing here imports IPython, not even lazily (`tests/test_architecture.py`
checks it); completion never blocks the kernel for long and never raises (listings are asked
for as `completion.sources` says; `completion/complete` has `WAIT` as its timeout).
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import shlex
from dataclasses import dataclass
from typing import Any

from ...api.connecting import connect as api
from ...api.connection import Connection
from ...api.tools.view import CALL_PARAMETERS
from ...taps import registry as taps
from ..magics import commands, words
from ..magics.configs import completions as config_completions
from .sources import (
    WAIT,
    bounded,
    names_of,
    paths,
    prompt_names,
    resource_uris,
    schema_of,
    templates,
    tool_names,
)

_MCP_LINE = re.compile(r"^\s*(?:[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)?%{1,2}mcp\s")
_METHOD_CALL = re.compile(r"(?P<obj>[A-Za-z_]\w*)\s*\.\s*(?P<method>\w+)\(\s*(?P<quote>[\"'])(?P<fragment>[^\"'\\]*)$")
_KEYWORD = re.compile(
    r"(?P<obj>[A-Za-z_]\w*)\s*\.\s*a?call_tool\(\s*(?P<q>[\"'])(?P<tool>[^\"'\\]+)(?P=q)(?P<rest>[^()]*),\s*(?P<word>\w*)$"
)
TOOL_METHODS = {"call_tool", "acall_tool", "tool", "atool", "check_arguments", "acheck_arguments"}
PROMPT_METHODS = {"get_prompt", "aget_prompt"}
RESOURCE_METHODS = {"read_resource", "aread_resource", "subscribe", "asubscribe", "unsubscribe", "aunsubscribe"}
TEMPLATE_METHODS = {"read_template", "aread_template", "template", "atemplate", "fill_template", "afill_template"}


# ----- a %mcp line -----


def connection_named(name: str | None) -> Connection | None:
    """The connection a line names, or the only open one; None if that does not exist."""
    open_ = api.connections()
    if name is not None:
        return open_.get(name)
    return next(iter(open_.values())) if len(open_) == 1 else None


class _Line:
    """What the finished words of a `%mcp SUBCOMMAND ...` line say about the word being typed."""

    def __init__(self, parser: commands.Parser, done: list[str]) -> None:
        self.conn: str | None = None
        self.pending: argparse.Action | None = None  # an option waiting for its value
        self.positionals: list[str] = []
        self.used: set[str] = set()
        self.after_dashes = False
        options = {flag: action for action in parser._actions for flag in action.option_strings}
        i = 0
        while i < len(done):
            word = done[i]
            name, eq, value = word.partition("=")
            if word == "--":
                self.after_dashes = True
                return
            if word.startswith("--") and eq and name in options:
                self._take(options[name], value)
                i += 1
                continue
            action = options.get(word)
            if action is None:
                self.positionals.append(word)
                i += 1
                continue
            self.used.update(action.option_strings)
            if action.nargs == 0:
                i += 1
                continue
            values = [w for w in done[i + 1 :]]
            if action.nargs in ("+", "*"):
                taken = next((n for n, w in enumerate(values) if w.startswith("-")), len(values))
                if taken == len(values):
                    self.pending = action
                i += 1 + taken
                continue
            if not values:
                self.pending = action
                return
            self._take(action, values[0])
            i += 2

    def _take(self, action: argparse.Action, value: str) -> None:
        self.used.update(action.option_strings)
        if action.dest == "conn":
            self.conn = value


def options_of(parser: commands.Parser, used: set[str]) -> list[str]:
    """Each option once, in its long form, that is not given yet (help last)."""
    found = []
    for action in parser._actions:
        if action.help == argparse.SUPPRESS or used & set(action.option_strings) or not action.option_strings:
            continue
        found.append(max(action.option_strings, key=len))
    return [*found, "--help"]


def candidates(done: list[str], fragment: str) -> list[str]:
    """What may come next on a `%mcp` line whose finished words are `done` (after `%mcp`)."""
    if not done:
        return [name for name in commands.SUBCOMMANDS if name.startswith(fragment)]
    sub = commands.SUBCOMMANDS.get(done[0])
    if sub is None:
        return []
    configured = config_completions(done, fragment)  # `connect NAME`, `--from FILE|CLIENT`
    if configured is not None:
        return configured
    line = _Line(sub.parser, done[1:])
    if line.after_dashes:
        return paths(fragment)  # a server command's files
    if line.pending is not None:
        if line.pending.dest == "conn":
            found: list[str] = _names(sub)
        elif line.pending.metavar == "PATH":
            return paths(fragment)
        else:
            found = [str(choice) for choice in line.pending.choices or ()]
        return [value for value in found if value.startswith(fragment)]
    if fragment.startswith("-"):
        return [option for option in options_of(sub.parser, line.used) if option.startswith(fragment)]
    positionals = line.positionals
    if sub.parser.connection == "positional" and positionals and positionals[0] in api.connections():
        if sub.name == "tools":
            return []  # `%mcp tools NAME` takes one name, a connection's or a tool's
        line.conn, positionals = positionals[0], positionals[1:]
    elif sub.parser.connection == "positional" and not positionals and sub.name not in ("tools", "tool"):
        return [name for name in _names(sub) if name.startswith(fragment)]
    found = _positional(sub, line.conn, positionals, fragment)
    return [value for value in found if value.startswith(fragment)]


TAP_AWARE = ("trace", "health", "violations")  # subcommands that take a tap's name as a connection's


def _names(sub: commands.Subcommand) -> list[str]:
    """The names a subcommand's connection may be: the connections', and the open taps' where it reads taps."""
    names = sorted(api.connections())
    return names + [n for n in taps.names() if n not in names] if sub.name in TAP_AWARE else names


def _positional(sub: commands.Subcommand, named: str | None, given: list[str], fragment: str) -> list[str]:
    if sub.name == "help":
        return list(commands.SUBCOMMANDS) if not given else []
    if sub.name == "roots" or (sub.name == "compare" and not given):
        return paths(fragment)
    conn = connection_named(named)
    if sub.name in ("tools", "tool"):
        if given:
            return []
        names = sorted(api.connections()) if sub.name == "tools" else []
        return names + (tool_names(conn) if conn is not None else [])
    if conn is None:
        return _choices(sub.parser, len(given))
    if sub.name == "call":
        return tool_names(conn) if not given else tool_arguments(conn, given[0], given[1:], fragment)
    if sub.name == "prompt":
        return prompt_names(conn) if not given else prompt_arguments(conn, given[0], given[1:], fragment)
    if sub.name == "read":
        if not given:
            kinds = templates(conn)
            return resource_uris(conn) + names_of(kinds, "uriTemplate") + names_of(kinds)
        return template_arguments(conn, given[0], given[1:], fragment)
    if sub.name in ("subscribe", "unsubscribe"):
        return resource_uris(conn) if not given else []
    return _choices(sub.parser, len(given))


def _choices(parser: commands.Parser, index: int) -> list[str]:
    positional = [action for action in parser._actions if not action.option_strings and action.dest != "name"]
    if index < len(positional) and positional[index].choices:
        return [str(choice) for choice in positional[index].choices or ()]
    return []


def _pairs(words_: list[str]) -> dict[str, str]:
    return {key: value for key, eq, value in (w.partition("=") for w in words_) if eq}


def _types(schema: Any) -> list[str]:
    kinds = schema.get("type") if isinstance(schema, dict) else None
    found = [kinds] if isinstance(kinds, str) else list(kinds or [])
    for branch in (schema.get("anyOf") or schema.get("oneOf") or []) if isinstance(schema, dict) else []:
        found += _types(branch)
    return found


def _values_of(schema: Any) -> list[str]:
    """The values a property may take, as they are typed after `key=`: enum, const, booleans."""
    if not isinstance(schema, dict):
        return []
    values: list[Any] = list(schema.get("enum") or [])
    if "const" in schema:
        values.append(schema["const"])
    for branch in schema.get("anyOf") or schema.get("oneOf") or []:
        values += [v for v in _values_of(branch) if v not in values]
    if "boolean" in _types(schema):
        values += [v for v in (True, False) if v not in values]
    return [v if isinstance(v, str) else json.dumps(v) for v in values]


def tool_arguments(conn: Connection, tool: str, given: list[str], fragment: str) -> list[str]:
    properties = schema_of(conn, tool).get("properties") or {}
    key, eq, _ = fragment.partition("=")
    if not eq:
        return [f"{name}=" for name in properties if name not in _pairs(given)]
    return [f"{key}={value}" for value in _values_of(properties.get(key))]


def _completed(conn: Connection, ref: str, fragment: str, given: list[str]) -> list[str]:
    key, _, value = fragment.partition("=")
    context = _pairs(given)
    found = bounded(lambda: conn.complete(ref, key, value, context or None, timeout=WAIT))
    return [f"{key}={v}" for v in found]


def prompt_arguments(conn: Connection, prompt: str, given: list[str], fragment: str) -> list[str]:
    if "=" in fragment:
        return _completed(conn, f"prompt:{prompt}", fragment, given)
    found = next((p for p in bounded(conn.list_prompts) if isinstance(p, dict) and p.get("name") == prompt), {})
    return [f"{name}=" for name in names_of(found.get("arguments") or []) if name not in _pairs(given)]


def template_arguments(conn: Connection, target: str, given: list[str], fragment: str) -> list[str]:
    template = next((t for t in templates(conn) if target in (t.get("name"), t.get("uriTemplate"))), None)
    if template is None or not isinstance(template.get("uriTemplate"), str):
        return []
    uri = template["uriTemplate"]
    if "=" in fragment:
        return _completed(conn, f"resource:{uri}", fragment, given)
    variables = re.findall(r"[\w.]+", " ".join(re.findall(r"\{([^}]*)\}", uri)))
    return [f"{name}=" for name in dict.fromkeys(variables) if name not in _pairs(given)]


def as_typed(candidate: str, raw: str) -> str:
    """A candidate written as it must be typed: in the quote the word opened, or quoted if needed."""
    if raw[:1] in ("'", '"'):
        return raw[0] + candidate + raw[0]
    if words.split(candidate) == [candidate]:
        return candidate
    key, eq, value = candidate.partition("=")
    return f"{key}={shlex.quote(value)}" if eq and words.split(key) == [key] else shlex.quote(candidate)


def completions(line: str) -> tuple[str, list[str]]:
    """For the text of a `%mcp` line up to the cursor: the word being typed, as typed, and what
    may replace it (never raises)."""
    match = _MCP_LINE.match(line)
    if match is None:
        return "", []
    done, raw, fragment = words.split_partial(line[match.end() :])
    try:
        found = candidates(done, fragment)
    except Exception:  # noqa: BLE001 - a completer must never break the shell
        found = []
    return raw, [as_typed(candidate, raw) for candidate in dict.fromkeys(found)]


# ----- conn.call_tool("...  -----


def method_completions(line: str, namespace: dict[str, Any]) -> tuple[str, list[str]] | None:
    """Inside `conn.call_tool("` (and its kin) on a Connection in `namespace`: the names it takes."""
    match = _METHOD_CALL.search(line)
    if match is None:
        return None
    conn, method, fragment = namespace.get(match["obj"]), match["method"], match["fragment"]
    if not isinstance(conn, Connection):
        return None
    try:
        if method in TOOL_METHODS:
            found = tool_names(conn)
        elif method in PROMPT_METHODS:
            found = prompt_names(conn)
        elif method in RESOURCE_METHODS:
            found = resource_uris(conn)
        elif method in TEMPLATE_METHODS:
            kinds = templates(conn)
            found = names_of(kinds) + names_of(kinds, "uriTemplate")
        else:
            return None
    except Exception:  # noqa: BLE001 - a completer must never break the shell
        found = []
    return fragment, [name for name in dict.fromkeys(found) if name.startswith(fragment)]


def keyword_completions(line: str, namespace: dict[str, Any]) -> tuple[str, list[str]] | None:
    """After `conn.call_tool("TOOL", `: the tool's arguments as keywords (`a=`), those not given yet
    and not named like one of call_tool's own parameters (those go in the dict), then those
    parameters; nothing when the tool has no argument to offer."""
    match = _KEYWORD.search(line)
    conn = namespace.get(match["obj"]) if match else None
    if match is None or not isinstance(conn, Connection):
        return None
    given = set(re.findall(r"(\w+)\s*=", match["rest"]))
    try:
        names = list(schema_of(conn, match["tool"]).get("properties") or {})
    except Exception:  # noqa: BLE001 - a completer must never break the shell
        names = []
    fit = [n for n in names if n.isidentifier() and not keyword.iskeyword(n) and n not in CALL_PARAMETERS | given]
    if not fit:
        return match["word"], []
    own = sorted(CALL_PARAMETERS - given)  # call_tool's options, after the tool's arguments
    return match["word"], [f"{name}=" for name in [*fit, *own] if name.startswith(match["word"])]


# ----- the text before the cursor -----


@dataclass(frozen=True)
class Answer:
    """What Tab offers: the word it replaces, as typed, and its candidates. `alone`: ours only
    (a `%mcp` line, a method's name); else beside Python's own (a tool's arguments as keywords)."""

    fragment: str
    candidates: list[str]
    alone: bool


def complete(line: str, namespace: dict[str, Any]) -> Answer | None:
    """For the text up to the cursor, with `namespace` the user's: what Tab offers, or None
    where we have nothing to say (never raises on a `%mcp` line or inside a method's name)."""
    if _MCP_LINE.match(line):
        return Answer(*completions(line), alone=True)
    named = method_completions(line, namespace)
    if named is not None:
        return Answer(*named, alone=True)
    keywords = keyword_completions(line, namespace)
    if keywords is None or not keywords[1]:
        return None
    return Answer(*keywords, alone=False)
