"""Consent to a configured entry: asked once per entry, remembered while it stays the same.

A configuration file can be written by anyone who can write to a project (a cloned
repository's `.mcp.json`, say), so a command it names runs only once the user has seen it and
said Run; and a URL it names is connected to only once the user has said so, when the entry
would send anything taken from this machine (`${env:SECRET}` in its URL or headers, say):
the request names those variables, never their values. The decision is kept in
`consent.json` in the user data directory, keyed by the entry's file and name and holding the
entry's `digest`: a changed entry is asked about again. Only a yes is remembered; Cancel
leaves nothing, so the next connection asks again.
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
    """What the user is asked to allow: exactly what will run (`argv`), or where what is taken
    from this machine will be sent (`url`, as the entry writes it, and the `headers`' names).
    Values are never shown: only the names of the environment variables set (`env_names`) and
    read (`reads`); arguments that look like credentials, or that hold a secret, are replaced."""

    entry: ServerEntry
    argv: list[str] | None
    cwd: str | None
    env_names: list[str]
    secrets: tuple[str, ...] = ()
    reads: tuple[str, ...] = ()
    url: str | None = None
    headers: tuple[str, ...] = ()

    @property
    def runs(self) -> bool:
        """A command to start (else a URL to connect to)."""
        return self.argv is not None

    @property
    def verb(self) -> str:
        """What saying yes does: Run, or Connect."""
        return "Run" if self.runs else "Connect"

    def shown_argv(self) -> list[str]:
        shown = redact_args(self.argv or [])
        for secret in self.secrets:
            shown = [part.replace(secret, "[redacted]") for part in shown]
        return shown

    def summary(self) -> str:
        """One line: the command as shown, or the URL and what it would send."""
        if self.runs:
            return " ".join(self.shown_argv())
        return f"{self.url} with the values of {', '.join(self.reads)}"

    def rows(self) -> list[tuple[str, str]]:
        """(label, text) of what is asked about, the same in a terminal and in the form."""
        reads = ", ".join(self.reads) or "(none)"
        if not self.runs:
            return [
                ("URL", self.url or ""),
                ("headers sent", ", ".join(self.headers) or "(none)"),
                ("values from this machine", reads),
            ]
        argv = self.shown_argv()
        return [
            ("command", argv[0]),
            ("arguments", " ".join(argv[1:]) or "(none)"),
            ("working directory", self.cwd or "(the kernel’s)"),
            ("environment variables set", ", ".join(self.env_names) or "(none)"),
            ("values from this machine", reads),
        ]

    def lines(self) -> list[str]:
        """The request as text lines (a terminal prompt, a refusal, the widget's plain text)."""
        what = "wants to start a command" if self.runs else "wants to connect, sending what it takes from this machine"
        return [f"{self.entry.name} (from {self.entry.where}) {what}:", *(f"  {k}: {v}" for k, v in self.rows())]
