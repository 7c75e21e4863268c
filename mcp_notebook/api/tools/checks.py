"""A tool's checks compiled once per listing: its input and output schemas compiled by
fastjsonschema (`protocol.spec_schema.tool_check`), and the names its input schema declares,
kept until the tools listing changes.

The rule kept here: a check decides as `validate.problems` does (it is the same verdict, the
compiled code, kept with the tool instead of looked up by the schema's text on every call).
A listing is known by identity: a `list_changed` drops the cached listing, the next one is a
new object, and its tools are compiled again on first use (a schema seen before comes from
`tool_check`'s cache).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...protocol import spec_schema as spec
from ..results.objects import Listing
from .validate import refused, walk


class Schema:
    """One schema's check, compiled on first use."""

    __slots__ = ("schema", "where", "_check")

    def __init__(self, schema: Any, where: str = "") -> None:
        self.schema, self.where = schema, where
        self._check: Callable[[Any], Any] | None | bool = False  # False: not compiled yet

    def problems(self, value: Any) -> list[str]:
        check = self._check
        if check is False:
            if not isinstance(self.schema, dict):
                return []
            check = self._check = spec.tool_check(spec.schema_text(self.schema))
        if check is None or check is True:
            return walk(value, self.schema, self.where)  # fastjsonschema cannot decide this schema exactly
        try:
            check(value)
        except Exception as refusal:  # noqa: BLE001 - as in `validate.judged`
            return refused(value, self.schema, self.where, refusal)
        return []


class CompiledTool:
    """One tool definition's checks."""

    __slots__ = ("definition", "input_schema", "arguments", "declared", "output_schema", "output")

    def __init__(self, definition: dict[str, Any]) -> None:
        self.definition = definition
        schema = self.input_schema = definition.get("inputSchema")
        self.arguments = Schema(schema)
        # The names an ExtraArgumentWarning is not about (`arguments.undeclared`); None: it never warns.
        self.declared: frozenset[str] | None = None
        if isinstance(schema, dict) and "additionalProperties" not in schema and "patternProperties" not in schema:
            properties = schema.get("properties")
            self.declared = frozenset(properties) if isinstance(properties, dict) else frozenset()
        self.output_schema = definition.get("outputSchema")
        self.output = Schema(self.output_schema, "structuredContent")

    def argument_problems(self, arguments: dict[str, Any]) -> list[str]:
        return self.arguments.problems(arguments)

    def output_problems(self, structured: Any) -> list[str]:
        return self.output.problems(structured)

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
