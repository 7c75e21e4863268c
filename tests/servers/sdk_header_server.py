"""Test peer: tools with `x-mcp-header` annotations, valid and not, served by the official
Python SDK's (mcp==2.3.0) low-level server over Streamable HTTP (2026-07-28, stateless).

The SDK itself checks every `tools/call`'s `Mcp-Param-*` headers against the body (and
answers HeaderMismatch, -32020, when they differ); its high-level server refuses to register
a tool with an invalid annotation, so the low-level one serves these definitions as written.
`mirror` answers with the `Mcp-Param-*` headers it received, as JSON. With `--canary URL`,
the tool `lookup` has input and output schemas whose `$ref`s point at URL (a client must never
fetch it, SEP-2106) and answers with structured content.

Usage::

    python sdk_header_server.py --port 8123 [--canary URL]    # binds 127.0.0.1
"""

from __future__ import annotations

import argparse
import json
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel import Server

HOST = "127.0.0.1"
TEXT = {"type": "string"}


def tool(name: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": properties}}


VALID = [
    tool(
        "mirror",
        {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "scope": {"type": "object", "properties": {"tenant": {"type": "string", "x-mcp-header": "Tenant"}}},
            "note": TEXT,
        },
    ),
]
INVALID = [
    tool("space_in_name", {"value": {"type": "string", "x-mcp-header": "My Region"}}),
    tool("empty_name", {"value": {"type": "string", "x-mcp-header": ""}}),
    tool("on_a_number", {"score": {"type": "number", "x-mcp-header": "Score"}}),
    tool("twice", {"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "region"}}),
    tool("in_items", {"tags": {"type": "array", "items": {"type": "string", "x-mcp-header": "Tag"}}}),
]


CANARY: list[dict[str, Any]] = []


def lookup(canary: str) -> dict[str, Any]:
    return {
        "name": "lookup",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"userId": {"type": "string", "pattern": "^[a-z0-9-]+$"}},
            "properties": {"id": {"$ref": "#/$defs/userId"}, "profile": {"$ref": canary}},
            "required": ["id"],
        },
        "outputSchema": {"type": "object", "properties": {"profile": {"$ref": canary}}, "required": ["profile"]},
    }


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in VALID + INVALID + CANARY])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name == "lookup":
        profile = {"displayName": "Ada"}
        return types.CallToolResult(content=[types.TextContent(type="text", text="Ada")], structured_content={"profile": profile})
    request = ctx.request
    headers = {k.lower(): v for k, v in request.headers.items() if k.lower().startswith("mcp-param-")} if request else {}
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(headers, sort_keys=True))])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--canary", help="a URL the schemas of the tool `lookup` $ref (never to be fetched)")
    args = parser.parse_args()
    if args.canary:
        CANARY.append(lookup(args.canary))
    server: Server[Any] = Server("sdk-header-server", version="1.0.0", on_list_tools=list_tools, on_call_tool=call_tool)
    app = server.streamable_http_app(stateless_http=True, json_response=True, host=HOST)
    uvicorn.run(app, host=HOST, port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
