"""The server features both eras serve alike: tools, resources, templates, prompts, completion.

`result()` answers those methods with a result body (era decoration, `resultType` and
`_meta`, is the era handler's; modern list and read results also get `ttlMs` and
`cacheScope` here). A client that declared MCP Apps also gets the counters view's tools and
its `ui://` resource (`_ui_app`). Subscriptions, logging levels and the handshake differ per era and
stay with `_legacy` and `_modern`.
"""

from __future__ import annotations

from typing import Any

from . import _prompts, _resources, _ui_app
from ._app import App, Call
from ._tools import call_tool, tool_list

METHODS = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "prompts/list",
        "prompts/get",
        "completion/complete",
    }
)
CACHEABLE = frozenset({"tools/list", "resources/list", "resources/templates/list", "resources/read", "prompts/list"})
COMPLETIONS_SINCE = "2025-03-26"  # the `completions` capability (the method itself is older)


def capabilities(version: str) -> dict[str, Any]:
    """The server's capabilities as `version` knows them."""
    caps: dict[str, Any] = {
        "tools": {"listChanged": False},
        "logging": {},
        "resources": {"subscribe": True, "listChanged": False},
        "prompts": {"listChanged": False},
    }
    if version >= COMPLETIONS_SINCE:
        caps["completions"] = {}
    return caps


async def result(app: App, call: Call) -> dict[str, Any]:
    """The result body of one of METHODS (RpcError for a bad request)."""
    method = call.method
    body: dict[str, Any]
    if method == "tools/call":
        return await call_tool(app, call)
    if method == "tools/list":
        body = {"tools": tool_list(call.version) + _ui_app.tools(_ui_app.wanted(call.client_capabilities))}
    elif method == "resources/list":
        body = {"resources": [dict(r) for r in _resources.RESOURCES]}
    elif method == "resources/templates/list":
        body = {"resourceTemplates": [dict(t) for t in _resources.TEMPLATES]}
    elif method == "resources/read":
        uri = call.params.get("uri")
        wants_view = uri == _ui_app.VIEW and _ui_app.wanted(call.client_capabilities)
        body = _ui_app.read(call) if wants_view else _resources.read(app, uri)
    elif method == "prompts/list":
        body = {"prompts": [dict(p) for p in _prompts.PROMPTS]}
    elif method == "prompts/get":
        body = _prompts.get(call)
    else:
        body = _prompts.complete(call)
    if call.modern and method in CACHEABLE:
        body.update(ttlMs=0, cacheScope="public" if method != "resources/read" else "private")
    return body
