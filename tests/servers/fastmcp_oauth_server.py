"""Test peer: a FastMCP 4.1.6 server protected by OAuth, with FastMCP's own in-memory
authorization server (`InMemoryOAuthProvider`) on the same port.

We wrote neither the resource server's token checks (FastMCP and the mcp SDK's bearer
middleware), nor discovery, registration, the authorization and token endpoints (the SDK's
auth routes, FastMCP's provider). The provider authorizes at once: its /authorize answers
with a redirect to the client's redirect URI, carrying the code.

Every request needs the ``notes:read`` scope, and with ``--require-write`` ``notes:write``
too: the SDK's bearer middleware answers a token without them with 403 ``insufficient_scope``.
Tools: ``whoami()`` -> the scopes of the caller's token; the test switches
``expire_tokens()`` (every access token unknown, as expiry would make it) and
``forget_refresh_tokens()`` (every refresh token unknown).

Usage::

    python fastmcp_oauth_server.py --port 8123      # streamable HTTP at http://127.0.0.1:8123/mcp
"""

from __future__ import annotations

import argparse
import os

os.environ.setdefault("FASTMCP_SHOW_SERVER_BANNER", "false")
os.environ.setdefault("FASTMCP_CHECK_FOR_UPDATES", "off")
os.environ.setdefault("FASTMCP_LOG_LEVEL", "WARNING")

from fastmcp import FastMCP
from fastmcp.server.auth.auth import ClientRegistrationOptions
from fastmcp.server.auth.providers.in_memory import InMemoryOAuthProvider
from fastmcp.server.dependencies import get_access_token

HOST = "127.0.0.1"


def build(port: int, require_write: bool) -> FastMCP:
    provider = InMemoryOAuthProvider(
        base_url=f"http://{HOST}:{port}",
        required_scopes=["notes:read", "notes:write"] if require_write else ["notes:read"],
        client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["notes:read", "notes:write"]),
    )
    mcp = FastMCP("fastmcp-oauth-server", auth=provider)

    @mcp.tool
    def whoami() -> str:
        """The scopes of the caller's access token."""
        token = get_access_token()
        return " ".join(sorted(token.scopes)) if token else "anonymous"

    @mcp.tool
    def expire_tokens() -> str:
        """Drop every access token, as expiry would (the provider's own expiry check would revoke
        the refresh token with it); the refresh tokens stay good."""
        provider.access_tokens.clear()
        return "expired"

    @mcp.tool
    def forget_refresh_tokens() -> str:
        """Forget every refresh token, so a refresh fails and the client must authorize again."""
        provider.refresh_tokens.clear()
        return "forgotten"

    return mcp


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=8000, help="HTTP port (on 127.0.0.1)")
    parser.add_argument("--require-write", action="store_true", help="every request needs notes:write too")
    args = parser.parse_args(argv)
    build(args.port, args.require_write).run("http", show_banner=False, host=HOST, port=args.port)


if __name__ == "__main__":
    main()
