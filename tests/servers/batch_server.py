"""Test peer for `conn.map`: a FastMCP 4.1.6 server whose tools show what a batch did to it.

We did not write its protocol handling: FastMCP (on top of mcp 2.x) does, and runs each
request in a task of its own, so calls overlap as they arrive.

Tools:
* ``meet(group, size)``: waits until `size` calls naming `group` are in flight at once, then all
  of them answer with the most the server saw in flight together. A batch whose calls do not
  overlap never fills a group: its calls wait until their timeout.
* ``grade(n)``: ``n * 2`` for n % 3 == 0; a tool error (``isError``) for n % 3 == 1; a JSON-RPC
  error (code -32000) for n % 3 == 2.
* ``fail(text)``: a tool error whose message is `text`, as given (control sequences, markup).

Usage: python batch_server.py   (stdio)
"""

from __future__ import annotations

import os

# Keep stderr quiet and never phone home; must be set before fastmcp is imported.
os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

import anyio
from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import Middleware
from mcp.shared.exceptions import MCPError


class Refusing(Middleware):
    """`grade` with n % 3 == 2 is refused before the tool runs: a JSON-RPC error, not a result."""

    async def on_call_tool(self, context, call_next):  # type: ignore[no-untyped-def]
        n = (context.message.arguments or {}).get("n")
        if context.message.name == "grade" and isinstance(n, int) and n % 3 == 2:
            raise MCPError(-32000, f"refused: {n}")
        return await call_next(context)


mcp = FastMCP("batch-test-server")
mcp.add_middleware(Refusing())
groups: dict[str, tuple[list[int], anyio.Event]] = {}
in_flight = [0, 0]  # now, most


@mcp.tool
async def meet(group: str, size: int) -> int:
    """Wait until `size` calls of `group` are in flight together; the most seen in flight."""
    arrived, full = groups.setdefault(group, ([], anyio.Event()))
    arrived.append(1)
    in_flight[0] += 1
    in_flight[1] = max(in_flight[1], in_flight[0])
    if len(arrived) >= size:
        full.set()
    try:
        await full.wait()
    finally:
        in_flight[0] -= 1
    return in_flight[1]


@mcp.tool
def grade(n: int) -> int:
    """n * 2, a tool error or a JSON-RPC error, by n % 3."""
    if n % 3 == 1:
        raise ToolError(f"odd one out: {n}")
    return n * 2


@mcp.tool
def fail(text: str) -> str:
    """A tool error saying `text`."""
    raise ToolError(text)


if __name__ == "__main__":
    mcp.run("stdio", show_banner=False)
