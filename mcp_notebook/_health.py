"""Connection health: the live counters a session keeps and the snapshots it hands out."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

CONNECTING = "connecting"
READY = "ready"
CLOSING = "closing"
CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class Health:
    """An immutable snapshot of one connection's health."""

    name: str
    state: str
    era: str
    protocol_version: str | None
    transport: str
    endpoint: str
    server_info: dict[str, Any] | None
    server_pings: int
    pongs_sent: int
    pong_failures: int
    pings_sent: int
    ping_failures: int
    last_rtt: float | None
    requests_in_flight: int
    invalid_frames: int
    last_frame_in: float | None
    last_frame_out: float | None
    exit_code: int | None
    stderr_tail: tuple[str, ...]
    closed_reason: str | None
    taken_at: float = field(default_factory=time.time)

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


@dataclass(slots=True)
class HealthCounters:
    """What a session counts as frames go by; only the session thread writes it."""

    state: str = CONNECTING
    server_pings: int = 0
    pongs_sent: int = 0
    pong_failures: int = 0
    pings_sent: int = 0
    ping_failures: int = 0
    last_rtt: float | None = None
    last_pong_latency: float | None = None
    invalid_frames: int = 0
    last_frame_in: float | None = None
    last_frame_out: float | None = None
    closed_reason: str | None = None

