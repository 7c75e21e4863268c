"""A tool call's arguments as the caller wrote them, made into the dict that is sent: a dict,
keywords, or both, merged into one dict; `key=value` text (`%mcp call`, a form's fields)
parsed into typed values by the tool's input schema; and the arguments the schema does not declare.

The rule kept here: an argument is never silently dropped or silently replaced. The same
name given in the dict and as a keyword is refused; an argument the schema does not declare
is refused when the schema says `additionalProperties: false` (`validate.problems` does
that) and warned about when the schema says nothing, since the server may ignore it. A text
value becomes a number, boolean or JSON only where its property's schema asks for one, and a
whole number is sent as an integer where the text is an integer literal or the property an integer.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ...base import caller
from ...base.errors import McpNotebookError
from ...base.public import public
from ...base.text import clip
from .validate import ToolArgumentError, describe


@public
class ExtraArgumentWarning(McpNotebookError, UserWarning):
    """An argument the tool's input schema does not declare (the server may ignore it); a
    UserWarning, and like everything the package raises, an McpNotebookError."""


def merged(tool: str, arguments: Any, keywords: Mapping[str, Any]) -> dict[str, Any]:
    """`call_tool(name, {"a": 1}, b=2)`'s arguments as one dict; a name given both ways is refused."""
    if not keywords and type(arguments) is dict and all(isinstance(key, str) for key in arguments):
        return dict(arguments)  # the common case, without the general checks' cost
    out = dict(mapping(arguments, f"{tool}: the arguments"))
    twice = sorted(set(out) & set(keywords))
    if twice:
        raise ToolArgumentError(f"{tool}: {', '.join(map(repr, twice))} given both in the dict and as a keyword")
    out.update(keywords)
    return out


def undeclared(arguments: Mapping[str, Any], schema: Any) -> list[str]:
    """The names in `arguments` the schema neither declares nor forbids (nothing it allows with
    `additionalProperties` or `patternProperties` either)."""
    if not isinstance(schema, dict) or "additionalProperties" in schema or "patternProperties" in schema:
        return []
    declared = schema.get("properties")
    return [name for name in arguments if not isinstance(declared, dict) or name not in declared]


def warn_undeclared(tool: str, arguments: Mapping[str, Any], schema: Any) -> None:
    extra = undeclared(arguments, schema)
    if extra:
        declared = ", ".join((schema.get("properties") or {}) if isinstance(schema, dict) else ()) or "none"
        caller.warn(
            f"{tool}: the input schema does not declare {', '.join(map(repr, extra))} (declared: {declared}); "
            "sent anyway, the server may ignore it",
            ExtraArgumentWarning,
        )


def mapping(value: Any, what: str) -> Mapping[str, Any]:
    """Arguments given as a dict (or None: none); anything else is a one-line ToolArgumentError."""
    if value is None:
        return {}
    if not isinstance(value, Mapping) or not all(isinstance(key, str) for key in value):
        raise ToolArgumentError(f"{what} must be a dict of names to values, not {describe(value)} {clip(repr(value), 40)}")
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
    if "string" in kinds and not isinstance(value, (dict, list)) and not any(_fits(value, k) for k in kinds if k != "string"):
        return text
    if not kinds and not isinstance(value, (dict, list, int, float, bool)) and value is not None:
        return text
    if isinstance(value, float) and value.is_integer() and "integer" in kinds and "number" not in kinds:
        return int(value)  # `2.0` for an integer is sent as the integer it is
    return value


def parse_number(value: float, schema: Any, name: str | None = None) -> Any:
    """A number box's value (a form's field) as `parse_value` makes the same number typed: a whole
    one as its integer literal (`2`, not `2.0`), so a form sends what `%mcp call` sends."""
    whole = value.is_integer() and abs(value) <= 2**53
    return parse_value(str(int(value)) if whole else repr(value), schema, name)


_KINDS = frozenset(("null", "boolean", "integer", "number", "string", "array", "object"))


def _fits(value: Any, kind: Any) -> bool:
    """Whether JSON type `kind` takes a parsed `value` (2.0 is an integer, as in JSON Schema; a
    type name JSON Schema does not have takes anything)."""
    found = describe(value)
    if found == kind or kind not in _KINDS:
        return True
    return (kind == "number" and found == "integer") or (kind == "integer" and found == "number" and float(value).is_integer())
