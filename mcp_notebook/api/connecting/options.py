"""`ConnectOptions`: every option of `connect()`, carried as one value from the signature to
the session. Its field defaults are the one home of the defaults: `connect` and `aconnect`
take theirs from here, and a test holds their signatures to these fields.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...base.public import public
from ...base.timeouts import DEFAULT_TIMEOUT, check_timeout
from ...session.eras import PROBE_TIMEOUT
from ...session.handlers import Handler

__all__ = ["DEFAULTS", "DEFAULT_TIMEOUT", "ConnectOptions", "check_timeout", "option_names"]


@public
@dataclass(frozen=True)
class ConnectOptions:
    """How to connect: what `connect()` was given, defaults filled in."""

    name: str | None = None
    era: str = "auto"
    timeout: float | None = DEFAULT_TIMEOUT
    env: Mapping[str, str] | None = None
    cwd: str | Path | None = None
    headers: Mapping[str, str] | None = None
    transport: str = "auto"
    bearer_token_env: str | None = None
    secrets: Sequence[str] = ()
    protocol_version: str | None = None
    probe_timeout: float = PROBE_TIMEOUT
    capabilities: dict[str, Any] | None = None
    handlers: Mapping[str, Handler] | None = None
    trace_capacity: int | None = None
    roots: Any = None
    sampling: Any = None
    elicitation: Any = None
    config: str | None = None
    config_file: str | Path | None = None
    consent: bool | None = None
    apps: bool | None = None  # MCP Apps: None = on where the front end can draw them (Jupyter)
    auth: Any = "auto"
    check_frames: bool = True  # every server frame checked against the spec (conn.violations)
    strict: bool = False  # the first violation fails the call it answers and ends the connection
    proxy: str | None = None  # None: %config McpNotebook.proxy, then the environment's
    verify: Any = True  # True: the system's roots; a CA bundle's path; an ssl.SSLContext; False

    def __post_init__(self) -> None:
        check_timeout(self.timeout)
        check_timeout(self.probe_timeout, "probe_timeout", optional=False)

    def replace(self, **changes: Any) -> ConnectOptions:
        return dataclasses.replace(self, **changes)


def option_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(ConnectOptions))


DEFAULTS = ConnectOptions()
