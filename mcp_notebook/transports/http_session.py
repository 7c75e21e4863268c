"""The `Mcp-Session-Id` a Streamable HTTP server hands out: which response may set it, and what
it may hold.

The rule (2025-11-25, transports, session management): a server assigns a session "at
initialization time, by including it in an Mcp-Session-Id header on the HTTP response
containing the InitializeResult". So only a successful answer to the POST that opens the
session sets it; any other (an era probe's 400 naming a session the server already ended,
a GET stream's answer) names no session of ours. The id "MUST only contain visible ASCII
characters (ranging from 0x21 to 0x7E)": one that does not could never be sent back, and is
refused at connect with a `TransportError`. The id is a credential: it is never shown.
"""

from __future__ import annotations

import httpx2

from ..base.errors import TransportError

HEADER = b"mcp-session-id"


def session_id_set(response: httpx2.Response, opens: bool, where: str) -> str | None:
    """The session id `response` assigns: only an answer to the opening POST assigns one; None
    when it assigns none. TransportError if the id holds a byte outside 0x21-0x7E."""
    if not opens or not response.is_success:
        return None
    raw = next((value for key, value in response.headers.raw if key.lower() == HEADER), None)
    if not raw:
        return None
    if any(byte < 0x21 or byte > 0x7E for byte in raw):
        raise TransportError(
            f"{where} answered initialize with an Mcp-Session-Id holding bytes outside visible ASCII "
            "(0x21-0x7E), which the MCP transport forbids: not connecting",
            status=response.status_code,
        )
    return raw.decode("ascii")
