"""What each session of a load does, again and again: a `Workload`, made from what the user gave.

- a tool call, `{"tool": "echo", "arguments": {...}}`, or a list of them, called in turn;
- a cassette's path: the recorded client's requests (not its handshake or pings), sent again
  in order with fresh ids, the session opened in the recorded protocol version;
- a function `f(conn)`, sync or async, given the session's `Connection`: one call of `f` is
  one record (method "function", tool: the function's name).

The rule kept here: a workload is checked against the first live session before the load
starts (every tool it names is listed by the server; a cassette's server is this server), so a
wrong workload is one line before any load, never thousands of identical failures.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.errors import UsageError
from ..base.text import one_line, plain
from ..cassette import CassetteError
from ..cassette import load as load_tape
from ..cassette.tape import HANDSHAKE

NOT_REPLAYED = frozenset({*HANDSHAKE, "ping"})  # the connection sends these itself


@dataclass(frozen=True)
class Step:
    """One request of a workload's cycle."""

    method: str
    params: dict[str, Any] | None
    tool: str | None = None


@dataclass(frozen=True)
class Workload:
    """A cycle of requests, or a function; what a session repeats until the load ends."""

    label: str
    steps: tuple[Step, ...] = ()
    function: Callable[[Any], Any] | None = None
    server_name: str | None = None  # a cassette's: the server it was recorded against
    connect_options: Mapping[str, Any] = field(default_factory=dict)

    @property
    def tools(self) -> list[str]:
        return sorted({step.tool for step in self.steps if step.tool and step.method == "tools/call"})

    @property
    def is_async(self) -> bool:
        return self.function is not None and inspect.iscoroutinefunction(self.function)

    def check(self, server_info: Mapping[str, Any] | None, listed: Sequence[str], where: str) -> None:
        """UsageError, one line, if the live server (its info, its listed tools) cannot serve this workload."""
        live_name = (server_info or {}).get("name")
        if self.server_name is not None and live_name != self.server_name:
            raise UsageError(
                f"{self.label} was recorded against the server {plain(self.server_name)!r}, "
                f"but {where} is {plain(live_name)!r}: replay a cassette of this server"
            )
        missing = [tool for tool in self.tools if tool not in listed]
        if missing:
            shown = ", ".join(plain(name) for name in sorted(listed)[:8]) or "none"
            more = ", ..." if len(listed) > 8 else ""
            raise UsageError(f"{where} has no tool {plain(missing[0])!r} (its tools: {shown}{more})")


def as_workload(workload: Any) -> Workload:
    """The Workload of what `load()` was given; UsageError, one line, for anything else."""
    if isinstance(workload, Workload):
        return workload
    if isinstance(workload, (str, Path)):
        return _cassette(workload)
    if callable(workload):
        name = getattr(workload, "__name__", type(workload).__name__)
        return Workload(label=f"{name}()", function=workload)
    if isinstance(workload, Mapping):
        return Workload(label=_tool_label(workload), steps=(_tool_step(workload),))
    if isinstance(workload, Sequence) and workload and all(isinstance(item, Mapping) for item in workload):
        steps = tuple(_tool_step(item) for item in workload)
        return Workload(label=" + ".join(_tool_label(item) for item in workload), steps=steps)
    raise UsageError(
        "workload: give a tool call ({'tool': NAME, 'arguments': {...}}) or a list of them, "
        f"a cassette's path, or a function f(conn); not {type(workload).__name__}"
    )


def _tool_step(spec: Mapping[str, Any]) -> Step:
    name, arguments = spec.get("tool"), spec.get("arguments", {})
    if not isinstance(name, str) or not name:
        raise UsageError(
            f"workload: a tool call names its tool: {{'tool': NAME, 'arguments': {{...}}}}, not {one_line(dict(spec))}"
        )
    if not isinstance(arguments, Mapping):
        raise UsageError(f"workload: the arguments of {plain(name)!r} are a dict, not {type(arguments).__name__}")
    unknown = sorted(set(spec) - {"tool", "arguments"})
    if unknown:
        raise UsageError(f"workload: a tool call has only 'tool' and 'arguments', not {', '.join(map(repr, unknown))}")
    return Step("tools/call", {"name": name, "arguments": dict(arguments)}, name)


def _tool_label(spec: Mapping[str, Any]) -> str:
    return f"{spec.get('tool')}()"


def _cassette(path: str | Path) -> Workload:
    try:
        tape = load_tape(path)
    except CassetteError as exc:
        raise UsageError(str(exc)) from None
    steps = tuple(
        Step(e.method, e.bare_params() if "params" in e.message else None, _tool_of(e.method, e.params))
        for e in tape.requests()
        if e.method not in NOT_REPLAYED
    )
    if not steps:
        raise UsageError(f"the cassette {plain(path)} has no requests to replay (only its handshake and pings)")
    handshake = tape.handshake()
    info = (handshake.reply or {}).get("result", {}).get("serverInfo") if handshake is not None else None
    name = info.get("name") if isinstance(info, dict) and isinstance(info.get("name"), str) else None
    options: dict[str, Any] = {}
    version = tape.header.get("protocolVersion")
    if isinstance(version, str):
        options["protocol_version"] = version
    elif tape.era is not None:
        options["era"] = tape.era
    return Workload(label=f"the cassette {plain(Path(path).name)}", steps=steps, server_name=name, connect_options=options)


def _tool_of(method: str, params: dict[str, Any]) -> str | None:
    if method == "tools/call" and isinstance(params.get("name"), str):
        return str(params["name"])
    if method in ("prompts/get",) and isinstance(params.get("name"), str):
        return str(params["name"])
    if method.startswith("resources/") and isinstance(params.get("uri"), str):
        return str(params["uri"])
    return None
