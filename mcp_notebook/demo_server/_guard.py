"""The resource side of the OAuth-protected mode: `/mcp` wants a bearer token from `_authserver`.

Protected resource metadata (RFC 9728) at `/.well-known/oauth-protected-resource/mcp` (and
at the root well-known path). A request without a token, or with one that is unknown,
expired by time or used up by `token_calls`, gets 401 with a `Bearer` challenge naming
`resource_metadata` and the scope; a call of the `step_up_tool` with a token that lacks
`demo:admin` gets 403 `insufficient_scope` with the scopes it needs.
"""

from __future__ import annotations

import time
from typing import Any

from ..protocol import jsonrpc as rpc
from ._app import log
from ._authserver import AuthServer
from ._h11 import Exchange, Request
from ._oauth_settings import BASE_SCOPE, STEP_UP_SCOPE

PRM_PATH = "/.well-known/oauth-protected-resource"


class Guard:
    """Checks each request to the MCP endpoint against the tokens `server` issued."""

    def __init__(self, server: AuthServer, resource_path: str) -> None:
        self.server = server
        self.resource_path = resource_path

    def metadata_paths(self) -> tuple[str, ...]:
        return (PRM_PATH + self.resource_path, PRM_PATH)

    def metadata(self) -> dict[str, Any]:
        return {
            "resource": self.server.resource,
            "authorization_servers": [self.server.issuer],
            "scopes_supported": [BASE_SCOPE],
            "bearer_methods_supported": ["header"],
            "resource_name": "mcp-notebook demo server",
        }

    async def admit(self, request: Request, exchange: Exchange) -> bool:
        """Whether the request may go on; if not, it has been answered with 401 or 403."""
        header = request.header("authorization") or ""
        token = header[7:].strip() if header[:7].lower() == "bearer " else ""
        if not token:
            await self._refuse(exchange, 401, None, "an access token is required")
            return False
        grant = self.server.access.get(token)
        if grant is None:
            await self._refuse(exchange, 401, "invalid_token", "unknown access token")
            return False
        if time.time() >= grant.expires_at:
            await self._refuse(exchange, 401, "invalid_token", "the access token has expired")
            return False
        tool = _tool_called(request)
        if tool is None:
            return True
        limit = self.server.settings.token_calls
        if limit is not None and grant.calls >= limit:
            await self._refuse(exchange, 401, "invalid_token", f"the access token was good for {limit} tool calls")
            return False
        if tool == self.server.settings.step_up_tool and STEP_UP_SCOPE not in grant.scopes:
            scopes = " ".join(dict.fromkeys((*grant.scopes, BASE_SCOPE, STEP_UP_SCOPE)))
            await self._refuse(exchange, 403, "insufficient_scope", f"{tool} needs {STEP_UP_SCOPE}", scopes)
            return False
        grant.calls += 1
        return True

    async def _refuse(self, exchange: Exchange, status: int, error: str | None, why: str, scope: str = BASE_SCOPE) -> None:
        metadata_url = self.server.issuer + PRM_PATH + self.resource_path
        params = [f'resource_metadata="{metadata_url}"', f'scope="{scope}"']
        if error is not None:
            params.append(f'error="{error}", error_description="{why}"')
        log(f"oauth: HTTP {status}: {why}")
        problem = rpc.error(None, rpc.INVALID_REQUEST, f"{'Unauthorized' if status == 401 else 'Forbidden'}: {why}")
        await exchange.reply(status, problem, [("www-authenticate", "Bearer " + ", ".join(params))])


def _tool_called(request: Request) -> str | None:
    """The tool a POST calls (`tools/call`), else None."""
    if request.method != "POST":
        return None
    frame = rpc.decode(request.body.decode("utf-8", "replace"))
    if frame.kind != rpc.REQUEST or frame.method != "tools/call":
        return None
    params = frame.message.get("params")
    name = params.get("name") if isinstance(params, dict) else None
    return name if isinstance(name, str) else ""
