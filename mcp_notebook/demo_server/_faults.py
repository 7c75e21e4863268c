"""Fault switches: one table drives the command line, the `faults` tool and `command()`.

Two kinds:

* settings stay in force until changed: `pong_delay_ms`, `ignore_pings`,
  `drop_percent` (and `seed`, which reseeds the drop RNG);
* actions happen once: `crash`, `expire_session`, `malformed`, `flood`. Through the
  `faults` tool they happen during that call; given on the command line they are
  armed and happen during the first `tools/call` the server receives.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

import anyio


class FaultError(ValueError):
    """A fault value of the wrong type or out of range."""


@dataclass(frozen=True)
class FaultSpec:
    name: str
    kind: type  # bool or int
    help: str
    action: bool = False
    minimum: int | None = None
    maximum: int | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def check(self, value: Any) -> Any:
        """The value if it fits this switch, else FaultError (bool is not an int here)."""
        if self.kind is bool:
            if not isinstance(value, bool):
                raise FaultError(f"{self.name} must be true or false, not {value!r}")
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise FaultError(f"{self.name} must be an integer, not {value!r}")
        if self.minimum is not None and value < self.minimum:
            raise FaultError(f"{self.name} must be at least {self.minimum}, not {value}")
        if self.maximum is not None and value > self.maximum:
            raise FaultError(f"{self.name} must be at most {self.maximum}, not {value}")
        return value

    def json_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "boolean" if self.kind is bool else "integer", "description": self.help}
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        if self.maximum is not None:
            schema["maximum"] = self.maximum
        return schema


SPECS: tuple[FaultSpec, ...] = (
    FaultSpec(
        "pong_delay_ms",
        int,
        "Delay our answer to each client ping by N ms, counted from the ping's arrival. Lowering it "
        "releases pongs already waiting (legacy era; modern has no ping).",
        minimum=0,
        maximum=600_000,
    ),
    FaultSpec(
        "ignore_pings",
        bool,
        "Leave client pings unanswered (never answered, even after switching it off). Legacy era.",
    ),
    FaultSpec(
        "drop_percent",
        int,
        "Drop N% of the responses to client requests (never sent; on HTTP the request is held open). "
        "`initialize` and `server/discover` are never dropped. Decided when the response is ready, "
        "so a faults call that changes it is judged by the new value.",
        minimum=0,
        maximum=100,
    ),
    FaultSpec("seed", int, "Seed of the drop_percent RNG (default 0); setting it reseeds."),
    FaultSpec(
        "crash",
        bool,
        "Write a line to stderr and exit at once with code 3 (the request is never answered).",
        action=True,
    ),
    FaultSpec(
        "expire_session",
        bool,
        "HTTP, legacy era: forget the session after this response, so its next request gets 404. "
        "Nothing to expire on stdio or in the stateless modern era (the result says so).",
        action=True,
    ),
    FaultSpec(
        "malformed",
        bool,
        "Send one frame that is not JSON before the response: a line of garbage on stdio, an SSE "
        "event with invalid JSON data on the request's HTTP response stream.",
        action=True,
    ),
    FaultSpec(
        "flood",
        int,
        "Send N notifications/message (level info) at once, before the response, on the request's "
        "channel. Legacy: filtered by logging/setLevel. Modern: only when the request opts in with "
        "_meta io.modelcontextprotocol/logLevel.",
        action=True,
        minimum=0,
        maximum=100_000,
    ),
)
BY_NAME: dict[str, FaultSpec] = {spec.name: spec for spec in SPECS}
NAMES: tuple[str, ...] = tuple(BY_NAME)


def check_all(values: dict[str, Any]) -> dict[str, Any]:
    """Validate every entry (unknown names included) before anything is applied."""
    unknown = sorted(set(values) - set(BY_NAME))
    if unknown:
        raise FaultError(f"unknown fault(s): {', '.join(unknown)}; known: {', '.join(NAMES)}")
    return {name: BY_NAME[name].check(value) for name, value in values.items()}


class Faults:
    """The process-wide fault state: current settings, armed actions and the drop RNG."""

    def __init__(self, **values: Any) -> None:
        values = check_all(values)
        self.pong_delay_ms = 0
        self.ignore_pings = False
        self.drop_percent = 0
        self.seed = 0
        self._rng = random.Random(0)
        self._changed: anyio.Event | None = None  # made on first wait: needs a running event loop
        self.armed: dict[str, Any] = {}
        self.update(values)
        self.armed = {name: values[name] for name in NAMES if BY_NAME[name].action and values.get(name)}

    def update(self, values: dict[str, Any]) -> dict[str, Any]:
        """Apply the settings among `values` (validated first); return the actions requested."""
        values = check_all(values)
        for name, value in values.items():
            if not BY_NAME[name].action:
                setattr(self, name, value)
        if "seed" in values:
            self._rng = random.Random(self.seed)
        if self._changed is not None:
            self._changed.set()
            self._changed = None
        return {name: value for name, value in values.items() if BY_NAME[name].action and value}

    async def changed(self) -> None:
        """Return at the next update (for waits that depend on a setting)."""
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def take_armed(self) -> dict[str, Any]:
        """The actions armed on the command line, once; empty afterwards."""
        armed, self.armed = self.armed, {}
        return armed

    def drop(self) -> bool:
        """Whether to drop the response now; draws from the RNG only while dropping is on."""
        return self.drop_percent > 0 and self._rng.random() * 100 < self.drop_percent

    def settings(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in NAMES if not BY_NAME[name].action}


async def wait_pong_delay(faults: Faults, received_at: float) -> None:
    """Sleep until `pong_delay_ms` after `received_at`, re-reading the setting when it changes."""
    while True:
        remaining = received_at + faults.pong_delay_ms / 1000 - anyio.current_time()
        if remaining <= 0:
            return
        with anyio.move_on_after(remaining):
            await faults.changed()
