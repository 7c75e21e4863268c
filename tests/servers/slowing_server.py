"""Test peer: a FastMCP server that slows down, or dies, after a number of calls.

Tool: ``work(n)`` -> ``n``. After ``--slow-after N`` calls of ``work`` (counted by this
process) each further call sleeps ``--delay`` seconds before it answers: a server that slows
down under load. With ``--exit-after N`` the process exits (code 3, no answer) on the call
after its N-th: a server killed mid-load. The sleep is the server's behaviour under test, not
a synchronisation.

Usage::

    python slowing_server.py --slow-after 20 --delay 0.5          # stdio (default)
    python slowing_server.py --transport http --port 8123 ...      # streamable HTTP on 127.0.0.1
"""

from __future__ import annotations

import argparse
import asyncio
import os

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import FastMCP

HOST = "127.0.0.1"


def build(slow_after: int | None, delay: float, exit_after: int | None) -> FastMCP:
    server = FastMCP("slowing")
    made = 0

    @server.tool
    async def work(n: int = 0) -> int:
        """Return n; slower (or gone) after enough calls."""
        nonlocal made
        made += 1
        if exit_after is not None and made > exit_after:
            os._exit(3)
        if slow_after is not None and made > slow_after:
            await asyncio.sleep(delay)
        return n

    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--slow-after", type=int)
    parser.add_argument("--delay", type=float, default=0.5)
    parser.add_argument("--exit-after", type=int)
    args = parser.parse_args()
    server = build(args.slow_after, args.delay, args.exit_after)
    if args.transport == "http":
        server.run(transport="http", host=HOST, port=args.port, show_banner=False)
    else:
        server.run(show_banner=False)


if __name__ == "__main__":
    main()
