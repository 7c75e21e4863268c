"""A small, honest JSON Schema checker for the cases MCP tools use, and `key=value` parsing.

It covers `type` (one or several), `enum`, `const`, `required`, `properties`,
`additionalProperties: false`, `items`, numeric bounds, string and array lengths, and
`anyOf` / `oneOf` (as "any branch matches"). Anything else (`$ref`, `pattern`,
`format`, ...) is not checked: the server still validates, this only catches the common
mistakes early with a readable message. jsonschema stays a test dependency.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from ...base.errors import McpNotebookError, UsageError
from ...base.public import public
from ...base.text import clip


@public
class ToolArgumentError(UsageError):
    """Tool arguments that cannot be right: unknown tool, wrong type, missing required argument."""


@public
class OutputSchemaError(McpNotebookError):
    """The server's structured result does not match the tool's declared outputSchema."""


TYPES: dict[str, Any] = {
    "string": str,
    "object": dict,
    "array": list,
    "null": type(None),
    "boolean": bool,
}


def _is(value: Any, kind: str) -> bool:
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or (isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    expected = TYPES.get(kind)
    return True if expected is None else isinstance(value, expected)


def describe(value: Any) -> str:
    """A JSON type name for a Python value, as error messages say it."""
    for kind in ("null", "boolean", "integer", "number", "string", "array", "object"):
        if _is(value, kind) and not (kind == "integer" and isinstance(value, float)):
            return kind
    return type(value).__name__


def problems(value: Any, schema: Any, where: str = "") -> list[str]:
    """Every violation of `schema` found in `value`, as short readable phrases."""
    if not isinstance(schema, dict):
        return []
    at = where or "the value"
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    if isinstance(kinds, list) and kinds and not any(_is(value, k) for k in kinds):
        return [f"{at} should be {' or '.join(kinds)}, not {describe(value)} {json.dumps(value, default=str)[:40]}"]
    found = _choice_problems(value, schema, where, at)
    if _is(value, "number") and not isinstance(value, bool):
        found += _bound_problems(value, schema, at)
    if isinstance(value, str):
        found += _length_problems(len(value), schema, at, "Length", "characters")
    if isinstance(value, list):
        found += _length_problems(len(value), schema, at, "Items", "items")
        for i, item in enumerate(value):
            found += problems(item, schema.get("items"), f"{where or 'item'}[{i}]")
    if isinstance(value, dict):
        found += _object_problems(value, schema, where)
    return found


def _choice_problems(value: Any, schema: dict[str, Any], where: str, at: str) -> list[str]:
    """`enum`, `const`, and `anyOf` / `oneOf` (as "any branch matches")."""
    found = []
    if "enum" in schema and isinstance(schema["enum"], list) and value not in schema["enum"]:
        found.append(f"{at} should be one of {', '.join(json.dumps(v) for v in schema['enum'])}")
    if "const" in schema and value != schema["const"]:
        found.append(f"{at} should be {json.dumps(schema['const'])}")
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches and all(problems(value, b, where) for b in branches):
        found.append(f"{at} matches none of the allowed forms")
    return found


BOUNDS: tuple[tuple[str, Callable[[float, float], bool], str], ...] = (
    ("minimum", lambda value, bound: value < bound, ">="),
    ("maximum", lambda value, bound: value > bound, "<="),
    ("exclusiveMinimum", lambda value, bound: value <= bound, ">"),
    ("exclusiveMaximum", lambda value, bound: value >= bound, "<"),
)


def _bound_problems(value: float, schema: dict[str, Any], at: str) -> list[str]:
    found = []
    for key, breaks, word in BOUNDS:
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool) and breaks(value, bound):
            found.append(f"{at} should be {word} {bound:g}")
    return found


def _length_problems(length: int, schema: dict[str, Any], at: str, suffix: str, unit: str) -> list[str]:
    """`minLength`/`maxLength` of a string, `minItems`/`maxItems` of an array."""
    found = []
    least, most = schema.get(f"min{suffix}"), schema.get(f"max{suffix}")
    if isinstance(least, int) and length < least:
        found.append(f"{at} should have at least {least} {unit}")
    if isinstance(most, int) and length > most:
        found.append(f"{at} should have at most {most} {unit}")
    return found


def _object_problems(value: dict[str, Any], schema: dict[str, Any], where: str) -> list[str]:
    """`required`, `properties` and `additionalProperties: false`."""
    found = []
    declared = schema.get("properties")
    props: dict[str, Any] = declared if isinstance(declared, dict) else {}
    for name in schema.get("required") or []:
        if name not in value:
            found.append(f"missing required {_join(where, name)}")
    for name, item in value.items():
        if name in props:
            found += problems(item, props[name], _join(where, name))
        elif schema.get("additionalProperties") is False:
            allowed = ", ".join(props) or "none"
            found.append(f"unknown {_join(where, name)} (allowed: {allowed})")
    return found


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else repr(name)


def parse_value(text: str, schema: Any, name: str | None = None) -> Any:
    """A `key=value` value as the property's schema wants it: numbers, booleans, JSON, or text.

    A value the schema refuses is a ToolArgumentError that names the argument (`name`)."""
    kinds = (schema or {}).get("type") if isinstance(schema, dict) else None
    kinds = [kinds] if isinstance(kinds, str) else list(kinds or [])
    if kinds == ["string"] or (
        not kinds and isinstance(schema, dict) and "enum" in schema and all(isinstance(v, str) for v in schema["enum"])
    ):
        return text
    if "boolean" in kinds and text.lower() in ("true", "false", "yes", "no", "on", "off", "1", "0"):
        return text.lower() in ("true", "yes", "on", "1")
    try:
        value = json.loads(text)
    except ValueError:
        if kinds and "string" not in kinds:
            wanted = " or ".join(kinds)
            if name is not None:
                raise ToolArgumentError(f"{name!r} should be {wanted} (JSON), not {clip(repr(text), 60)}") from None
            raise ToolArgumentError(f"{clip(repr(text), 60)} is not valid {wanted} (JSON expected)") from None
        return text
    if "string" in kinds and not isinstance(value, (dict, list)) and not any(_is(value, k) for k in kinds if k != "string"):
        return text
    if not kinds and not isinstance(value, (dict, list, int, float, bool)) and value is not None:
        return text
    return value


def parse_pairs(pairs: list[str], schema: Any) -> dict[str, Any]:
    """`["a=1", "b=x"]` parsed by the tool's input schema."""
    props = (schema or {}).get("properties") or {}
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ToolArgumentError(f"arguments are key=value pairs; {pair!r} is not one")
        arguments[key] = parse_value(text, props.get(key), key)
    return arguments


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    """Arguments given as a dict (or None: none); anything else is a one-line ToolArgumentError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise ToolArgumentError(f"{what} must be a dict of names to values, not {describe(value)} {clip(repr(value), 40)}")
    return value
