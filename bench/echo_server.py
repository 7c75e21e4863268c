"""A minimal MCP server over stdio, stdlib only: the same peer for every client in `bench/throughput.py`.

It answers `initialize` (any protocol version the client asks for), `ping`, `tools/list`
with one `echo` tool and `tools/call echo`, and ignores notifications. It reads whatever
the pipe holds and writes all the answers to it in one write, so a client keeping many
requests in flight is not held back by a write per answer; it does no other work, so what
a benchmark measures is the client.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

ECHO = {
    "name": "echo",
    "description": "Echoes the message back",
    "inputSchema": {
        "type": "object",
        "properties": {"message": {"type": "string", "description": "what to echo"}},
        "required": ["message"],
    },
}


def answer(message: dict[str, Any]) -> dict[str, Any] | None:
    if "id" not in message or "method" not in message:
        return None  # a notification, or an answer to a request we never send
    method, params = message["method"], message.get("params") or {}
    result: dict[str, Any]
    if method == "initialize":
        result = {
            "protocolVersion": params.get("protocolVersion", "2025-11-25"),
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "bench-echo", "version": "0"},
        }
    elif method == "ping":
        result = {}
    elif method == "tools/list":
        result = {"tools": [ECHO]}
    elif method == "tools/call" and params.get("name") == "echo":
        text = str((params.get("arguments") or {}).get("message", ""))
        result = {"content": [{"type": "text", "text": f"Echo: {text}"}]}
    else:
        return {"jsonrpc": "2.0", "id": message["id"], "error": {"code": -32601, "message": f"no method {method}"}}
    return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def main() -> None:
    dumps = json.JSONEncoder(separators=(",", ":")).encode
    buffered = b""
    while chunk := os.read(0, 1 << 16):
        *lines, buffered = (buffered + chunk).split(b"\n")
        out = [dumps(reply) for line in lines if line.strip() and (reply := answer(json.loads(line))) is not None]
        if out:
            sys.stdout.buffer.write(("\n".join(out) + "\n").encode())
            sys.stdout.buffer.flush()
    sys.exit(0)


if __name__ == "__main__":
    main()
