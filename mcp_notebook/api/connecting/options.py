"""`ConnectOptions`: every option of `connect()`, carried as one value from the signature to
the session, and written once: its fields are the options, their types and their defaults.

`connect` and `aconnect` are built from them (`options_of`): `Arguments` (the target, then the
options, keyword-only) gives both their runtime signature, so `help()`, IPython's `?` and
completion show every option with its default, and their static one (a ParamSpec taken from
its constructor), so mypy and pyright check option names and types at each call site. A test
holds both signatures to these fields.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

from ...base.public import public
from ...base.timeouts import DEFAULT_TIMEOUT, check_timeout
from ...session.handlers import Handler
from ...session.negotiation import PROBE_TIMEOUT

__all__ = ["DEFAULTS", "DEFAULT_TIMEOUT", "ConnectOptions", "check_timeout", "option_names"]


P = ParamSpec("P")
R = TypeVar("R")
Target = str | Sequence[str] | None


@public
@dataclass(frozen=True, kw_only=True)
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
    reload: bool = False  # restart a stdio server when its files (named in its command) change

    def __post_init__(self) -> None:
        check_timeout(self.timeout)
        check_timeout(self.probe_timeout, "probe_timeout", optional=False)

    def replace(self, **changes: Any) -> ConnectOptions:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, kw_only=True)
class Arguments(ConnectOptions):
    """What `connect()` takes: the target (positional, the one field before the keyword-only
    options), then every option. Its constructor is the signature `options_of` gives."""

    target: str | Sequence[str] | None = dataclasses.field(default=None, kw_only=False)


def options_of(
    arguments: Callable[P, Arguments],
) -> Callable[[Callable[[Target, ConnectOptions], R]], Callable[P, R]]:
    """Make `opener(target, options)` into a function taking `arguments`' parameters (the target
    and every option by name), with that signature for `inspect` and the type checkers."""
    signature = inspect.signature(arguments)

    def split(name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Target, ConnectOptions]:
        try:
            given = signature.bind(*args, **kwargs).arguments
        except TypeError as exc:
            raise TypeError(f"{name}() {exc}") from None
        target = given.pop("target", None)
        return target, ConnectOptions(**given)

    def dress(opener: Callable[[Target, ConnectOptions], R]) -> Callable[P, R]:
        name = opener.__name__
        face: Any
        if inspect.iscoroutinefunction(opener):

            async def awaited(*args: Any, **kwargs: Any) -> Any:
                return await cast(Awaitable[Any], opener(*split(name, args, kwargs)))

            face = awaited
        else:

            def blocking(*args: Any, **kwargs: Any) -> Any:
                return opener(*split(name, args, kwargs))

            face = blocking
        for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
            setattr(face, attribute, getattr(opener, attribute))
        face.__signature__ = signature.replace(return_annotation=inspect.signature(opener).return_annotation)
        return cast(Callable[P, R], face)

    return dress


def option_names() -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(ConnectOptions))


DEFAULTS = ConnectOptions()
