"""What the steps of one diagnosis share: the target, the options, the per-step time limit,
what earlier steps learnt, and the `Redactor` every step's words pass through.

The rule kept here: a step never makes its own `Step`; it calls `ctx.ok/warn/fail/skip`,
which redact. Whatever a step opens (a process, a connection) it closes itself, except the
connection, which `close()` ends when the diagnosis does.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..api.connecting.options import ConnectOptions
from ..session.era import Era, era_named
from ..session.redaction import MIN_SECRET_LENGTH, Redactor
from ..transports.urls import is_secret_name
from .report import Step, make_step

if TYPE_CHECKING:
    from ..api.connection import Connection

DEFAULT_STEP_TIMEOUT = 10.0  # seconds each step may take


@dataclass
class Context:
    """One diagnosis under way."""

    target: Any  # a URL, a command line or an argv
    options: ConnectOptions
    timeout: float  # seconds, for each step
    redactor: Redactor = field(default_factory=Redactor)
    name: str = ""  # the step running now
    facts: dict[str, Any] = field(default_factory=dict)  # what earlier steps learnt, by name
    conn: Connection | None = None
    cleanups: list[Callable[[], None]] = field(default_factory=list)  # run when the diagnosis ends

    def step(self, status: str, detail: str = "", hint: str = "") -> Step:
        return make_step(self.redactor, self.name, status, detail, hint)

    def ok(self, detail: str = "") -> Step:
        return self.step("ok", detail)

    def warn(self, detail: str, hint: str = "") -> Step:
        return self.step("warn", detail, hint)

    def fail(self, detail: str, hint: str = "") -> Step:
        return self.step("fail", detail, hint)

    def skip(self, detail: str) -> Step:
        return self.step("skipped", detail)

    @property
    def asked(self) -> Era | None:
        """The era the options pin, or None: "auto", the session probes."""
        return era_named(self.options.era)

    def headers(self) -> dict[str, str]:
        """The HTTP headers the options ask for, a bearer token from its variable among them."""
        headers = dict(self.options.headers or {})
        variable = self.options.bearer_token_env
        if variable and os.environ.get(variable):
            headers["Authorization"] = f"Bearer {os.environ[variable]}"
        return headers

    def env(self) -> dict[str, str]:
        return {**os.environ, **(self.options.env or {})}

    def close(self) -> None:
        if self.conn is not None:
            self.conn.close()
            self.conn = None
        while self.cleanups:
            self.cleanups.pop()()


def secrets_of(target: Any, options: ConnectOptions, headers: Mapping[str, str]) -> list[str]:
    """Every string no step may show: the options' secrets, credential headers and their tokens,
    credential-looking query values of a URL, and the values of credential-looking variables."""
    found = list(options.secrets)
    for key, value in headers.items():
        if is_secret_name(key) or key.lower() == "authorization":
            found += [value, value.partition(" ")[2]]
    if isinstance(target, str) and "://" in target:
        parts = urlsplit(target.strip())
        if parts.password:
            found.append(parts.password)
        for pair in parts.query.split("&"):
            key, _, value = pair.partition("=")
            if value and is_secret_name(key):
                found.append(value)
    for key, value in (options.env or {}).items():
        if is_secret_name(key):
            found.append(value)
    return [value for value in found if isinstance(value, str) and len(value) >= MIN_SECRET_LENGTH]
