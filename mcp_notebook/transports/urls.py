"""URL redaction and credential-looking names, without the HTTP client.

Callers that only check or show a URL (the connect path, error messages) import this
instead of the HTTP transport, so `import mcp_notebook` does not import httpx2; nothing
here may echo a credential.
"""

from __future__ import annotations

import functools
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

REDACTED = "[redacted]"
SECRET_WORDS = ("token", "key", "secret", "password", "passwd", "auth", "sig", "credential", "session", "cookie")


def is_secret_name(name: str) -> bool:
    """Whether a header, query parameter or variable name suggests its value is a credential."""
    lowered = name.lower()
    return any(word in lowered for word in SECRET_WORDS)


@functools.lru_cache(maxsize=64)  # the trace redacts the same few URLs on every exchange
def redact_url(url: str) -> str:
    """The URL with any password and any credential-looking query values replaced."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, host = netloc.rpartition("@")
        user = userinfo.partition(":")[0]
        netloc = f"{user}:{REDACTED}@{host}" if ":" in userinfo else f"{REDACTED}@{host}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        query = urlencode([(k, REDACTED if is_secret_name(k) else v) for k, v in pairs], safe="[]")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
