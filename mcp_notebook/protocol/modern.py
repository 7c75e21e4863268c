"""Rules of the modern era (2026-07-28): per-request `_meta`, HTTP request headers, result types.

Protocol knowledge only; the session applies it. There is no handshake: every request
says which version it speaks and what the client can do.
"""

from __future__ import annotations

import base64
from typing import Any

from .tool_headers import param_headers
from .versions import MODERN_VERSIONS

META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
MODERN_ERRORS = (HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_VERSION)

COMPLETE = "complete"
INPUT_REQUIRED = "input_required"

NAMED_METHODS = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


def with_meta(
    params: dict[str, Any] | None, version: str, client_info: dict[str, Any], capabilities: dict[str, Any]
) -> dict[str, Any]:
    """`params` with the request metadata every modern request carries (the caller's own `_meta` kept)."""
    params = dict(params or {})
    meta = dict(params.get("_meta") or {})
    meta[META_VERSION] = version
    meta[META_CLIENT_INFO] = client_info
    # 2025-11-25's client `tasks` capability means nothing here (tasks became an extension).
    meta[META_CLIENT_CAPABILITIES] = {name: value for name, value in capabilities.items() if name != "tasks"}
    params["_meta"] = meta
    return params


def header_value(value: str | int | bool) -> str:
    """A value fit for an HTTP header, or the base64 sentinel form where it is not: one with a
    character outside visible ASCII and space (a control character, a tab, non-ASCII), with
    leading or trailing whitespace, or that looks like the sentinel itself."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = str(value)
    plain = text == text.strip() and all(0x20 <= ord(ch) < 0x7F for ch in text)
    if plain and not (text.startswith("=?base64?") and text.endswith("?=")):
        return text
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


def request_headers(
    method: str, params: dict[str, Any] | None, version: str, input_schema: dict[str, Any] | None = None
) -> dict[str, str]:
    """The Streamable HTTP headers of a modern request: version, method, name, mirrored parameters."""
    headers = {"MCP-Protocol-Version": version, "Mcp-Method": method}
    params = params or {}
    field = NAMED_METHODS.get(method)
    if field and isinstance(params.get(field), str):
        headers["Mcp-Name"] = header_value(params[field])
    if method == "tools/call" and input_schema:
        headers.update(param_headers(input_schema, params.get("arguments") or {}, header_value))
    return headers


def result_type(result: Any) -> str:
    """The result's type; absent means complete (servers of earlier versions send none)."""
    if not isinstance(result, dict):
        return "invalid"
    kind = result.get("resultType", COMPLETE)
    return kind if kind in (COMPLETE, INPUT_REQUIRED) else "invalid"


def supported_versions(error_data: Any) -> list[str]:
    """The versions an UnsupportedProtocolVersionError says the server supports."""
    supported = error_data.get("supported") if isinstance(error_data, dict) else None
    return [v for v in supported if isinstance(v, str)] if isinstance(supported, list) else []


def mutual_version(server_versions: list[str]) -> str | None:
    """The newest modern version both sides speak."""
    return next((v for v in MODERN_VERSIONS if v in server_versions), None)
