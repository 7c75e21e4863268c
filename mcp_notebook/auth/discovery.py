"""Finding the authorization server of an MCP server, in the order the spec sets.

Protected resource metadata (RFC 9728) from the challenge's `resource_metadata`, else at
the path-based then the root well-known URI; its `resource` must cover the server. Then the
authorization server's metadata: RFC 8414 and OpenID discovery, with the path-insertion
variants for an issuer with a path; its `issuer` must be the one asked for. A server with
no resource metadata is a 2025-03-26 server: metadata at its origin, else the default
endpoints there.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from ..base.errors import AuthorizationError
from .challenge import Challenge, canonical_resource, covers
from .exchange import AuthExchange

RESOURCE_STEP = "resource metadata"
SERVER_STEP = "server metadata"


@dataclass(frozen=True)
class Discovered:
    """Where to authorize for one MCP server, and what its authorization server supports."""

    resource: str  # the canonical URI sent as `resource` (RFC 8707)
    issuer: str
    metadata: dict[str, Any]
    scopes_supported: tuple[str, ...] | None  # from the resource metadata
    legacy: bool  # a 2025-03-26 server: no resource metadata
    defaults: bool = False  # no metadata at all: the 2025-03-26 default endpoints

    def supports(self, field: str, value: str, default: tuple[str, ...] = ()) -> bool:
        listed = self.metadata.get(field)
        return value in (listed if isinstance(listed, list) else default)


async def discover(http: AuthExchange, server_url: str, challenge: Challenge) -> Discovered:
    prm = await _resource_metadata(http, server_url, challenge)
    if prm is None:
        return await _legacy(http, server_url)
    resource = prm.get("resource")
    if not isinstance(resource, str) or not covers(resource, server_url):
        raise AuthorizationError(
            f"the server's protected resource metadata names the resource {str(resource)[:200]!r}, which is not "
            f"{canonical_resource(server_url)}: not authorizing, a token for it could be replayed elsewhere"
        )
    servers = [s for s in prm.get("authorization_servers") or [] if isinstance(s, str) and s.startswith(("http://", "https://"))]
    if not servers:
        raise AuthorizationError("the server's protected resource metadata lists no authorization server")
    scopes = prm.get("scopes_supported")
    scopes_supported = tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else None
    failures = []
    for issuer in servers:
        metadata = await _server_metadata(http, issuer, strict=True)
        if metadata is not None:
            http.step("discovery", f"authorization server {issuer}", issuer=issuer, resource=canonical_resource(resource))
            return Discovered(canonical_resource(resource), issuer, metadata, scopes_supported, legacy=False)
        failures.append(issuer)
    raise AuthorizationError(
        f"no valid authorization server metadata at {', '.join(failures)} (RFC 8414 or OpenID discovery, "
        "with an issuer identical to the one listed)"
    )


async def _resource_metadata(http: AuthExchange, server_url: str, challenge: Challenge) -> dict[str, Any] | None:
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    candidates = [challenge.resource_metadata] if challenge.resource_metadata else []
    path = parts.path.rstrip("/")
    if path:
        candidates.append(f"{origin}/.well-known/oauth-protected-resource{path}")
    candidates.append(f"{origin}/.well-known/oauth-protected-resource")
    for url in candidates:
        if url is None or not url.startswith(("http://", "https://")):
            continue
        data = await http.get_json(RESOURCE_STEP, url)
        if data is not None:
            return data
    return None


def metadata_urls(issuer: str) -> list[str]:
    """Where an issuer's metadata may be, in the order to try (RFC 8414 section 3.1, OpenID)."""
    parts = urlsplit(issuer)
    origin = f"{parts.scheme}://{parts.netloc}"
    path = parts.path.rstrip("/")
    if path:
        return [
            f"{origin}/.well-known/oauth-authorization-server{path}",
            f"{origin}/.well-known/openid-configuration{path}",
            f"{origin}{path}/.well-known/openid-configuration",
        ]
    return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]


async def _server_metadata(http: AuthExchange, issuer: str, *, strict: bool) -> dict[str, Any] | None:
    for url in metadata_urls(issuer):
        data = await http.get_json(SERVER_STEP, url)
        if data is None:
            continue
        if strict and data.get("issuer") != issuer:
            http.step("discovery", f"ignored metadata at {url}: its issuer is not {issuer}", issuer=str(data.get("issuer"))[:200])
            continue
        if isinstance(data.get("authorization_endpoint") or data.get("token_endpoint"), str):
            return data
    return None


async def _legacy(http: AuthExchange, server_url: str) -> Discovered:
    """A server without resource metadata (2025-03-26): its origin is the authorization server."""
    parts = urlsplit(server_url)
    origin = f"{parts.scheme}://{parts.netloc}"
    resource = canonical_resource(server_url)
    metadata = await _server_metadata(http, origin, strict=False)
    if metadata is not None:
        http.step("discovery", f"no resource metadata: authorization server metadata at {origin} (2025-03-26)", issuer=origin)
        return Discovered(resource, str(metadata.get("issuer") or origin), metadata, None, legacy=True)
    http.step("discovery", f"no metadata: the default endpoints at {origin} (2025-03-26)", issuer=origin)
    defaults = {
        "issuer": origin,
        "authorization_endpoint": f"{origin}/authorize",
        "token_endpoint": f"{origin}/token",
        "registration_endpoint": f"{origin}/register",
        "code_challenge_methods_supported": ["S256"],
    }
    return Discovered(resource, origin, defaults, None, legacy=True, defaults=True)
