"""The configured servers as a listing (`configured_servers`, `%mcp servers`), and connecting to
every one of them (`connect_all`, `%mcp connect --all`), each with its own consent.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...base.errors import McpNotebookError, UsageError
from ...base.text import clip, esc, one_line, table_text
from ...configs.entries import ServerEntry
from ...configs.formats import LABELS
from .configured import connected, servers
from .connect import connect, connections


def configured_servers(config_file: str | Path | None = None, *, workspace: str | Path | None = None) -> ServerListing:
    """The servers other clients (and `McpNotebook.config_files`) configure: name, file, transport,
    command or URL (credentials replaced), and whether a connection of that name from it is open.
    `config_file` keeps those of one file (a path, or a client: "cursor", "vscode", ...)."""
    found = servers(workspace=workspace)
    return ServerListing(found.in_file(config_file), list(found.problems) if config_file is None else [], found.workspace)


def connect_all(config_file: str | Path | None = None, *, consent: bool | None = None, **options: Any) -> dict[str, Any]:
    """Connect to every configured server (of `config_file`), each asked for consent on its own;
    the connection, or the error that stopped it, by name. Disabled entries are left out.
    `options` go to each `connect` (era, timeout, ...)."""
    results: dict[str, Any] = {}
    for entry in servers().in_file(config_file):
        if entry.disabled:
            results[entry.name] = UsageError(f"{entry.name}: disabled in {entry.where}")
            continue
        try:
            results[entry.name] = connect(config=entry.name, config_file=entry.source, consent=consent, **options)
        except McpNotebookError as exc:
            results[entry.name] = exc
    return results


class ServerListing(list[ServerEntry]):
    """Configured servers (a list of `ServerEntry`) that display as a table, with the problems
    of the files that could not be read under it, one line each."""

    HEAD = ("name", "client", "file", "transport", "command or URL", "connected")

    def __init__(self, entries: Sequence[ServerEntry], problems: Sequence[Any], workspace: Path | None = None) -> None:
        super().__init__(entries)
        self.problems = list(problems)
        self.workspace = workspace

    def rows(self) -> list[list[str]]:
        open_names = list(connections())
        return [
            [
                e.name + (" (disabled)" if e.disabled else ""),
                LABELS.get(e.client, e.client),
                short_path(e.source, self.workspace) + (f" (project {short_path(Path(e.scope), None)})" if e.scope else ""),
                e.transport,
                e.shown_target(),
                "yes" if connected(e, open_names) else "no",
            ]
            for e in self
        ]

    def _text(self) -> str:
        rows = [[clip(one_line(c), 70) if i != 2 else one_line(c) for i, c in enumerate(row)] for row in self.rows()]
        body = table_text(list(self.HEAD), rows) if self else ""
        lines = [body or "(no configured servers found)"]
        lines += [f"cannot read {one_line(p.line())}" for p in self.problems]
        return "\n".join(lines)

    def _html(self) -> str:
        th = "".join(f'<th style="text-align:left">{esc(h)}</th>' for h in self.HEAD)
        body = "".join(
            "<tr>" + "".join(f'<td style="text-align:left">{esc(c)}</td>' for c in row) + "</tr>" for row in self.rows()
        )
        problems = "".join(f'<div style="color:#e03131">cannot read {esc(p.line())}</div>' for p in self.problems)
        table = f'<table class="mcp-servers"><tr>{th}</tr>{body}</table>' if self else "<i>no configured servers found</i>"
        return f"{table}<div>{len(self)} configured servers</div>{problems}"

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        return {"text/plain": self._text(), "text/html": self._html()}

    def __repr__(self) -> str:
        return self._text()


def short_path(path: Path, workspace: Path | None) -> str:
    """`./.mcp.json` for the project's files, `~/.cursor/mcp.json` for the user's, else the path."""
    for base, shown in ((workspace, "."), (Path.home(), "~")):
        if base is not None:
            try:
                return f"{shown}/{path.relative_to(base)}"
            except ValueError:
                continue
    return str(path)
