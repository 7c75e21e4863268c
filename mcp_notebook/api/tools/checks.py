"""A tool's checks compiled once per listing: its input and output schemas as predicates,
and the names its input schema declares, kept until the tools listing changes.

The rule kept here: a compiled check never decides differently from `validate.problems`.
Each predicate is True only when `problems` would find nothing; when it is False the
caller asks `problems` for the readable phrases (and finds none if the predicate was
merely cautious). A schema the compiler does not model is checked by `problems` itself.
A listing is known by identity: a `list_changed` drops the cached listing, the next one is
a new object, and its tools are compiled again on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..results.objects import Listing
from .validate import BOUNDS, TYPES, problems

Check = Callable[[Any], bool]
_NUMERIC = ("integer", "number")


def _always(_value: Any) -> bool:
    return True


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def passes(schema: Any) -> Check:
    """A predicate: True only if `problems(value, schema)` would be empty."""
    if not isinstance(schema, dict):
        return _always
    try:
        return _compile(schema)
    except (TypeError, ValueError, AttributeError):  # a shape `problems` handles its own way
        return lambda value: not problems(value, schema)


def _compile(schema: dict[str, Any]) -> Check:
    kinds = schema.get("type")
    kinds = [kinds] if isinstance(kinds, str) else kinds
    kind_ok = _kinds(kinds) if isinstance(kinds, list) and kinds else _always
    rest = [*_choices(schema), *_numbers(schema), *_lengths(schema), *_objects(schema)]

    def check(value: Any) -> bool:
        if not kind_ok(value):
            return False
        for one in rest:
            if not one(value):
                return False
        return True

    return check


def _kinds(kinds: list[Any]) -> Check:
    if not all(isinstance(kind, str) for kind in kinds):
        raise TypeError("a type that is not a name")
    if any(kind not in TYPES and kind not in _NUMERIC for kind in kinds):
        return _always  # an unknown type name matches anything (`validate._is`)
    plain = tuple(TYPES[kind] for kind in kinds if kind in TYPES)
    number, integer = "number" in kinds, "integer" in kinds

    def kind_ok(value: Any) -> bool:
        if isinstance(value, plain):
            return True
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        return number or (integer and (isinstance(value, int) or value.is_integer()))

    return kind_ok


def _choices(schema: dict[str, Any]) -> list[Check]:
    found: list[Check] = []
    enum = schema.get("enum")
    if "enum" in schema and isinstance(enum, list):
        found.append(lambda value: value in enum)
    if "const" in schema:
        const = schema["const"]
        found.append(lambda value: value == const)
    branches = schema.get("anyOf") or schema.get("oneOf")
    if isinstance(branches, list) and branches:
        compiled = [passes(branch) for branch in branches]
        found.append(lambda value: any(branch(value) for branch in compiled))
    return found


def _numbers(schema: dict[str, Any]) -> list[Check]:
    limits = []
    for key, breaks, _word in BOUNDS:
        bound = schema.get(key)
        if isinstance(bound, (int, float)) and not isinstance(bound, bool):
            limits.append((breaks, bound))
    if not limits:
        return []
    return [lambda value: not _is_number(value) or not any(breaks(value, bound) for breaks, bound in limits)]


def _lengths(schema: dict[str, Any]) -> list[Check]:
    found: list[Check] = []
    for kind, suffix in ((str, "Length"), (list, "Items")):
        least, most = schema.get(f"min{suffix}"), schema.get(f"max{suffix}")
        if isinstance(least, int) or isinstance(most, int):
            found.append(_length_check(kind, least if isinstance(least, int) else None, most if isinstance(most, int) else None))
    if "items" in schema:
        item_ok = passes(schema["items"])
        found.append(lambda value: not isinstance(value, list) or all(map(item_ok, value)))
    return found


def _length_check(kind: type, least: int | None, most: int | None) -> Check:
    def length_ok(value: Any) -> bool:
        if not isinstance(value, kind):
            return True
        length = len(value)  # type: ignore[arg-type]
        return (least is None or length >= least) and (most is None or length <= most)

    return length_ok


def _objects(schema: dict[str, Any]) -> list[Check]:
    declared = schema.get("properties")
    props = {name: passes(sub) for name, sub in declared.items()} if isinstance(declared, dict) else {}
    required = schema.get("required") or []
    if not isinstance(required, list):
        raise TypeError("required is not a list")
    closed = schema.get("additionalProperties") is False
    if not props and not required and not closed:
        return []
    needed = tuple(required)

    def object_ok(value: Any) -> bool:
        if not isinstance(value, dict):
            return True
        for name in needed:
            if name not in value:
                return False
        for name, item in value.items():
            sub = props.get(name)
            if sub is not None:
                if not sub(item):
                    return False
            elif closed:
                return False
        return True

    return [object_ok]


class CompiledTool:
    """One tool definition's checks."""

    __slots__ = ("definition", "input_schema", "arguments_ok", "declared", "output_schema", "output_ok")

    def __init__(self, definition: dict[str, Any]) -> None:
        self.definition = definition
        schema = self.input_schema = definition.get("inputSchema")
        self.arguments_ok = passes(schema)
        # The names an ExtraArgumentWarning is not about (`arguments.undeclared`); None: it never warns.
        self.declared: frozenset[str] | None = None
        if isinstance(schema, dict) and "additionalProperties" not in schema and "patternProperties" not in schema:
            properties = schema.get("properties")
            self.declared = frozenset(properties) if isinstance(properties, dict) else frozenset()
        self.output_schema = definition.get("outputSchema")
        self.output_ok = passes(self.output_schema)

    def argument_problems(self, arguments: dict[str, Any]) -> list[str]:
        return [] if self.arguments_ok(arguments) else problems(arguments, self.input_schema)

    def output_problems(self, structured: Any) -> list[str]:
        return [] if self.output_ok(structured) else problems(structured, self.output_schema, "structuredContent")

    def may_warn(self, arguments: dict[str, Any]) -> bool:
        declared = self.declared
        return declared is not None and not declared.issuperset(arguments)


class ToolChecks:
    """The compiled tools of one listing (the last one asked about)."""

    def __init__(self) -> None:
        self._held: tuple[Listing | None, dict[str, CompiledTool]] = (None, {})

    def get(self, listing: Listing, name: str) -> CompiledTool | None:
        held, compiled = self._held
        if held is not listing:
            compiled = {}
            self._held = (listing, compiled)  # one assignment: a thread sees the old pair or the new
        found = compiled.get(name)
        if found is None:
            definition = listing.get(name)
            if definition is None:
                return None
            found = compiled[name] = CompiledTool(definition)
        return found
