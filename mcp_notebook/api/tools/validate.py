"""A value checked against a JSON Schema (a tool's arguments, its structured result, an
elicitation answer), each violation said as one short phrase: "'a' should be number, not
string \"x\"", "missing required 'b'", "unknown 'c' (allowed: a, b)".

The verdict is fastjsonschema's (`protocol.spec_schema.tool_check`: compiled once per schema,
never given a way to fetch a network `$ref`, SEP-2106): a value it passes has no problems.
The phrases for a value it refuses come from `walk`, a small hand-written reading of the
keywords tools use (`type`, `enum`, `const`, `required`, `properties`, `additionalProperties:
false`, `items`, numeric bounds, string and array lengths, `anyOf`/`oneOf`), kept because
neither library can say them as fast: fastjsonschema stops at the first problem, where the
message names every one, and importing jsonschema takes one to two seconds (its format
checkers build a grammar at import) holding the GIL, a user's first mistake would wait that
long and a server ping with it. Where `walk` finds nothing fastjsonschema refused (a
`pattern`, a `$ref`, a oneOf matched twice), fastjsonschema's own first problem is said.
A schema fastjsonschema cannot decide exactly (`tool_check` gives None) is read by `walk` alone.
The rule kept here: the verdict is the library's, the words are ours.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from ...base.errors import McpNotebookError, UsageError
from ...base.public import public
from ...protocol import spec_schema as spec


@public
class ToolArgumentError(UsageError):
    """Tool arguments that cannot be right: unknown tool, wrong type, missing required argument."""


@public
class OutputSchemaError(McpNotebookError):
    """The server's structured result does not match the tool's declared outputSchema."""


def problems(value: Any, schema: Any, where: str = "") -> list[str]:
    """Every violation of `schema` found in `value`, as short readable phrases (none for a
    schema that is not an object). `where` names the value in them ("the value" without it)."""
    if not isinstance(schema, dict):
        return []
    return judged(value, schema, where, spec.tool_check(spec.schema_text(schema)))


def judged(value: Any, schema: Any, where: str, check: Callable[[Any], Any] | None) -> list[str]:
    """`problems`, given the schema's compiled `check` (None: `walk` decides alone)."""
    if check is None:
        return walk(value, schema, where)
    try:
        check(value)
    except Exception as refusal:  # noqa: BLE001 - fastjsonschema's refusal, or a value it cannot read (not JSON): said by `refused`
        return refused(value, schema, where, refusal)
    return []


def refused(value: Any, schema: Any, where: str, refusal: Exception) -> list[str]:
    """The phrases for a value fastjsonschema refused (`refusal`)."""
    return walk(value, schema, where) or [_said(refusal, value, where)]


def _said(refusal: Exception, value: Any, where: str) -> str:
    """fastjsonschema's first problem ("data.tags[1] must match pattern ^x") named as ours are."""
    name, here = where, value
    for step in list(getattr(refusal, "path", ["data"]))[1:]:
        if isinstance(here, list) and str(step).isdigit():
            name, here = f"{name or 'item'}[{step}]", here[int(step)] if int(step) < len(here) else None
        else:
            name, here = _join(name, str(step)), here.get(step) if isinstance(here, dict) else None
    words = str(getattr(refusal, "message", "")).split(" ", 1)[-1]
    return f"{name or 'the value'} {words}"


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


def walk(value: Any, schema: Any, where: str = "") -> list[str]:
    """Every violation of `schema` found in `value` by the keywords this module reads, as short readable phrases."""
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
            found += walk(item, schema.get("items"), f"{where or 'item'}[{i}]")
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
    if isinstance(branches, list) and branches and all(walk(value, b, where) for b in branches):
        found.append(f"{at} should be one of: {_forms(branches)}")
    return found


def _forms(branches: list[Any], shown: int = 5) -> str:
    """The `anyOf`/`oneOf` branches named briefly: 'integer >= 0, "auto"', the first few only."""
    forms = list(dict.fromkeys(_form(branch) for branch in branches))
    return ", ".join(forms[:shown]) + (", ..." if len(forms) > shown else "")


def _form(branch: Any) -> str:
    """One branch in a few words: its constant, its choices, or its type with its bounds."""
    if not isinstance(branch, dict):
        return "another form"
    if "const" in branch:
        return json.dumps(branch["const"], default=str)
    choices = branch.get("enum")
    if isinstance(choices, list) and choices:
        return " or ".join(json.dumps(v, default=str) for v in choices[:4]) + (" or ..." if len(choices) > 4 else "")
    kinds = branch.get("type")
    words = " or ".join(map(str, [kinds] if isinstance(kinds, str) else kinds if isinstance(kinds, list) else []))
    props = branch.get("properties")
    if isinstance(props, dict) and props and words in ("", "object"):
        words = f"object ({', '.join(list(props)[:4])}{', ...' if len(props) > 4 else ''})"
    bounds = [f"{word} {branch[key]:g}" for key, _, word in BOUNDS if isinstance(branch.get(key), (int, float))]
    return " ".join([words, *bounds]).strip() or "another form"


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
            found += walk(item, props[name], _join(where, name))
        elif schema.get("additionalProperties") is False:
            allowed = ", ".join(props) or "none"
            found.append(f"unknown {_join(where, name)} (allowed: {allowed})")
    return found


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else repr(name)
