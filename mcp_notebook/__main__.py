"""`python -m mcp_notebook`: a small command-line MCP client over the same API as the magics.

It connects, prints what the server is, lists its tools, and calls the tools you name.
Under the official conformance suite (which sets MCP_CONFORMANCE_SCENARIO and passes the
server URL last) it calls every tool the scenario's server offers.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from .api.connect import connect
from .base.errors import McpNotebookError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_notebook",
        description="Connect to an MCP server, list its tools and call some of them.",
    )
    parser.add_argument("target", nargs="+", help="a server URL, or a server command (put -- before it)")
    parser.add_argument("--call", action="append", default=[], metavar="TOOL", help="call this tool (repeatable)")
    parser.add_argument("--arguments", default="{}", metavar="JSON", help="arguments for the tools called")
    parser.add_argument("--all-tools", action="store_true", help="call every tool, with arguments made from its schema")
    parser.add_argument("--header", action="append", default=[], metavar="'K: V'", help="an HTTP header (repeatable)")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per request (default 30)")
    parser.add_argument("--trace", action="store_true", help="print every frame and transport event at the end")
    return parser


def example_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments a tool's input schema accepts: defaults where given, else a plain value of each type."""
    plain = {"string": "example", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}
    arguments: dict[str, Any] = {}
    for name, prop in (schema.get("properties") or {}).items():
        if "default" in prop:
            arguments[name] = prop["default"]
        elif prop.get("enum"):
            arguments[name] = prop["enum"][0]
        else:
            kind = prop.get("type")
            arguments[name] = plain.get(kind[0] if isinstance(kind, list) else kind, "example")
    return arguments


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    target: Any = args.target[0] if len(args.target) == 1 and "://" in args.target[0] else args.target
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO")
    headers = dict(h.split(":", 1) for h in args.header)
    try:
        call_arguments = json.loads(args.arguments)
    except ValueError as exc:
        print(f"error: --arguments is not JSON: {exc}", file=sys.stderr)
        return 2
    try:
        with connect(
            target,
            name="cli",
            timeout=args.timeout,
            headers={k.strip(): v.strip() for k, v in headers.items()} or None,
            elicitation="defaults",
        ) as conn:  # elicitation: accept with the schema's defaults (SEP-1034)
            info = conn.server_info or {}
            print(
                f"connected: {info.get('name', '?')} {info.get('version', '')} over {conn.health.transport}, "
                f"protocol {conn.protocol_version}"
            )
            tools = conn.request("tools/list").get("tools", []) if "tools" in conn.server_capabilities else []
            print("tools:", ", ".join(tool["name"] for tool in tools) or "none")
            calls = [(name, call_arguments) for name in args.call]
            if args.all_tools or (scenario and not args.call):
                calls += [(tool["name"], example_arguments(tool.get("inputSchema") or {})) for tool in tools]
            for name, arguments in calls:
                result = conn.request("tools/call", {"name": name, "arguments": arguments})
                print(f"{name}: {json.dumps(result)}")
            if args.trace:
                for entry in conn.trace.entries():
                    print(json.dumps(entry.to_record(), default=str))
    except McpNotebookError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
