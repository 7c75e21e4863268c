"""`x-mcp-header` (2026-07-28, Streamable HTTP): which annotations a tool's input schema may
carry, and the `Mcp-Param-*` headers a call's arguments give.

The rule kept here: a header name a server wrote reaches HTTP only after it passed every
constraint of the transport spec (a non-empty RFC 9110 token, unique case-insensitively, on a
string/integer/boolean property reached from the root through `properties` alone). A tool
with any annotation that fails is rejected whole (`header_problem` says why), and
`param_headers` mirrors only annotations that pass, so no server can make a call fail on an
illegal header. A null or absent value gives no header. Pure: no I/O.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Iterator
from typing import Any

from ..base.text import clip

ANNOTATION = "x-mcp-header"
PREFIX = "Mcp-Param-"
TCHAR = frozenset("!#$%&'*+-.^_`|~" + string.ascii_letters + string.digits)  # RFC 9110 5.6.2
PRIMITIVE = ("string", "integer", "boolean")
DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})  # their values are instances, not schemas


def is_token(name: Any) -> bool:
    """Whether `name` is a non-empty HTTP field-name token (no space, colon, control or non-ASCII character)."""
    return isinstance(name, str) and bool(name) and all(ch in TCHAR for ch in name)


def _annotations(schema: Any) -> Iterator[tuple[str, tuple[str, ...] | None, dict[str, Any]]]:
    """Every schema object in `schema` that carries an annotation: its JSON pointer, the property
    names leading to it when it is reached from the root through `properties` alone (else None),
    and the object itself. An explicit stack: a deeply nested schema cannot exhaust recursion."""
    stack: list[tuple[str, tuple[str, ...] | None, Any]] = [("", (), schema)]
    while stack:
        pointer, path, node = stack.pop()
        if isinstance(node, list):
            stack.extend(reversed([(f"{pointer}/{i}", None, item) for i, item in enumerate(node)]))
            continue
        if not isinstance(node, dict):
            continue
        if ANNOTATION in node:
            yield pointer, path or None, node  # the root itself is no property
        children: list[tuple[str, tuple[str, ...] | None, Any]] = []
        for key, value in node.items():
            if key == ANNOTATION or key in DATA_KEYWORDS:
                continue
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    children.append((f"{pointer}/properties/{name}", None if path is None else (*path, name), sub))
            else:
                children.append((f"{pointer}/{key}", None, value))
        stack.extend(reversed(children))  # document order


def header_problem(schema: Any) -> str | None:
    """Why a tool's input schema breaks the `x-mcp-header` rules (one line, clipped), or None if it keeps them all."""
    problem = _problem(schema)
    return None if problem is None else clip(problem, 300)


def _problem(schema: Any) -> str | None:
    seen: dict[str, str] = {}
    for pointer, path, prop in _annotations(schema):
        name = prop[ANNOTATION]
        where = pointer or "/"
        if path is None:
            return f"x-mcp-header at {where} is not on a property reached through 'properties' alone"
        if not isinstance(name, str) or not name:
            return f"x-mcp-header at {where} is empty" if name == "" else f"x-mcp-header at {where} is not a string"
        if not is_token(name):
            return f"x-mcp-header {name!r} at {where} is not an HTTP header token (no spaces, colons, controls, non-ASCII)"
        kind = prop.get("type")
        if kind not in PRIMITIVE:
            said = f"of type {kind!r}" if isinstance(kind, str) else "without a single type"
            return f"x-mcp-header {name!r} at {where} is on a property {said}, not string, integer or boolean"
        twin = seen.get(name.lower())
        if twin is not None:
            return f"x-mcp-header {name!r} at {where} repeats {twin!r} (header names are case-insensitive)"
        seen[name.lower()] = name
    return None


def param_headers(schema: Any, arguments: Any, encode: Callable[[str | int], str]) -> dict[str, str]:
    """`Mcp-Param-*` headers for the arguments at the annotated properties' paths (`encode` makes a
    value header-safe); an annotation that breaks the rules, and a null or absent value, give none."""
    headers: dict[str, str] = {}
    for _pointer, path, prop in _annotations(schema):
        name = prop[ANNOTATION]
        if path is None or not is_token(name) or prop.get("type") not in PRIMITIVE:
            continue
        value: Any = arguments
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if isinstance(value, (str, int)):  # bool is an int; None, floats, objects: no header
            headers[PREFIX + name] = encode(value)
    return headers
