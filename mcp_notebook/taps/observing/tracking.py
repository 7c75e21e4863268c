"""What a tapped session has settled so far, read from its frames: the era and version, both
sides' info and capabilities, and the requests each side has in flight.

The version is the one the two sides negotiated: a legacy `initialize` answered with a
`protocolVersion`, or the modern era (2026-07-28) once a client request other than the
`server/discover` probe carries `_meta` `io.modelcontextprotocol/protocolVersion`, or a
`server/discover` is answered with a DiscoverResult; over HTTP, a client request's
MCP-Protocol-Version header (the record's `detail["protocol_version"]`) stands in until a
frame says. Request ids of the two directions are separate spaces, keyed by their type
and value (1 and "1" differ; 0 is an id like any other). What is in flight is bounded
(`FLIGHT_BOUND` a side); a request forgotten or cancelled is still remembered a while
(`GONE_BOUND`), so its late answer is not taken for an answer to nothing. Pure: no I/O.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple

from ...protocol import jsonrpc as rpc
from ...protocol import modern
from ...protocol.spec_schema import VERSIONS
from ...protocol.versions import LEGACY_ERA, MODERN_ERA, MODERN_VERSIONS
from .pings import CLIENT, SERVER, id_key

FLIGHT_BOUND = 10_000  # requests in flight kept a side; beyond it the oldest are forgotten (still matchable a while)
GONE_BOUND = 1000  # requests cancelled or forgotten whose late answers still match


class Asked(NamedTuple):
    """A request in flight: its method, params and trace seq."""

    method: str
    params: Any
    seq: int


class Flight:
    """The requests one side sent that the other has not answered."""

    def __init__(self) -> None:
        self.open: OrderedDict[tuple[str, Any], Asked] = OrderedDict()
        self.gone: OrderedDict[tuple[str, Any], Asked] = OrderedDict()

    def add(self, key: tuple[str, Any], asked: Asked) -> None:
        self.open[key] = asked
        if len(self.open) > FLIGHT_BOUND:
            self._forget(*self.open.popitem(last=False))

    def take(self, key: tuple[str, Any] | None) -> Asked | None:
        """The request a response with id `key` answers, no longer in flight; None: no such request."""
        if key is None:
            return None
        found = self.open.pop(key, None)
        return found if found is not None else self.gone.pop(key, None)

    def cancel(self, key: tuple[str, Any] | None) -> None:
        asked = self.open.pop(key, None) if key is not None else None
        if key is not None and asked is not None:
            self._forget(key, asked)

    def _forget(self, key: tuple[str, Any], asked: Asked) -> None:
        self.gone[key] = asked
        if len(self.gone) > GONE_BOUND:
            self.gone.popitem(last=False)


class Settled:
    """The era, version and both sides as the frames so far tell them."""

    def __init__(self) -> None:
        self.era: str | None = None
        self.version: str | None = None
        self.requested: str | None = None  # the version the client's initialize asked for
        self.client_info: dict[str, Any] | None = None
        self.server_info: dict[str, Any] | None = None
        self.client_capabilities: dict[str, Any] | None = None
        self.server_capabilities: dict[str, Any] | None = None
        self.flights = {CLIENT: Flight(), SERVER: Flight()}  # by the side that sent the requests

    @property
    def modern(self) -> bool:
        return self.era == MODERN_ERA

    def header_version(self, value: Any) -> None:
        """An HTTP request's MCP-Protocol-Version: the version, until a frame says."""
        if self.version is None and isinstance(value, str) and value in VERSIONS:
            self.version = value
            self.era = MODERN_ERA if value in MODERN_VERSIONS else LEGACY_ERA

    def request(self, sender: str, message: dict[str, Any], seq: int) -> None:
        method, params, key = message["method"], message.get("params"), id_key(message["id"])
        if key is not None:
            self.flights[sender].add(key, Asked(method, params, seq))
        if sender == CLIENT:
            self._client_request(method, message)

    def _client_request(self, method: str, message: dict[str, Any]) -> None:
        params = rpc.params_of(message)
        if method == "initialize":
            requested = params.get("protocolVersion")
            self.requested = requested if isinstance(requested, str) else None
            self.client_info = _dict(params.get("clientInfo")) or self.client_info
            self.client_capabilities = _dict(params.get("capabilities"))
            return
        meta = rpc.meta_of(message)
        version = meta.get(modern.META_VERSION)
        if not isinstance(version, str) or self.era == LEGACY_ERA:
            return
        self.client_info = _dict(meta.get(modern.META_CLIENT_INFO)) or self.client_info
        self.client_capabilities = _dict(meta.get(modern.META_CLIENT_CAPABILITIES)) or self.client_capabilities
        if method != "server/discover":  # the probe is no choice yet: an auto client may fall back
            self.era, self.version = MODERN_ERA, version

    def request_version(self, message: Any) -> str | None:
        """The version a client request or notification is judged by."""
        if not isinstance(message, dict):
            return self.version
        if message.get("method") == "initialize":
            requested = rpc.params_of(message).get("protocolVersion")
            return requested if requested in VERSIONS else self.version
        version = rpc.meta_of(message).get(modern.META_VERSION)
        if self.era != LEGACY_ERA and version in VERSIONS:
            return str(version)
        return self.version

    def notification(self, sender: str, message: dict[str, Any]) -> tuple[str, Any] | None:
        """Track a notification; the id of the sender's request it cancels, if it cancels one."""
        if message["method"] != "notifications/cancelled":
            return None
        key = id_key(rpc.params_of(message).get("requestId"))
        self.flights[sender].cancel(key)
        return key

    def response(self, answerer: str, asked: Asked | None, kind: str, message: dict[str, Any]) -> None:
        """A response (or error) from `answerer` to `asked`, the other side's request."""
        if asked is None or answerer != SERVER or kind != rpc.RESPONSE:
            return
        result = message.get("result")
        if not isinstance(result, dict):
            return
        if asked.method == "initialize" and isinstance(result.get("protocolVersion"), str):
            self.era, self.version = LEGACY_ERA, result["protocolVersion"]
            self.server_info = _dict(result.get("serverInfo"))
            self.server_capabilities = _dict(result.get("capabilities"))
        elif asked.method == "server/discover" and isinstance(result.get("supportedVersions"), list):
            meta = result.get("_meta")
            info = meta.get(modern.META_SERVER_INFO) if isinstance(meta, dict) else None
            self.server_info = _dict(info) or _dict(result.get("serverInfo")) or self.server_info
            self.server_capabilities = _dict(result.get("capabilities"))
            if self.era != MODERN_ERA:
                asked_version = rpc.meta_of({"params": asked.params}).get(modern.META_VERSION)
                offered = [v for v in result["supportedVersions"] if v in MODERN_VERSIONS]
                version = asked_version if asked_version in offered else (offered[0] if offered else None)
                if version is not None:
                    self.era, self.version = MODERN_ERA, version


def _dict(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None
