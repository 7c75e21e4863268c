"""`%mcp servers`: the servers other clients configured, and the completion of their names;
`%mcp tools --diff` / `--accept`: how a server's tools differ from their pin, and re-pinning.

`%mcp connect NAME` (no URL, no command) connects to one of them, and `%mcp connect --all` to
every one (`magics.session`); a configured command asks for consent in the cell first.
"""

from __future__ import annotations

import json
from argparse import Namespace
from typing import Any

from ...api.connecting import configured
from ...api.connecting.server_listing import ServerListing, configured_servers
from ...api.tools import pins as tool_pins
from ...base.text import clip, esc, plain
from ...configs.formats import LABELS
from ...configs.pins import ToolsDiff
from .commands import arg, subcommand

FROM_HELP = (
    "only the servers of this file: a path, or a client (claude-desktop, claude-code, cursor, vscode, gemini, windsurf, project)"
)


@subcommand(
    "servers",
    "the servers other clients configure (Claude Desktop, Claude Code, Cursor, VS Code, Gemini CLI, Windsurf, a project "
    "mcp.json, McpNotebook.config_files): name, file, transport, command or URL, connected; then the files that could "
    "not be read",
    arg("--from", dest="from_file", metavar="FILE", help=FROM_HELP),
    epilog="%mcp connect NAME connects to one (--from FILE when several files name it); %mcp connect --all to every one. "
    "A configured command shows what it will run and waits for Run the first time, and again whenever its entry changes.",
)
def _servers(ns: Namespace) -> ServerListing:
    return configured_servers(ns.from_file)


def completions(done: list[str], symbol: str) -> list[str] | None:
    """Candidates for `--from`, `%mcp connect NAME` and `%mcp tap NAME`; None where these have nothing to say."""
    if done and done[-1] == "--from":
        files = sorted({str(e.source) for e in configured.servers().entries})
        clients = sorted({c for c in LABELS if c != "vscode-settings"})
        return [c for c in [*clients, *files] if c.startswith(symbol)]
    if done in (["connect"], ["tap"]):
        names = sorted({e.name for e in configured.servers().entries})
        if done == ["tap"]:  # the open taps first, then the configured servers a tap can wrap
            from ...taps import registry

            names = registry.names() + [n for n in names if n not in registry.names()]
        return [n for n in names if n.startswith(symbol)]
    return None


class DiffView:
    """How a connection's tools differ from their pin: each changed field's old and new value."""

    def __init__(self, name: str, diff: ToolsDiff) -> None:
        self.name, self.diff = name, diff

    def rows(self) -> list[tuple[str, str, str, str]]:
        """(tool, what, was, now) for each difference; values as JSON, clipped."""
        rows = [(name, "added", "", "") for name in self.diff.added]
        rows += [(name, "removed", "", "") for name in self.diff.removed]
        for change in self.diff.changed:
            for field in change.fields:
                rows.append((change.name, field, _shown(change.old.get(field)), _shown(change.new.get(field))))
        return rows

    def _text(self) -> str:
        if not self.diff:
            return f"{self.name}: the tools are as pinned"
        lines = [f"{self.name}: tools changed since they were pinned: {plain(self.diff.summary())}"]
        for tool, what, was, now in self.rows():
            lines.append(f"  {plain(tool)}: {what}")
            if was or now:
                lines += [f"    was: {plain(was)}", f"    now: {plain(now)}"]
        return "\n".join(lines)

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, str]:
        if not self.diff:
            return {"text/plain": self._text(), "text/html": f"<i>{esc(self._text())}</i>"}
        cells = "".join(
            f"<tr><td><b>{esc(t)}</b></td><td>{esc(w)}</td><td style='color:#c92a2a'><del>{esc(a)}</del></td>"
            f"<td style='color:#2b8a3e'>{esc(b)}</td></tr>"
            for t, w, a, b in self.rows()
        )
        head = "<tr><th>tool</th><th>what</th><th>was</th><th>now</th></tr>"
        html = f"<div><b>{esc(self.name)}</b>: tools changed since they were pinned</div><table>{head}{cells}</table>"
        return {"text/plain": self._text(), "text/html": html}

    def __repr__(self) -> str:
        return self._text()


def _shown(value: Any) -> str:
    if value is None:
        return ""
    return clip(value if isinstance(value, str) else json.dumps(value, sort_keys=True), 400)


def tools_diff(conn: Any, *, accept: bool) -> DiffView | None:
    """`%mcp tools --diff` (the differences) or `--accept` (re-pin, and say how many)."""
    if accept:
        count = tool_pins.accept_tools(conn)
        print(f"{conn.name}: pinned its {count} tools as they are now")
        return None
    return DiffView(conn.name, tool_pins.tool_changes(conn))
