"""Test peer: `mcp-server-calculator` (PyPI), a FastMCP 1.x server, over stateful Streamable HTTP.

The package itself runs only on stdio (`mcp.run()`); this runs its own `FastMCP` object with
the SDK 1.x's streamable-http transport, as FastMCP 1.x servers in the field are deployed:
stateful (an `Mcp-Session-Id` from `initialize`), SSE replies. Run with `.venv-sdk1`'s python
(mcp 1.x), never the main venv's.

Usage: python sdk1_calculator_http.py PORT   (binds 127.0.0.1 only; the endpoint is /mcp)
"""

from __future__ import annotations

import sys

from mcp_server_calculator.calculator import mcp

mcp.settings.host = "127.0.0.1"
mcp.settings.port = int(sys.argv[1])
mcp.settings.log_level = "WARNING"
mcp.run(transport="streamable-http")
