"""`ServerEntry`: one configured MCP server, as read from one client's file, before any
`${...}` in it is filled in; and `ConfigProblem`, a file that could not be read.

An entry's `digest` covers everything that decides what runs (command, arguments, working
directory, environment, URL, headers, transport), so a consent given for an entry holds only
while the entry stays the same. `shown_target` is what listings print: the command line or the
URL with credential-looking values replaced, never an environment value or a header value.
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..transports.urls import REDACTED, is_secret_name, redact_url

STDIO, HTTP, SSE = "stdio", "http", "sse"


@dataclass(frozen=True)
class ServerEntry:
    """One configured server. `transport` is stdio, http (Streamable HTTP), sse, or auto (a URL
    whose file does not say which); `inputs` are the VS Code input definitions of its file."""

    name: str
    client: str
    source: Path
    transport: str
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    inputs: tuple[dict[str, Any], ...] = field(default=(), compare=False)
    scope: str | None = None  # e.g. Claude Code's per-project entries: the project's path
    disabled: bool = False

    @property
    def is_command(self) -> bool:
        return self.command is not None

    @property
    def where(self) -> str:
        """The file, and the part of it, the entry came from."""
        return f"{self.source} (project {self.scope})" if self.scope else str(self.source)

    def digest(self) -> str:
        """A hash of what this entry runs or reaches; it changes when any of that changes."""
        what = {
            "command": self.command,
            "args": list(self.args),
            "env": sorted(self.env),
            "cwd": self.cwd,
            "url": self.url,
            "headers": sorted(self.headers),
            "transport": self.transport,
        }
        return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()

    def shown_target(self) -> str:
        """The command line or URL as listings show it, credentials replaced."""
        if self.url is not None:
            return redact_url(self.url)
        return shlex.join([self.command or "", *redact_args(self.args)])

    def env_names(self) -> list[str]:
        return [key for key, _ in self.env]


def redact_args(args: tuple[str, ...] | list[str]) -> list[str]:
    """Arguments with credential-looking values replaced: `--api-key X`, `--token=X`, `KEY=X`."""
    shown: list[str] = []
    for arg in args:
        if shown and shown[-1].startswith("-") and "=" not in shown[-1] and is_secret_name(shown[-1]):
            shown.append(REDACTED)
            continue
        key, sep, _ = arg.partition("=")
        shown.append(f"{key}={REDACTED}" if sep and is_secret_name(key) else redact_url(arg) if "://" in arg else arg)
    return shown


@dataclass(frozen=True)
class ConfigProblem:
    """A configuration file, or one entry of it, that could not be read: one line says why."""

    source: Path
    problem: str

    def line(self) -> str:
        return f"{self.source}: {self.problem}"
