"""Connecting to servers other clients configured: what `connect(config="NAME")` does first.

`prepare` turns `config="NAME"` (and `config_file`, a path or a client such as "cursor", when
the name is in several files) into a target and options: the entry is found (`configs.discovery`),
its `${...}` filled in (inputs asked through the front end), and a command it names runs only
with consent, as a URL it names is connected to when the entry sends anything taken from this
machine (an environment variable in its URL or headers): remembered from an earlier yes to the
same entry, given as `consent=True`, or asked for now through the front end. Options given to
`connect` win over the entry's. The connection it opens has its tools checked against their pin
(`tools.pins`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...base.errors import UsageError
from ...configs import consent as consents
from ...configs.discovery import Discovery, discover
from ...configs.entries import ServerEntry
from ...configs.interpolate import resolve
from ..display import frontend
from ..tools import pins as tool_pins
from .options import ConnectOptions
from .settings import defaults

_origins: dict[str, str] = {}  # connection name -> the digest of the entry it was opened from


class ConsentRefused(UsageError):
    """A configured command was not started, or a configured URL not connected to with values
    from this machine: the user cancelled, or nobody could be asked."""


def servers(*, workspace: str | Path | None = None) -> Discovery:
    """Every configured server this kernel can see, and the files that could not be read."""
    return discover(workspace=workspace, extra_files=defaults.config_files)


def prepare(
    target: str | Sequence[str] | None, options: ConnectOptions
) -> tuple[str | Sequence[str], ConnectOptions, Callable[[Any], Any]]:
    """The target and options to connect with, and what to do with the open connection."""
    if options.config is None:
        if target is None:
            raise UsageError("connect needs a target (a server command or an http(s) URL) or config=NAME")
        if options.config_file is not None or options.consent is not None:
            raise UsageError("config_file and consent go with config=NAME (a configured server)")
        return target, options, lambda conn: conn
    if target is not None:
        raise UsageError("give a target or config=NAME, not both")
    found = servers()
    entry = found.named(options.config, options.config_file)
    resolved = resolve(entry, workspace=found.workspace, ask=frontend.current().ask_inputs)
    if entry.is_command and resolved.argv is not None:
        request = consents.ConsentRequest(entry, resolved.argv, resolved.cwd, entry.env_names(), resolved.secrets, resolved.reads)
        _consent(entry, request, options.consent)
    elif resolved.reads:  # a URL that would send what it takes from this machine
        headers = tuple(key for key, _ in entry.headers)
        request = consents.ConsentRequest(
            entry, None, None, [], resolved.secrets, resolved.reads, url=entry.shown_target(), headers=headers
        )
        _consent(entry, request, options.consent)
    name = options.name or entry.name
    prepared = options.replace(
        name=name,
        env={**resolved.env, **(options.env or {})} or None,
        cwd=options.cwd if options.cwd is not None else resolved.cwd,
        headers={**resolved.headers, **(options.headers or {})} or None,
        transport=resolved.transport if options.transport == "auto" else options.transport,
        secrets=(*options.secrets, *resolved.secrets),
        config=None,
        config_file=None,
        consent=None,
    )

    def opened(conn: Any) -> Any:
        _origins[conn.name] = entry.digest()
        tool_pins.check(conn, key=tool_pins.server_key(config_name=entry.name))
        return conn

    return resolved.target, prepared, opened


def _consent(entry: ServerEntry, request: consents.ConsentRequest, given: bool | None) -> None:
    if given is True or (given is None and consents.allowed(entry)):
        return
    what = request.summary()
    not_done = "not started" if request.runs else "not connected"
    if given is False:
        raise ConsentRefused(f"{entry.name}: {not_done} (consent=False): {what}")
    answer = frontend.current().ask_consent(request)
    if answer is True:
        try:
            consents.remember(entry)
        except OSError as exc:  # allowed this time all the same; the next connection asks again
            frontend.current().warn(f"{entry.name}: your {request.verb} could not be remembered: {exc}")
        return
    if answer is False:
        raise ConsentRefused(f"{entry.name}: cancelled; nothing was {'started' if request.runs else 'sent'}")
    asks = f"asks to run `{what}`" if request.runs else f"asks to connect to {what}"
    raise ConsentRefused(
        f"{entry.name}: {not_done}: {entry.where} {asks}; read it, then connect with consent=True (%mcp connect NAME --consent)"
    )


def connected(entry: ServerEntry, open_names: Sequence[str]) -> bool:
    return entry.name in open_names and _origins.get(entry.name) == entry.digest()
