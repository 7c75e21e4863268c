"""The modern era (2026-07-28): stateless, every request declares itself in `_meta`.

Checks, in order, first failure wins (the same order as the official SDK):

1. `params._meta` carries `io.modelcontextprotocol/protocolVersion` and
   `.../clientCapabilities` -> else -32602 Invalid params (basic/index: a request
   missing a required field is malformed);
2. on HTTP, `MCP-Protocol-Version`, `Mcp-Method` and (tools/call) `Mcp-Name` are
   present, single and equal to the body -> else -32020 HeaderMismatch;
3. the version is one this server serves -> else -32022 UnsupportedProtocolVersion
   with `data.supported` and `data.requested`;
4. the method exists -> else -32601 (so is `ping`: there is no ping in this era).

(-32021 MissingRequiredClientCapability comes from the tools that ask the client,
`_asking`.) An `initialize` gets -32022 naming the modern versions, so a legacy client
can tell its user what this server speaks. A tool that needs input answers
`input_required`; `subscriptions/listen` acknowledges the resources it will watch,
then carries their `notifications/resources/updated` until the client ends it.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

import anyio

from ..protocol import jsonrpc as rpc
from ..protocol.versions import MODERN_VERSIONS
from . import _features, _resources, _ui_app
from ._app import INSTRUCTIONS, LOG_LEVELS, PROTOCOL_VERSION_KEY, SERVER_INFO, App, Call, Outbox, RpcError
from ._asking import MISSING_REQUIRED_CLIENT_CAPABILITY, InputRequired

HEADER_MISMATCH = -32020
UNSUPPORTED_PROTOCOL_VERSION = -32022

CAPABILITIES_KEY = "io.modelcontextprotocol/clientCapabilities"
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"
SERVER_INFO_KEY = "io.modelcontextprotocol/serverInfo"
SUBSCRIPTION_ID_KEY = "io.modelcontextprotocol/subscriptionId"
METHODS = frozenset({"server/discover", "subscriptions/listen", *_features.METHODS})
NAME_PARAM = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

# JSON-RPC error code -> HTTP status of a JSON error response (streamable-http page).
HTTP_STATUS = {
    rpc.PARSE_ERROR: 400,
    rpc.INVALID_REQUEST: 400,
    rpc.INVALID_PARAMS: 400,
    rpc.METHOD_NOT_FOUND: 404,
    HEADER_MISMATCH: 400,
    MISSING_REQUIRED_CLIENT_CAPABILITY: 400,
    UNSUPPORTED_PROTOCOL_VERSION: 400,
}


def declared_version(message: dict[str, Any]) -> Any:
    """The `_meta` protocol version a request declares, or None (then it is not modern)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get(PROTOCOL_VERSION_KEY) if isinstance(meta, dict) else None


def http_status(reply: dict[str, Any]) -> int:
    error = reply.get("error")
    code = error.get("code") if isinstance(error, dict) else None
    return HTTP_STATUS.get(code, 200) if isinstance(code, int) else 200


def reject_initialize(message: dict[str, Any]) -> dict[str, Any]:
    params = message.get("params")
    requested = params.get("protocolVersion") if isinstance(params, dict) else None
    supported = list(MODERN_VERSIONS)
    text = f"this server speaks {', '.join(supported)} (no initialize handshake): use server/discover"
    data = {"supported": supported, "requested": requested if isinstance(requested, str) else ""}
    return rpc.error(message.get("id"), UNSUPPORTED_PROTOCOL_VERSION, text, data)


def _decode_header(value: str) -> str | None:
    """A header value with the `=?base64?...?=` sentinel decoded; None if it does not decode."""
    if value.startswith("=?base64?") and value.endswith("?="):
        try:
            return base64.b64decode(value[9:-2], validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            return None
    return value


def _check_headers(message: dict[str, Any], version: Any, headers: list[tuple[str, str]]) -> None:
    found: dict[str, str] = {}
    for name, value in headers:
        if name in ("mcp-protocol-version", "mcp-method", "mcp-name"):
            if name in found:
                raise RpcError(HEADER_MISMATCH, f"Header mismatch: {name} given more than once")
            found[name] = value
    method = message["method"]
    expected: dict[str, Any] = {"mcp-protocol-version": version, "mcp-method": method}
    name_param = NAME_PARAM.get(method)
    name_value = (message.get("params") or {}).get(name_param) if name_param else None
    if name_value is not None:
        expected["mcp-name"] = name_value
    for name, body_value in expected.items():
        given = found.get(name)
        if given is None:
            raise RpcError(HEADER_MISMATCH, f"Header mismatch: required header {name} is missing")
        if name == "mcp-name":
            given = _decode_header(given)
        if given != body_value:
            mismatch = f"Header mismatch: {name} header value {given!r} does not match body value {body_value!r}"
            raise RpcError(HEADER_MISMATCH, mismatch)


def check(app: App, message: dict[str, Any], headers: list[tuple[str, str]] | None = None) -> str:
    """The version a request is served at, or RpcError (see the module docstring for the order)."""
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    if not isinstance(meta, dict):
        raise RpcError(
            rpc.INVALID_PARAMS,
            f"params._meta must be an object with {PROTOCOL_VERSION_KEY!r} and {CAPABILITIES_KEY!r}",
        )
    missing = [key for key in (PROTOCOL_VERSION_KEY, CAPABILITIES_KEY) if key not in meta]
    if missing:
        raise RpcError(rpc.INVALID_PARAMS, f"params._meta is missing the required key(s): {', '.join(missing)}")
    version = meta[PROTOCOL_VERSION_KEY]
    if headers is not None:
        _check_headers(message, version, headers)
    if not isinstance(version, str):
        raise RpcError(rpc.INVALID_PARAMS, f"{PROTOCOL_VERSION_KEY} must be a string, not {version!r}")
    if version not in MODERN_VERSIONS:
        data = {"supported": app.supported_versions(), "requested": version}
        raise RpcError(UNSUPPORTED_PROTOCOL_VERSION, "Unsupported protocol version", data)
    if message["method"] not in METHODS:
        raise RpcError(rpc.METHOD_NOT_FOUND, f"Method not found: {message['method']}")
    return version


def call(app: App, message: dict[str, Any], outbox: Outbox, headers: list[tuple[str, str]] | None = None) -> Call:
    """A Call for a modern request, or RpcError when the request is rejected before it runs."""
    version = check(app, message, headers)
    meta = message["params"]["_meta"]
    level = meta.get(LOG_LEVEL_KEY)
    capabilities = meta.get(CAPABILITIES_KEY)
    return Call(
        message,
        outbox,
        version=version,
        modern=True,
        log_level=level if level in LOG_LEVELS else None,
        client_capabilities=capabilities if isinstance(capabilities, dict) else {},
    )


async def listen(app: App, call: Call) -> dict[str, Any]:
    """`subscriptions/listen`: acknowledge, then watch the resources until cancelled (never returns)."""
    wanted = call.params.get("notifications")
    if not isinstance(wanted, dict):
        raise RpcError(rpc.INVALID_PARAMS, "subscriptions/listen needs a notifications object")
    asked = wanted.get("resourceSubscriptions")
    uris = [uri for uri in asked if isinstance(uri, str) and _resources.known(uri)] if isinstance(asked, list) else []
    meta = {SUBSCRIPTION_ID_KEY: call.id}
    honoured = {"resourceSubscriptions": uris} if isinstance(asked, list) else {}
    await call.notify("notifications/subscriptions/acknowledged", {"_meta": meta, "notifications": honoured})
    with _resources.watching(app, object(), set(uris), call.outbox.send, meta):
        await anyio.sleep_forever()
    raise AssertionError("unreachable")  # pragma: no cover


async def handle(app: App, call: Call) -> dict[str, Any]:
    """The reply to a checked modern request."""
    try:
        if call.method == "server/discover":
            result = {
                "supportedVersions": app.supported_versions(),
                "capabilities": _ui_app.capabilities(_features.capabilities(call.version), _apps(call)),
                "instructions": INSTRUCTIONS,
                "ttlMs": 0,
                "cacheScope": "public",
            }
        elif call.method == "subscriptions/listen":
            result = await listen(app, call)
        else:
            result = await _features.result(app, call)
        result["resultType"] = "complete"
    except InputRequired as needed:
        result = {"resultType": "input_required", "inputRequests": needed.requests}
    except RpcError as exc:
        return exc.reply(call.id)
    meta = result.get("_meta")
    result["_meta"] = {**(meta if isinstance(meta, dict) else {}), SERVER_INFO_KEY: SERVER_INFO}
    return rpc.result(call.id, result)


def _apps(call: Call) -> bool:
    """The request's client declared MCP Apps (capabilities travel in each modern request)."""
    return _ui_app.wanted(call.meta.get(CAPABILITIES_KEY))
