"""The entries a user pastes into a client's configuration so it goes through a tap: the
wrapped command (`python -m mcp_notebook.tap --name NAME -- COMMAND ARGS...`) for stdio, the
tap's own URL for HTTP, in each client's format as `configs.formats` reads it back.

The rule kept here: an entry is the exact file snippet (`PasteEntry` is the dict to write,
with Claude Code's `claude mcp add` line beside it), and its displays never show a value of
the server's environment or headers whose name looks secret: those are the user's own, in the
dict, and "[redacted]" wherever the entry is shown.
"""

from __future__ import annotations

import json
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.errors import UsageError
from ..base.text import esc
from ..transports.urls import REDACTED, is_secret_name, redact_url

CLIENTS = ("claude-code", "cursor", "vscode", "claude-desktop")
LABELS = {"claude-code": "Claude Code", "cursor": "Cursor", "vscode": "VS Code", "claude-desktop": "Claude Desktop"}
# Where each client keeps the snippet (as `configs.discovery` finds it), for the displays.
WHERE = {
    "claude-code": ".mcp.json (or: claude mcp add)",
    "cursor": "~/.cursor/mcp.json or .cursor/mcp.json",
    "vscode": ".vscode/mcp.json",
    "claude-desktop": "claude_desktop_config.json",
}


def wrapped(name: str, argv: Sequence[str]) -> list[str]:
    """The command a client runs instead of `argv`: the relay, with this interpreter."""
    if not argv:
        raise UsageError("the server's command is empty; give its program and arguments")
    return [sys.executable, "-m", "mcp_notebook.tap", "--name", name, "--", *argv]


@dataclass(frozen=True)
class Target:
    """What the client is to reach: a command (already wrapped) or a URL, with the environment,
    headers and working directory the user configured for it."""

    argv: tuple[str, ...] = ()
    url: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    headers: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    secrets: tuple[str, ...] = field(default=(), compare=False)  # values no display shows


class PasteEntry(dict[str, Any]):
    """The snippet to paste into `client`'s configuration file (a dict: `json.dump` it, or merge
    it into the file's server map); `line` is the shell command that adds it, where the client
    has one (Claude Code). It displays with secret-looking values redacted."""

    def __init__(self, client: str, snippet: Mapping[str, Any], line: str | None, hidden: Sequence[str]) -> None:
        super().__init__(snippet)
        self.client = client
        self.line = line
        self._hidden = tuple(v for v in hidden if v)

    def json(self) -> str:
        """The snippet as the file holds it (values as configured: the user's own)."""
        return json.dumps(dict(self), indent=2)

    def shown(self) -> str:
        """The snippet and the add line as the displays show them, secrets replaced."""
        text = json.dumps(_redacted(dict(self)), indent=2)
        if self.line:
            text = f"{self.line_shown()}\n{text}"
        return self._hide(text)

    def line_shown(self) -> str:
        return self._hide(self.line or "")

    def _hide(self, text: str) -> str:
        for value in sorted(self._hidden, key=len, reverse=True):
            if len(value) >= 4:
                text = text.replace(value, REDACTED)
        return text

    def __repr__(self) -> str:
        return f"<PasteEntry for {self.client}: {self._hide(json.dumps(_redacted(dict(self))))}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(f"# {WHERE.get(self.client, self.client)}\n{self.shown()}")

    def _repr_html_(self) -> str:
        return (
            f'<div style="font-size:0.85em;color:#868e96">{esc(WHERE.get(self.client, self.client))}</div>'
            f'<pre style="margin:0.2em 0;white-space:pre-wrap">{esc(self.shown())}</pre>'
        )


def entry(client: str, name: str, target: Target) -> PasteEntry:
    """The snippet for `client` that reaches `target` as server `name`."""
    if client not in CLIENTS:
        raise UsageError(f"no entry format for client {client!r}; choose one of {', '.join(CLIENTS)}")
    spec: dict[str, Any]
    if target.url is not None:
        if client == "claude-desktop":
            raise UsageError(
                "Claude Desktop's configuration file runs commands only; add the tap's URL "
                f"{redact_url(target.url)} under Settings > Connectors instead"
            )
        spec = {"type": "http", "url": target.url} if client != "cursor" else {"url": target.url}
        if target.headers:
            spec["headers"] = dict(target.headers)
    else:
        program, *args = target.argv
        spec = {"type": "stdio"} if client == "vscode" else {}
        spec.update({"command": program, "args": list(args)})
        if target.env:
            spec["env"] = dict(target.env)
        if target.cwd:
            spec["cwd"] = target.cwd
    key = "servers" if client == "vscode" else "mcpServers"
    line = _claude_line(name, target) if client == "claude-code" else None
    hidden = [*target.secrets, *(v for k, v in (*target.env, *target.headers) if is_secret_name(k))]
    return PasteEntry(client, {key: {name: spec}}, line, hidden)


def _claude_line(name: str, target: Target) -> str:
    """`claude mcp add ...`: the same server added from the shell (Claude Code's own command)."""
    if target.url is not None:
        headers = [w for k, v in target.headers for w in ("--header", f"{k}: {v}")]
        return shlex.join(["claude", "mcp", "add", "--transport", "http", name, target.url, *headers])
    env = [w for k, v in target.env for w in ("--env", f"{k}={v}")]
    return shlex.join(["claude", "mcp", "add", "--transport", "stdio", *env, name, "--", *target.argv])


def _redacted(value: Any, key: str = "") -> Any:
    """The snippet with the values of secret-looking env and header names replaced."""
    if isinstance(value, dict):
        inner = key in ("env", "headers")
        return {k: (REDACTED if inner and is_secret_name(str(k)) else _redacted(v, str(k))) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    if key == "url" and isinstance(value, str):
        return redact_url(value)
    return value
