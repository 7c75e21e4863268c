"""The fields a form shows for a schema's properties, and the arguments a tool's form makes.

Plain Python under the widget forms (`notebook.widgets.tool_form`, the elicitation form in
`notebook.widgets.interaction`): which input fits a property (`field_input`: one choice,
several, a checkbox, a number box, a text box, or JSON text when none of those fits a
tool's argument) and what it starts with; and, for a tool (`ToolFields`), turning what the
fields hold back into the arguments of a call, parsed as `%mcp call` parses `key=value` (a
number box's whole number as the integer `2` is, not `2.0`).
Nothing here imports ipywidgets: a front end builds a widget from each `FieldInput`.

The rule kept here: only what the user set is sent. A required argument always is; an
optional one only when its field no longer holds what the form started with. Arguments that
cannot be right are one `ToolArgumentError` of one line, before anything is sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .arguments import parse_number, parse_value
from .validate import ToolArgumentError, problems
from .view import kind_of, sample

PLACEHOLDERS = {"email": "name@example.com", "uri": "https://…", "date": "YYYY-MM-DD", "date-time": "YYYY-MM-DDThh:mm:ssZ"}
WIDEST = 2**53  # the bound a number box gets at an end its property leaves open


@dataclass(frozen=True)
class FieldInput:
    """The input that fits one property, and what it starts with.

    `input` is "choices" (several of `options`), "choice" (one of `options`, or None),
    "checkbox", "integer", "number", "text" or "json" (JSON written as text). A number box is
    bounded when `minimum` and `maximum` are set (both are, when the property bounds either end).
    """

    input: str
    start: Any
    options: tuple[tuple[str, Any], ...] = ()  # (label, value)
    minimum: float | None = None
    maximum: float | None = None
    placeholder: str = ""


@dataclass(frozen=True)
class ToolField:
    """One argument of a tool as its form shows it: name, required mark, kind, note and input."""

    name: str
    schema: dict[str, Any]
    required: bool
    kind: str  # as the tool's view writes it: `string`, `"a"|"b"`, `array of object`
    description: str
    input: FieldInput


def choices(prop: dict[str, Any]) -> list[tuple[str, Any]] | None:
    """(label, value) choices of an enum property: enum (+enumNames), oneOf/anyOf consts."""
    values, labels = prop.get("enum"), prop.get("enumNames")
    if isinstance(values, list):
        names = labels if isinstance(labels, list) else values
        return [(str(label), value) for label, value in zip(names, values, strict=False)]
    branches = prop.get("oneOf") or prop.get("anyOf")
    if isinstance(branches, list) and all(isinstance(b, dict) and "const" in b for b in branches):
        return [(str(b.get("title", b["const"])), b["const"]) for b in branches]
    return None


def field_input(prop: dict[str, Any]) -> FieldInput:
    """The input for one property of a requested schema, its default as its start."""
    kind, default = prop.get("type"), prop.get("default")
    options = choices(prop)
    if kind == "array":
        items = choices(prop.get("items") or {}) or []
        chosen = tuple(v for v in (default or []) if v in [value for _, value in items])
        return FieldInput("choices", chosen, tuple(items))
    if options is not None:
        values = [value for _, value in options]
        return FieldInput("choice", default if default in values else None, tuple(options))
    if kind == "boolean":
        return FieldInput("checkbox", bool(default))
    if kind in ("integer", "number"):
        low, high = prop.get("minimum"), prop.get("maximum")
        if low is None and high is None:
            return FieldInput(kind, default if default is not None else 0)
        low = low if low is not None else -WIDEST
        high = high if high is not None else WIDEST
        return FieldInput(kind, default if default is not None else max(low, min(high, 0)), minimum=low, maximum=high)
    start = default if isinstance(default, str) else ""
    return FieldInput("text", start, placeholder=PLACEHOLDERS.get(prop.get("format", ""), ""))


def fits_an_input(prop: dict[str, Any]) -> bool:
    """Whether `field_input` has a real input for this property (else: JSON text)."""
    kind = prop.get("type")
    if kind == "array":
        return choices(prop.get("items") or {}) is not None
    return kind in ("string", "integer", "number", "boolean") or choices(prop) is not None


def tool_field(name: str, prop: dict[str, Any], required: bool) -> ToolField:
    """A tool argument's field; a required JSON one starts from a sample value, an optional one empty."""
    if fits_an_input(prop):
        shown = field_input(prop)
    else:
        shown = FieldInput("json", json.dumps(sample(prop)) if required else "", placeholder=f"JSON: {kind_of(prop)}")
    note = prop.get("description")
    return ToolField(name, prop, required, kind_of(prop), str(note) if note else "", shown)


class ToolFields:
    """A tool's arguments as a form's fields (`.fields`, by name), and the arguments their values make."""

    def __init__(self, input_schema: Any) -> None:
        self.schema: dict[str, Any] = input_schema if isinstance(input_schema, dict) else {}
        required = set(self.schema.get("required") or [])
        declared = self.schema.get("properties") or {}
        self.fields: dict[str, ToolField] = {
            name: tool_field(name, prop, name in required) for name, prop in declared.items() if isinstance(prop, dict)
        }

    def arguments(self, values: Mapping[str, Any], started: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The arguments `values` (by field name) make; text is parsed by the schema, as `%mcp call` does.

        `started` is what each field held when the form was made (by default: its input's
        start); a field missing from `values` still holds it.
        """
        arguments: dict[str, Any] = {}
        for name, field in self.fields.items():
            start = field.input.start if started is None else started[name]
            value = values.get(name, start)
            if not field.required and value == start:
                continue
            if isinstance(value, tuple):
                value = list(value)
            if isinstance(value, float):
                value = parse_number(value, field.schema, field.name)
            if isinstance(value, str):
                if value == "" and not field.required:
                    continue
                value = _parse(value, field)
            if value is None and not field.required:
                continue
            arguments[name] = value
        return arguments

    def checked_arguments(self, values: Mapping[str, Any], started: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """`arguments`, checked against the input schema: what cannot be right is one ToolArgumentError."""
        arguments = self.arguments(values, started)
        issues = problems(arguments, self.schema)
        if issues:
            raise ToolArgumentError("; ".join(issues))
        return arguments


def _parse(text: str, field: ToolField) -> Any:
    if field.input.input != "json" or not text.strip():
        return parse_value(text, field.schema, field.name)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ToolArgumentError(f"{field.name!r} is not JSON: {exc}") from None
