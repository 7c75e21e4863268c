"""One tool's own view: its full description, its input schema as a readable tree (array items,
nested objects, enums, required marks), its output schema, its annotations, and example calls
to copy (`%mcp call` and Python). Text in a terminal, HTML in a notebook; nothing here imports
IPython.

The rule kept here: every example call is one the parser and the schema checker accept as
written (a value is made from the schema's default, example, enum or type), and server text is
escaped in HTML and stripped of control sequences in text.
"""

from __future__ import annotations

import json
import keyword
import shlex
import textwrap
from typing import Any

from ...base.public import public
from ...base.text import esc, plain
from ..results.objects import _Rich

DEPTH = 6  # nested schemas shown at most this deep
CALL_PARAMETERS = {"timeout", "max_total", "reset_on_progress", "progress", "validate", "log_level", "task"}
_SAMPLES: dict[str, Any] = {"string": "text", "integer": 1, "number": 1, "boolean": True, "null": None}


def kind_of(schema: Any) -> str:
    """A short type name: `string`, `number|null`, `array of object`, `"a"|"b"`, `any`."""
    if not isinstance(schema, dict):
        return "any"
    if isinstance(schema.get("enum"), list):
        return "|".join(json.dumps(v) for v in schema["enum"])
    if "const" in schema:
        return json.dumps(schema["const"])
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        return "|".join(kind_of(b) for b in branches)
    kinds = schema.get("type")
    name = "|".join(kinds) if isinstance(kinds, list) else str(kinds or ("object" if "properties" in schema else "any"))
    if name == "array" and isinstance(schema.get("items"), dict):
        return f"array of {kind_of(schema['items'])}"
    return name


def _facts(schema: dict[str, Any]) -> str:
    """Default, bounds and format, in brackets."""
    facts = []
    if "default" in schema:
        facts.append(f"default {json.dumps(schema['default'], default=str)}")
    for key, word in (("minimum", ">="), ("maximum", "<="), ("exclusiveMinimum", ">"), ("exclusiveMaximum", "<")):
        if isinstance(schema.get(key), (int, float)):
            facts.append(f"{word} {schema[key]}")
    for key in ("minLength", "maxLength", "minItems", "maxItems", "format", "pattern"):
        if key in schema:
            facts.append(f"{key} {schema[key]}")
    return f" [{', '.join(facts)}]" if facts else ""


def _children(schema: Any) -> dict[str, Any]:
    """The properties a schema's value holds: its own, or its array items' (and anyOf branches')."""
    if not isinstance(schema, dict):
        return {}
    if isinstance(schema.get("properties"), dict):
        return dict(schema["properties"])
    if isinstance(schema.get("items"), dict):
        return _children(schema["items"])
    for branch in schema.get("anyOf") or schema.get("oneOf") or []:
        if _children(branch):
            return _children(branch)
    return {}


def _required(schema: Any) -> set[str]:
    if not isinstance(schema, dict):
        return set()
    if isinstance(schema.get("properties"), dict):
        return set(schema.get("required") or [])
    if isinstance(schema.get("items"), dict):
        return _required(schema["items"])
    for branch in schema.get("anyOf") or schema.get("oneOf") or []:
        if _children(branch):
            return _required(branch)
    return set()


def tree(schema: Any, depth: int = 0) -> list[tuple[int, str, str]]:
    """(depth, `name: kind*` with facts, description) for each property, nested ones indented."""
    rows: list[tuple[int, str, str]] = []
    required = _required(schema)
    for name, prop in _children(schema).items():
        mark = "*" if name in required else ""
        facts = _facts(prop) if isinstance(prop, dict) else ""
        description = plain(str(prop.get("description") or prop.get("title") or "")) if isinstance(prop, dict) else ""
        rows.append((depth, f"{plain(name)}: {plain(kind_of(prop))}{mark}{facts}", description))
        if depth < DEPTH:
            rows += tree(prop, depth + 1)
    return rows


def sample(schema: Any, depth: int = 0) -> Any:
    """A value the schema accepts, for an example call: default, example, enum, or by type."""
    if not isinstance(schema, dict):
        return "text"
    for key in ("default", "const"):
        if key in schema and schema[key] is not None:
            return schema[key]
    if isinstance(schema.get("examples"), list) and schema["examples"]:
        return schema["examples"][0]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        chosen = next((b for b in branches if isinstance(b, dict) and b.get("type") != "null"), branches[0])
        return sample(chosen, depth)
    kinds = schema.get("type")
    kind = next((k for k in kinds if k != "null"), "null") if isinstance(kinds, list) else kinds
    if kind == "array":
        return [sample(schema.get("items"), depth + 1)] if depth < DEPTH else []
    if kind == "object" or "properties" in schema:
        required = set(schema.get("required") or [])
        props = schema.get("properties") or {}
        return {k: sample(v, depth + 1) for k, v in props.items() if k in required} if depth < DEPTH else {}
    number = schema.get("minimum")
    if kind in ("integer", "number") and isinstance(number, (int, float)):
        return number
    return _SAMPLES.get(str(kind), "text")


def example_arguments(schema: Any) -> dict[str, Any]:
    """The required arguments with sample values (all of them if none is required)."""
    props = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(props, dict):
        return {}
    required = [name for name in schema.get("required") or [] if name in props]
    return {name: sample(props[name]) for name in (required or list(props)[:3])}


def magic_line(name: str, arguments: dict[str, Any], conn: str | None = None) -> str:
    """`%mcp call NAME key=value ...`, each value written so that `%mcp call` reads it back."""
    words = ["%mcp call", *(["--conn", shlex.quote(conn)] if conn else []), shlex.quote(name)]
    for key, value in arguments.items():
        text = value if isinstance(value, str) else json.dumps(value)
        words.append(f"{shlex.quote(key)}={shlex.quote(text) if isinstance(value, str) else text}")
    return " ".join(words)


def python_call(name: str, arguments: dict[str, Any], variable: str = "conn") -> str:
    """`conn.call_tool("NAME", a=1)`, or with a dict when a name cannot be a keyword."""
    as_keywords = all(k.isidentifier() and not keyword.iskeyword(k) and k not in CALL_PARAMETERS for k in arguments)
    if as_keywords:
        args = "".join(f", {k}={v!r}" for k, v in arguments.items())
    else:
        args = f", {arguments!r}" if arguments else ""
    return f"{variable}.call_tool({name!r}{args})"


@public
class ToolView(_Rich):
    """A tool's own view (`%mcp tool NAME`, `conn.describe_tool(name)`): `.tool` is its definition."""

    def __init__(self, tool: dict[str, Any], connection: str | None = None) -> None:
        self.tool = tool
        self.connection = connection
        self.name = str(tool.get("name", ""))

    @property
    def examples(self) -> list[str]:
        """A `%mcp call` line and a Python call, both with sample values for the required arguments."""
        arguments = example_arguments(self.tool.get("inputSchema"))
        return [magic_line(self.name, arguments), python_call(self.name, arguments)]

    def _sections(self) -> list[tuple[str, Any]]:
        output = self.tool.get("outputSchema")
        notes = self.tool.get("annotations") or {}
        return [
            ("arguments (* required)", tree(self.tool.get("inputSchema")) or "none"),
            ("output", (tree(output) or kind_of(output)) if isinstance(output, dict) else "no output schema"),
            ("annotations", ", ".join(f"{k}: {json.dumps(v)}" for k, v in notes.items()) or "none"),
            ("execution", json.dumps(self.tool["execution"]) if "execution" in self.tool else None),
            ("example", self.examples),
        ]

    def _heading(self) -> str:
        title = self.tool.get("title")
        where = f" on {self.connection}" if self.connection else ""
        return f"{self.name}{' (' + str(title) + ')' if title else ''}{where}"

    def _text(self) -> str:
        lines = [plain(self._heading())]
        if self.tool.get("description"):
            lines += textwrap.wrap(plain(str(self.tool["description"])), 100, initial_indent="  ", subsequent_indent="  ")
        for label, body in self._sections():
            if body is None:
                continue
            if isinstance(body, str):
                lines.append(f"{label}: {plain(body)}")
                continue
            lines.append(f"{label}:")
            for row in body:
                depth, head, note = row if isinstance(row, tuple) else (0, row, "")
                lines.append(f"  {'  ' * depth}{head}{'  - ' + note if note else ''}")
        return plain("\n".join(lines))  # the schema's property names and descriptions are the server's too

    def _html(self) -> str:
        parts = [f"<div class='mcp-tool'><b>{esc(self._heading())}</b>"]
        if self.tool.get("description"):
            parts.append(f"<div style='white-space:pre-wrap;margin:0.3em 0'>{esc(self.tool['description'])}</div>")
        for label, body in self._sections():
            if body is None:
                continue
            if isinstance(body, str):
                parts.append(f"<div><b>{esc(label)}:</b> {esc(body)}</div>")
                continue
            items = []
            for row in body:
                depth, head, note = row if isinstance(row, tuple) else (0, row, "")
                comment = f" <span style='color:#868e96'>{esc(note)}</span>" if note else ""
                items.append(f"<div style='margin-left:{1 + 1.5 * depth}em'><code>{esc(head)}</code>{comment}</div>")
            parts.append(f"<div><b>{esc(label)}:</b>{''.join(items)}</div>")
        return "".join(parts) + "</div>"

    def __repr__(self) -> str:
        return self._text()
