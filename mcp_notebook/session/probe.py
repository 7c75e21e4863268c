"""What the era probe's answer says of a server: modern, not modern (and why), or nothing.

The rule: only a `DiscoverResult` at a version we speak, or a modern error (-32022 and its
kin), says "modern". Anything else a server answers to `server/discover` says "not modern",
and the legacy handshake follows on a clean slate: any HTTP 4xx or 5xx (a FastMCP 1.x
server's 400 naming a session it has already ended, a proxy's 500), an HTML page, a 202, a
JSON-RPC error such as -32601 or -32602, or a list of supported versions that holds only
handshake-era ones. What says nothing of the era is raised as it is: authentication wanted
(401, 403, 407), a network that gave no answer, a server that is gone.

A version the server refuses is retried once at one we speak; when none of its versions is
one we speak, the error says which we offered and which it takes (`NoCommonVersion`).

A probe that is merely late says nothing either: what it answers later still decides
(`speaks_modern`, `refusal`), even after the handshake was offered beside it.
"""

from __future__ import annotations

from typing import Any

from ..base.errors import HandshakeError, McpError, TransportError
from ..protocol import modern
from ..protocol.versions import LEGACY_VERSIONS, MODERN_VERSIONS
from .requests import Request

NOT_VERDICTS = (401, 403, 407)  # authentication wanted: says nothing about the era


class NoCommonVersion(HandshakeError):
    """The server refused our modern version, and takes no modern version we speak."""

    def __init__(self, offered: str, theirs: list[str], *, pinned: bool) -> None:
        self.offered, self.theirs = offered, theirs
        takes = ", ".join(theirs) if theirs else "no version it names"
        speaks = f"it speaks {', '.join(MODERN_VERSIONS)} (modern) and {', '.join(LEGACY_VERSIONS)} (with the handshake)"
        hint = "; connect with era='legacy'" if pinned and self.handshake_versions else ""
        super().__init__(f"the server takes protocol version {takes}; this client offered {offered}, and {speaks}{hint}")

    @property
    def handshake_versions(self) -> list[str]:
        """The versions the server takes that the legacy handshake speaks."""
        return [version for version in self.theirs if version in LEGACY_VERSIONS]


def not_modern(exc: BaseException) -> str | None:
    """Why a failed probe says the server is not modern, or None when the failure says nothing
    of the era (raise it). `RequestTimeout` is the caller's: a silent probe is its own case."""
    if isinstance(exc, NoCommonVersion):
        if exc.handshake_versions:
            return f"server/discover: the server takes {', '.join(exc.theirs)}, handshake-era versions"
        return None
    if isinstance(exc, McpError):
        if exc.code in modern.MODERN_ERRORS:
            return None  # a modern server, refusing us for a reason of its own
        return f"server/discover refused: {exc.message} ({exc.code})"
    if isinstance(exc, TransportError):
        if exc.status is None or exc.status in NOT_VERDICTS:
            return None
        return f"server/discover answered HTTP {exc.status}" + ("" if exc.status >= 300 else ", and no JSON-RPC answer")
    return None


def speaks_modern(response: dict[str, Any] | None) -> bool:
    """Whether the probe's JSON-RPC answer is one only a modern server gives: a result (a
    DiscoverResult, its versions still to be read), or a modern error."""
    if response is None:
        return False
    if "result" in response:
        return True
    error = response.get("error")
    return isinstance(error, dict) and error.get("code") in modern.MODERN_ERRORS


def refusal(probe: Request) -> str | None:
    """Why a settled probe says "not modern" (`not_modern`'s rules), or None if it does not."""
    try:
        probe.outcome()
    except Exception as exc:  # noqa: BLE001 - every failure is read, none raised
        return not_modern(exc)
    return None
