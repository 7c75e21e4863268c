"""Test peer: an MCP server built with FastMCP 4.1.6, pinging its client.

We did not write its protocol handling: FastMCP (on top of mcp 2.x) does.
``PingMiddleware`` starts a keep-alive loop on the first message that reaches
FastMCP's middleware. In 4.1.6 that is ``initialize`` itself, so the first ping
(``{"jsonrpc":"2.0","id":1,"method":"ping"}``, integer ids counting up from 1,
no ``params``) comes one interval after the initialize response, even before
``notifications/initialized``. The loop awaits each pong before sleeping again,
so an unanswered ping stalls it (no timeout).

Tools: ``echo(text)`` -> ``text``; ``add(a, b)`` -> ``a + b``; ``beep()`` -> audio content (WAV);
``add_entities(entities, tags)`` -> what arrived, as JSON. FastMCP's input schemas say
``additionalProperties: false``.

Usage::

    python fastmcp_server.py [--ping-interval-ms 100]          # stdio (default)
    python fastmcp_server.py --transport http --port 8123       # streamable HTTP on 127.0.0.1
"""

from __future__ import annotations

import argparse
import io
import json
import os
import wave

# Keep stderr quiet and never phone home; must be set before fastmcp is imported.
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import FastMCP
from fastmcp.server.middleware import PingMiddleware
from fastmcp.utilities.types import Audio
from pydantic import BaseModel

HOST = "127.0.0.1"


class Entity(BaseModel):
    name: str
    observations: list[str] = []


def build(ping_interval_ms: int) -> FastMCP:
    mcp = FastMCP("fastmcp-test-server")
    mcp.add_middleware(PingMiddleware(interval_ms=ping_interval_ms))

    @mcp.tool
    def echo(text: str) -> str:
        """Return the text unchanged."""
        return text

    @mcp.tool
    def add(a: int | float, b: int | float) -> int | float:
        """Return a + b."""
        return a + b

    @mcp.tool
    def add_entities(entities: list[Entity], tags: dict[str, str] | None = None) -> str:
        """Take entities as the memory server's create_entities does; returns what arrived, as JSON."""
        return json.dumps({"entities": [e.model_dump() for e in entities], "tags": tags})

    @mcp.tool
    def beep() -> Audio:
        """A tenth of a second of silence as a WAV file (audio content)."""
        return Audio(data=_silence_wav(), format="wav")

    return mcp


def _silence_wav() -> bytes:
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as wav:
        wav.setnchannels(1)
        wav.setsampwidth(2)
        wav.setframerate(8000)
        wav.writeframes(b"\0\0" * 800)
    return buffer.getvalue()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ping-interval-ms", type=int, default=100)
    parser.add_argument("--transport", choices=["stdio", "http", "sse"], default="stdio")
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (on 127.0.0.1)")
    parser.add_argument("--json-response", action="store_true", help="http: answer POSTs with plain JSON")
    args = parser.parse_args(argv)

    mcp = build(args.ping_interval_ms)
    if args.transport == "stdio":
        mcp.run("stdio", show_banner=False)
    else:
        kwargs = {"json_response": True} if (args.json_response and args.transport == "http") else {}
        mcp.run(args.transport, show_banner=False, host=HOST, port=args.port, **kwargs)


if __name__ == "__main__":
    main()
