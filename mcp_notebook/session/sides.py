"""What each side of a session said of itself: the client at the handshake (or in every
modern request's `_meta`), the server in `initialize`'s result (or `server/discover`).

Plain records the session fills in on its thread; everything else only reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ClientSide:
    """Who we are, what we can do, and the handshake-era version we ask for."""

    info: dict[str, Any]
    capabilities: dict[str, Any]
    requested_version: str


@dataclass
class ServerSide:
    """Who the server is, what it offers, and what it asks its clients to know."""

    info: dict[str, Any] | None = None
    capabilities: dict[str, Any] = field(default_factory=dict)
    instructions: str | None = None
