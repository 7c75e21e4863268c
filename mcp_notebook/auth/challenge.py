"""What a 401 or 403 says (the `Bearer` or `DPoP` challenge of `WWW-Authenticate`, RFC 6750,
RFC 9449 and RFC 9728), and which resource a token is for (RFC 8707 canonical URIs).

Pure functions over strings; no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

_TOKEN = r"[A-Za-z0-9!#$%&'*+.^_`|~-]+"
_ITEM = re.compile(rf'\s*(?:({_TOKEN})\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)|({_TOKEN}=*))\s*,?')


OAUTH_SCHEMES = ("bearer", "dpop")


@dataclass(frozen=True)
class Challenge:
    """The parameters of a `Bearer` or `DPoP` challenge; empty when the server sent neither."""

    params: dict[str, str]
    scheme: str = "Bearer"

    @property
    def error(self) -> str | None:
        return self.params.get("error")

    @property
    def scopes(self) -> tuple[str, ...]:
        return tuple(self.params.get("scope", "").split())

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None


def bearer_challenge(headers: Iterable[str]) -> Challenge:
    """The first `Bearer` or `DPoP` challenge among the `WWW-Authenticate` header values
    (several schemes may share one header, each followed by its comma-separated auth-params)."""
    for header in headers:
        scheme: str | None = None
        params: dict[str, str] = {}
        for match in _ITEM.finditer(header):
            name, value, bare = match.groups()
            if bare is not None:
                if scheme is not None and scheme.lower() in OAUTH_SCHEMES:
                    return Challenge(params, scheme)
                if "=" in bare:
                    continue  # a token68, which neither scheme uses
                scheme, params = bare, {}
            elif name is not None and scheme is not None:
                if value.startswith('"'):
                    value = re.sub(r"\\(.)", r"\1", value[1:-1])
                params[name.lower()] = value
        if scheme is not None and scheme.lower() in OAUTH_SCHEMES:
            return Challenge(params, scheme)
    return Challenge({})


def canonical_resource(url: str) -> str:
    """The canonical URI of an MCP server (RFC 8707): lowercase scheme and host, no fragment,
    no trailing slash on an empty path."""
    parts = urlsplit(url.strip())
    netloc = parts.netloc.lower() if "@" not in parts.netloc else parts.netloc.rpartition("@")[2].lower()
    path = "" if parts.path == "/" else parts.path
    return urlunsplit((parts.scheme.lower(), netloc, path, parts.query, ""))


def origin_of(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and effective port of `url`."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    return scheme, (parts.hostname or "").lower(), parts.port or {"http": 80, "https": 443}.get(scheme)


def covers(resource: str, server_url: str) -> bool:
    """Whether protected resource metadata naming `resource` may speak for `server_url`: the
    same origin, and the server's path at or below the resource's path."""
    if origin_of(resource) != origin_of(server_url):
        return False
    base = urlsplit(resource).path.rstrip("/")
    path = urlsplit(server_url).path
    return path == base or path.startswith(base + "/") or not base
