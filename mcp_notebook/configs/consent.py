"""Consent to run a configured command: asked once per entry, remembered while it stays the same.

A configuration file can be written by anyone who can write to a project (a cloned
repository's `.mcp.json`, say), so a command it names runs only once the user has seen it and
said Run. The decision is kept in `consent.json` in the user data directory, keyed by the
entry's file and name and holding the entry's `digest`: a changed entry is asked about again.
Only Run is remembered; Cancel leaves nothing, so the next connection asks again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from . import store
from .entries import ServerEntry, redact_args

FILE = "consent.json"


def _key(entry: ServerEntry) -> str:
    return f"{entry.source.resolve()}#{entry.scope or ''}#{entry.name}"


def allowed(entry: ServerEntry) -> bool:
    """Whether the user said Run to exactly this entry before."""
    record = store.load(FILE).get(_key(entry))
    return isinstance(record, dict) and record.get("digest") == entry.digest()


def remember(entry: ServerEntry) -> None:
    def change(data: dict[str, Any]) -> None:
        data[_key(entry)] = {"digest": entry.digest(), "allowed_at": time.time()}

    store.update(FILE, change)


def forget(entry: ServerEntry) -> None:
    store.update(FILE, lambda data: data.pop(_key(entry), None))


@dataclass(frozen=True)
class ConsentRequest:
    """What the user is asked to allow: exactly what will run. Environment values are never shown,
    only their names; arguments that look like credentials, or that hold a secret, are replaced."""

    entry: ServerEntry
    argv: list[str]
    cwd: str | None
    env_names: list[str]
    secrets: tuple[str, ...] = ()

    def shown_argv(self) -> list[str]:
        shown = redact_args(self.argv)
        for secret in self.secrets:
            shown = [part.replace(secret, "[redacted]") for part in shown]
        return shown

    def lines(self) -> list[str]:
        """The request as text lines (a terminal prompt, a refusal, the widget's plain text)."""
        return [
            f"{self.entry.name} (from {self.entry.where}) wants to start a command:",
            f"  command: {self.shown_argv()[0]}",
            f"  arguments: {' '.join(self.shown_argv()[1:]) or '(none)'}",
            f"  working directory: {self.cwd or '(the kernel’s)'}",
            f"  environment variables set: {', '.join(self.env_names) or '(none)'}",
        ]
