"""A tool call's arguments as the caller wrote them: a dict, keywords, or both, merged into
one dict; and the arguments the tool's input schema does not declare.

The rule kept here: an argument is never silently dropped or silently replaced. The same
name given in the dict and as a keyword is refused; an argument the schema does not declare
is refused when the schema says `additionalProperties: false` (`validate.problems` does
that) and warned about when the schema says nothing, since the server may ignore it.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import Any

from ...base.errors import McpNotebookError
from ...base.public import public
from .validate import ToolArgumentError, mapping


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
        warnings.warn(
            f"{tool}: the input schema does not declare {', '.join(map(repr, extra))} (declared: {declared}); "
            "sent anyway, the server may ignore it",
            ExtraArgumentWarning,
            stacklevel=4,
        )
