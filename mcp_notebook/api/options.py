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

from ..session.eras import PROBE_TIMEOUT
from ..session.handlers import Handler

DEFAULT_TIMEOUT = 60.0


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

    def replace(self, **changes: Any) -> ConnectOptions:
        return dataclasses.replace(self, **changes)


def option_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(ConnectOptions))


DEFAULTS = ConnectOptions()
