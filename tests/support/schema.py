"""Validate frames our client sends against the official MCP JSON schemas.

``validate_client_frame(frame, version)`` raises ``AssertionError`` with a
readable message unless ``frame`` is a valid *client-to-server* message for
protocol ``version``:

* request / notification: the frame must pass the JSON-RPC envelope
  (``JSONRPCRequest`` / ``JSONRPCNotification``) **and** the specific
  definition for its method, taken from the ``ClientRequest`` /
  ``ClientNotification`` unions of that version (e.g. ``InitializeRequest``,
  ``CallToolRequest``, ``CancelledNotification``). A method that is not a
  client-to-server message in that version (``ping`` in 2026-07-28,
  ``roots/list`` from a client, a typo) fails.
* response (the client answering a server request, e.g. a pong): the frame
  must pass ``JSONRPCResponse``/``JSONRPCError`` (2024-11-05 .. 2025-06-18) or
  ``JSONRPCResultResponse``/``JSONRPCErrorResponse`` (2025-11-25, 2026-07-28).
  With ``answers_method`` (e.g. ``"ping"``, ``"roots/list"``) a result is also
  validated against that request's result type (``EmptyResult``,
  ``ListRootsResult``, ...), and the method must be a server-to-client request
  of that version.
* a JSON array is a batch: only 2025-03-26 allows it; each element is checked.

Schema shapes differ per version: up to 2025-06-18 (draft-07, ``definitions``)
method definitions hold only ``method``/``params`` and the envelope is
separate; from 2025-11-25 (2020-12, ``$defs``) each method definition is the
whole JSON-RPC message. Validating against envelope *and* method definition
covers both.

The spec lives in ``shared/spec`` beside the repository
(``<repo>/../shared/spec/<version>/schema.json``); ``MCP_SPEC_DIR`` overrides.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import jsonschema.exceptions
import jsonschema.validators

__all__ = [
    "SPEC_DIR",
    "VERSIONS",
    "spec_dir",
    "load_schema",
    "definition_names",
    "method_definition",
    "validate_client_frame",
]

VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28")

SPEC_DIR = Path(__file__).resolve().parents[2].parent / "shared" / "spec"

# Server request method -> result definition, where the name is not simply
# FooRequest -> FooResult.
_RESULT_OVERRIDES = {"ping": "EmptyResult"}


def spec_dir() -> Path:
    """Folder holding ``<version>/schema.json``; ``MCP_SPEC_DIR`` overrides."""
    override = os.environ.get("MCP_SPEC_DIR")
    return Path(override).expanduser().resolve() if override else SPEC_DIR


@functools.lru_cache(maxsize=None)
def _load(path: str) -> dict[str, Any]:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def load_schema(version: str) -> dict[str, Any]:
    """The parsed ``schema.json`` of ``version`` (cached)."""
    path = spec_dir() / version / "schema.json"
    if not path.is_file():
        raise FileNotFoundError(
            f"MCP schema for version {version!r} not found at {path} "
            f"(known versions: {', '.join(VERSIONS)}; set MCP_SPEC_DIR to the folder holding <version>/schema.json)"
        )
    return _load(str(path))


def _defs_key(schema: dict[str, Any]) -> str:
    return "$defs" if "$defs" in schema else "definitions"


def _defs(version: str) -> dict[str, Any]:
    schema = load_schema(version)
    return schema[_defs_key(schema)]


def definition_names(version: str) -> list[str]:
    return sorted(_defs(version))


@functools.lru_cache(maxsize=None)
def _validator(spec: str, version: str, name: str) -> Any:
    """A validator for ``#/<defs>/<name>`` with the file's own draft (``$schema``)."""
    root = load_schema(version)
    if name not in root[_defs_key(root)]:
        raise KeyError(f"{version}: schema has no definition {name!r}")
    # The root of every MCP schema.json holds only $schema and the definitions,
    # so "root + $ref" is exactly the definition, with internal refs resolvable.
    schema = dict(root)
    schema["$ref"] = f"#/{_defs_key(root)}/{name}"
    return _validator_class(spec, version)(schema)


@functools.lru_cache(maxsize=None)
def _validator_class(spec: str, version: str) -> Any:
    """The validator class of the file's own draft, the whole file checked against it once
    (checking it again for each definition cost about a second apiece)."""
    root = load_schema(version)
    cls = jsonschema.validators.validator_for(root, default=jsonschema.Draft202012Validator)
    cls.check_schema(root)
    return cls


def _method_const(defn: dict[str, Any]) -> str | None:
    method = defn.get("properties", {}).get("method", {})
    const = method.get("const")
    return const if isinstance(const, str) else None


def _union_members(version: str, union: str) -> dict[str, str]:
    """``{method: definition name}`` for a union such as ``ClientRequest``.

    A union may be absent (2026-07-28 has no ``ServerRequest``) or collapsed to
    its only member (2026-07-28 ``ClientNotification`` *is* the cancelled
    notification); both are handled.
    """
    defs = _defs(version)
    union_def = defs.get(union)
    if union_def is None:
        return {}
    refs = union_def.get("anyOf") or union_def.get("oneOf")
    if refs is None:
        const = _method_const(union_def)
        if const is None:
            return {}
        named = [n for n, d in defs.items() if n != union and isinstance(d, dict) and _method_const(d) == const]
        return {const: named[0] if len(named) == 1 else union}
    members: dict[str, str] = {}
    for ref in refs:
        name = ref["$ref"].rsplit("/", 1)[-1]
        const = _method_const(defs[name])
        if const is not None:
            members[const] = name
    return members


def method_definition(version: str, method: str, union: str) -> str | None:
    """Name of the definition in ``union`` whose ``properties.method.const`` is ``method``."""
    return _union_members(version, union).get(method)


def _result_definition(version: str, request_def: str, method: str) -> str:
    defs = _defs(version)
    name = _RESULT_OVERRIDES.get(method)
    if name is None and request_def.endswith("Request"):
        name = request_def[: -len("Request")] + "Result"
    if name is None or name not in defs:
        raise AssertionError(f"{version}: cannot find the result type of {method!r} ({request_def})")
    return name


def _short(frame: Any, limit: int = 600) -> str:
    text = json.dumps(frame, sort_keys=True, default=str)
    return text if len(text) <= limit else text[:limit] + "...<truncated>"


def _check(frame: Any, version: str, name: str, what: str) -> None:
    validator = _validator(str(spec_dir()), version, name)
    errors = sorted(validator.iter_errors(frame), key=lambda e: (len(e.path), list(e.path)))
    if not errors:
        return
    best = jsonschema.exceptions.best_match(errors)
    lines = [f"{what} does not validate against {name} (MCP {version}):"]
    for err in [best] + [e for e in errors if e is not best][:4]:
        where = "$" + "".join(f"[{p!r}]" if isinstance(p, int) else f".{p}" for p in err.absolute_path)
        lines.append(f"  - at {where}: {err.message}")
    if len(errors) > 5:
        lines.append(f"  ... and {len(errors) - 5} more error(s)")
    lines.append(f"  frame: {_short(frame)}")
    raise AssertionError("\n".join(lines))


def _response_defs(version: str) -> tuple[str, str]:
    defs = _defs(version)
    if "JSONRPCResultResponse" in defs:
        return "JSONRPCResultResponse", "JSONRPCErrorResponse"
    return "JSONRPCResponse", "JSONRPCError"


def validate_client_frame(
    frame: dict[str, Any], version: str, answers_method: str | None = None, task_augmented: bool = False
) -> None:
    """Assert ``frame`` is a valid client-to-server MCP message for ``version``.

    ``answers_method``: for a response, the method of the server request it
    answers (``"ping"``, ``"roots/list"``, ...); its result is then checked
    against that method's result type, or against ``CreateTaskResult`` when the
    request was ``task_augmented`` (carried ``params.task``) and the reply accepts a task.
    """
    if isinstance(frame, list):
        if "JSONRPCBatchRequest" not in _defs(version):
            raise AssertionError(f"JSON-RPC batches are not allowed in MCP {version}: {_short(frame)}")
        if not frame:
            raise AssertionError("empty JSON-RPC batch")
        for item in frame:
            validate_client_frame(item, version, answers_method, task_augmented)
        return

    if not isinstance(frame, dict):
        raise AssertionError(f"frame must be a JSON object, got {type(frame).__name__}: {_short(frame)}")
    if frame.get("jsonrpc") != "2.0":
        raise AssertionError(f'frame must have "jsonrpc": "2.0": {_short(frame)}')

    if "method" in frame:
        _check_request_or_notification(frame, version)
    else:
        _check_response(frame, version, answers_method, task_augmented)


# Requests of extensions (not in the base schema), and the versions they are defined on:
# the Skills extension (io.modelcontextprotocol/skills, SEP-2640) targets 2026-07-28.
EXTENSION_REQUESTS = {"skills/list": ("2026-07-28",), "skills/get": ("2026-07-28",)}


def _check_request_or_notification(frame: dict[str, Any], version: str) -> None:
    if "result" in frame or "error" in frame:
        raise AssertionError(f"frame mixes a request/notification with a response: {_short(frame)}")
    method = frame["method"]
    if not isinstance(method, str):
        raise AssertionError(f"method must be a string: {_short(frame)}")
    if "id" in frame:
        kind, envelope, union = "request", "JSONRPCRequest", "ClientRequest"
    else:
        kind, envelope, union = "notification", "JSONRPCNotification", "ClientNotification"
    _check(frame, version, envelope, f"client {kind}")
    if "id" in frame and method in EXTENSION_REQUESTS and version in EXTENSION_REQUESTS[method]:
        return  # an extension's method: the base schema defines only its envelope
    name = method_definition(version, method, union)
    if name is None:
        known = ", ".join(sorted(_union_members(version, union))) or "none"
        raise AssertionError(f"{method!r} is not a client-to-server {kind} in MCP {version} ({union}: {known}): {_short(frame)}")
    _check(frame, version, name, f"client {kind} {method!r}")


def _check_response(frame: dict[str, Any], version: str, answers_method: str | None, task_augmented: bool) -> None:
    has_result, has_error = "result" in frame, "error" in frame
    if has_result == has_error:
        raise AssertionError(
            f"a response must have exactly one of 'result' and 'error' (or be a request with 'method'): {_short(frame)}"
        )
    result_def, error_def = _response_defs(version)
    if "id" not in frame and (has_result or "id" in _defs(version)[error_def].get("required", [])):
        # Only an error may lack its id, and only where the schema allows it (2025-11-25 on:
        # the answer to a request whose id could not be read, e.g. a ping with an object id).
        raise AssertionError(f"client response without 'id': {_short(frame)}")
    _check(frame, version, result_def if has_result else error_def, "client response")
    if answers_method is None:
        return
    request_def = method_definition(version, answers_method, "ServerRequest")
    if request_def is None:
        known = ", ".join(sorted(_union_members(version, "ServerRequest"))) or "none"
        raise AssertionError(
            f"{answers_method!r} is not a server-to-client request in MCP {version} (ServerRequest: {known}), "
            f"so the client cannot be answering it: {_short(frame)}"
        )
    if has_result:
        # A task-augmented request is accepted with a CreateTaskResult, or (a receiver that
        # takes no task for it) answered as a plain one.
        as_task = task_augmented and isinstance(frame["result"], dict) and "task" in frame["result"]
        _check(
            frame["result"],
            version,
            "CreateTaskResult" if as_task else _result_definition(version, request_def, answers_method),
            f"result of {answers_method!r}" + (" (task-augmented)" if as_task else ""),
        )
