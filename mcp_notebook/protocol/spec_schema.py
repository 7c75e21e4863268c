"""The MCP JSON schema of each protocol version, shipped in `schemas/`, as compiled validators.

Both eras' files are read the same way: up to 2025-06-18 (draft-07, `definitions`) a
method's definition holds only `method`/`params` and the JSON-RPC envelope is separate;
from 2025-11-25 (2020-12, `$defs`) it is the whole message. Checking a frame against the
envelope *and* its method's definition covers both. Every validator is compiled once per
version and definition and kept (the file is checked against its own draft once).

A frame is first run through fastjsonschema's compiled code (about 20 times faster than
jsonschema on these files): the spec's schemas use only keywords that mean the same in
draft-07 and 2020-12, with no `$ref` beside other keywords, so its "valid" is exact. Only a
frame it rejects goes to jsonschema, which gives the verdict (formats are not asserted, as
in jsonschema) and the message. Both are imported on first use, so `import mcp_notebook`
stays light. Pure: reading the packaged files is the only I/O; a tool schema's `$ref` to a
network (or any other) URI is never dereferenced (SEP-2106): neither validator is given a way to
fetch one, and an instance whose check needs one is left unchecked.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent / "schemas"
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")
_RESULT_OVERRIDES = {"ping": "EmptyResult"}  # request method -> result definition, where not FooRequest -> FooResult


def schema_path(version: str) -> Path:
    return SCHEMA_DIR / f"{version}.json"


@functools.lru_cache(maxsize=None)
def load(version: str) -> dict[str, Any]:
    """The parsed schema of `version` (KeyError for a version we do not ship)."""
    if version not in VERSIONS:
        raise KeyError(f"no MCP schema for protocol version {version!r}")
    with open(schema_path(version), encoding="utf-8") as source:
        loaded: dict[str, Any] = json.load(source)
    return loaded


def defs_key(version: str) -> str:
    return "$defs" if "$defs" in load(version) else "definitions"


def definitions(version: str) -> dict[str, Any]:
    found: dict[str, Any] = load(version)[defs_key(version)]
    return found


@functools.lru_cache(maxsize=None)
def _validator_class(version: str) -> Any:
    import jsonschema.validators

    root = load(version)
    cls = jsonschema.validators.validator_for(root, default=jsonschema.validators.Draft202012Validator)
    cls.check_schema(root)
    return cls


@functools.lru_cache(maxsize=None)
def validator(version: str, name: str) -> Any:
    """A compiled validator for definition `name` of `version`, with internal refs resolvable."""
    if name not in definitions(version):
        raise KeyError(f"MCP {version} has no definition {name!r}")
    schema = dict(load(version))  # the root holds only $schema and the definitions
    schema["$ref"] = f"#/{defs_key(version)}/{name}"
    return _validator_class(version)(schema)


@functools.lru_cache(maxsize=None)
def fast_check(version: str, name: str) -> Any:
    """Definition `name` of `version` compiled to Python by fastjsonschema: raises on invalid."""
    import fastjsonschema

    schema = {**load(version), "$schema": "http://json-schema.org/draft-07/schema#", "$ref": f"#/{defs_key(version)}/{name}"}
    return fastjsonschema.compile(schema, use_default=False, use_formats=False)


def pointer(prefix: str, path: Any) -> str:
    """A JSON pointer (RFC 6901): `prefix` then each step of `path`."""
    steps = "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in path)
    return prefix + steps


def errors(instance: Any, version: str, name: str, at: str = "") -> list[tuple[str, str]]:
    """(JSON pointer, message) for what in `instance` breaks definition `name`, the most telling
    first; empty when it validates. `at` is where `instance` sits in its frame."""
    if _fast_valid(fast_check(version, name), instance):
        return []
    import jsonschema.exceptions  # a rejected frame only: jsonschema decides, and says why

    found = list(validator(version, name).iter_errors(instance))
    if not found:
        return []
    best = jsonschema.exceptions.best_match(found)
    return [(pointer(at, best.absolute_path), f"{best.message[:300]} ({name})")]


@functools.lru_cache(maxsize=None)
def union_members(version: str, union: str) -> dict[str, str]:
    """`{method: definition name}` of a union such as `ServerNotification` (absent: empty;
    collapsed to its only member, as in 2026-07-28: that member)."""
    defs = definitions(version)
    union_def = defs.get(union)
    if union_def is None:
        return {}
    refs = union_def.get("anyOf") or union_def.get("oneOf") or [{"$ref": f"#/{defs_key(version)}/{union}"}]
    members: dict[str, str] = {}
    for ref in refs:
        name = ref["$ref"].rsplit("/", 1)[-1]
        const = defs[name].get("properties", {}).get("method", {}).get("const")
        if isinstance(const, str):
            members[const] = name
    return members


def result_definition(version: str, method: str, union: str = "ClientRequest") -> str | None:
    """The result type of request `method` of `union` (the client's requests, or the server's:
    "ServerRequest") in `version` (None: not a request we know)."""
    request = union_members(version, union).get(method)
    if request is None:
        return None
    defs = definitions(version)
    name = _RESULT_OVERRIDES.get(method) or request[: -len("Request")] + "Result"
    for candidate in (name, "EmptyResult", "Result"):  # subscribe, setLevel, ...: an empty result
        if candidate in defs:
            return candidate
    return None


@functools.lru_cache(maxsize=None)
def covers_result(version: str, name: str) -> bool:
    """Whether result type `name` repeats every constraint of `Result`, the envelope's `result`
    (the files flatten them: same `_meta`, same required fields), so that checking a response's
    result against it checks the envelope's `result` too; the rest of the envelope (`jsonrpc`,
    an integer or string `id`) is what makes a frame a response at all (`jsonrpc.classify`)."""
    defs = definitions(version)
    base, found = defs["Result"], defs.get(name, {})
    properties = found.get("properties", {})
    same = all(properties.get(key) == value for key, value in base.get("properties", {}).items())
    return same and set(base.get("required", [])) <= set(found.get("required", [])) and "type" in found


def response_definitions(version: str) -> tuple[str, str]:
    """The envelopes of a result and of an error response in `version`."""
    if "JSONRPCResultResponse" in definitions(version):
        return "JSONRPCResultResponse", "JSONRPCErrorResponse"
    return "JSONRPCResponse", "JSONRPCError"


@functools.lru_cache(maxsize=1)
def _fast_schema_check() -> Any:
    """JSON Schema's draft-07 metaschema compiled by fastjsonschema (the file jsonschema ships,
    read without importing either: importing jsonschema takes over a second, in long calls
    that hold the GIL, and a server ping waiting on the reading thread would wait as long)."""
    import importlib.util

    import fastjsonschema

    found = importlib.util.find_spec("jsonschema_specifications")
    assert found is not None and found.submodule_search_locations, "jsonschema's metaschemas are not installed"
    path = Path(list(found.submodule_search_locations)[0]) / "schemas" / "draft7" / "metaschema.json"
    metaschema = json.loads(path.read_text(encoding="utf-8"))
    return fastjsonschema.compile(metaschema, use_default=False, use_formats=False)


def _fast_valid(check: Any, instance: Any) -> bool:
    import fastjsonschema

    try:
        check(instance)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def json_schema_errors(schema: Any) -> str | None:
    """Why `schema` (a tool's inputSchema or outputSchema) is not a valid JSON Schema, or None.

    Its own `$schema` names its dialect; without one it is 2020-12, the spec's default. The
    draft-07 metaschema, compiled by fastjsonschema, passes the schemas real servers send
    (the keywords they use mean the same in both); only a schema it refuses goes to jsonschema,
    which has the last word in the schema's own dialect, and the message."""
    if not isinstance(schema, dict):
        return f"a schema must be an object, not {type(schema).__name__}"
    if _fast_valid(_fast_schema_check(), {key: value for key, value in schema.items() if key != "$schema"}):
        return None
    import jsonschema.exceptions
    import jsonschema.validators

    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.validators.Draft202012Validator)
        cls.check_schema(schema)
    except jsonschema.exceptions.SchemaError as exc:
        return f"{exc.message[:300]} (at {pointer('', exc.absolute_path) or '/'})"
    return None


def tool_validator(schema: dict[str, Any]) -> Any:
    """jsonschema's validator of a tool's `schema`, in the dialect its `$schema` names (2020-12
    without one), whose registry knows the metaschemas and retrieves nothing (its default
    registry would fetch a remote `$ref`): a check that needs one raises `Unresolvable`."""
    import jsonschema.validators
    import jsonschema_specifications

    cls = jsonschema.validators.validator_for(schema, default=jsonschema.validators.Draft202012Validator)
    return cls(schema, registry=jsonschema_specifications.REGISTRY)


@functools.lru_cache(maxsize=256)
def _compiled(text: str) -> Any:
    return tool_validator(json.loads(text))


class _NoRemote(dict[str, Any]):
    """fastjsonschema's URI handlers: every scheme's, and each refuses (it would urlopen the rest)."""

    def __contains__(self, scheme: object) -> bool:
        return True

    def __getitem__(self, scheme: str) -> Any:
        return _refuse


def _refuse(uri: str) -> Any:
    raise ValueError(f"a $ref to {uri} is never fetched")


# Keywords draft-07 does not have (fastjsonschema would pass what they refuse), and what a `$ref`
# may sit beside in draft-07, which ignores every other sibling (2019-09 on apply them).
_LATER_KEYWORDS = frozenset(
    ("prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired", "dependentSchemas", "$dynamicRef",
     "$recursiveRef", "minContains", "maxContains")
)  # fmt: skip
_REF_NOTES = frozenset(("$ref", "description", "title", "$comment", "default", "examples", "deprecated", "readOnly", "writeOnly"))


def _draft7_exact(schema: Any) -> bool:
    """Whether fastjsonschema's draft-07 reading of `schema` decides as its own dialect does."""
    if isinstance(schema, list):
        return all(_draft7_exact(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if not _LATER_KEYWORDS.isdisjoint(schema) or ("$ref" in schema and not _REF_NOTES.issuperset(schema)):
        return False
    return all(_draft7_exact(value) for key, value in schema.items() if key not in ("enum", "const", "examples", "default"))


@functools.lru_cache(maxsize=256)
def tool_check(text: str) -> Callable[[Any], Any] | None:
    """A tool's schema (as `schema_text`) compiled by fastjsonschema as draft-07: a function that
    returns for a valid value (exactly: the schema's own dialect agrees) and raises
    `JsonSchemaValueException` for the rest; None where it cannot be exact (keywords draft-07
    lacks, a `$ref` beside others) or cannot compile (a network `$ref`, an odd schema)."""
    import fastjsonschema

    loaded = json.loads(text)
    if not isinstance(loaded, dict) or not _draft7_exact(loaded):
        return None
    try:
        compiled: Callable[[Any], Any] = fastjsonschema.compile(
            {**loaded, "$schema": "http://json-schema.org/draft-07/schema#"},
            handlers=_NoRemote(),
            use_default=False,
            use_formats=False,
        )
    except Exception:  # noqa: BLE001 - a schema it cannot compile goes to jsonschema, which says why
        return None
    return compiled


def schema_text(schema: Any) -> str:
    """The key `tool_check` caches a schema by."""
    return json.dumps(schema, sort_keys=True, default=str)


def instance_errors(instance: Any, schema: dict[str, Any], at: str) -> list[tuple[str, str]]:
    """(JSON pointer, message) for the first way `instance` breaks a tool's `schema`: a value
    fastjsonschema's compiled code passes is valid (as for frames); jsonschema judges the rest."""
    text = schema_text(schema)
    fast = tool_check(text)
    if fast is not None and _fast_valid(fast, instance):
        return []
    import jsonschema.exceptions
    import referencing.exceptions

    try:
        found = list(_compiled(text).iter_errors(instance))
    except referencing.exceptions.Unresolvable:  # a $ref we never fetch: nothing to say
        return []
    if not found:
        return []
    best = jsonschema.exceptions.best_match(found)
    return [(pointer(at, best.absolute_path), best.message[:300])]
