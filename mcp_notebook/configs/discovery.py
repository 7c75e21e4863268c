"""Where each client keeps its MCP configuration, and every configured server found there.

The places, per operating system (each cited from the client's documentation):

- Claude Desktop: `claude_desktop_config.json` in `~/Library/Application Support/Claude` (macOS),
  `%APPDATA%\\Claude` (Windows), `$XDG_CONFIG_HOME/Claude` (Linux builds).
  https://modelcontextprotocol.io/quickstart/user
- Claude Code: `~/.claude.json` (user scope at its top level, local scope per project) and a
  project's `.mcp.json`. https://code.claude.com/docs/en/mcp
- Cursor: `~/.cursor/mcp.json` and a project's `.cursor/mcp.json`. https://cursor.com/docs/mcp
- VS Code: a project's `.vscode/mcp.json`; the user's `mcp.json` and the `mcp` section of the
  user's `settings.json` in `Code/User` under the OS's config folder.
  https://code.visualstudio.com/docs/copilot/reference/mcp-configuration
- Gemini CLI: `~/.gemini/settings.json` and a project's `.gemini/settings.json`.
  https://geminicli.com/docs/tools/mcp-server/
- Windsurf: `~/.codeium/windsurf/mcp_config.json`. https://docs.windsurf.com/windsurf/cascade/mcp
- a project's own `mcp.json`, and the files in `McpNotebook.config_files`.

Nothing here writes to any of these files. The project is the working directory unless given.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import UsageError
from . import formats
from .entries import ConfigProblem, ServerEntry


def places(home: Path, workspace: Path, platform: str = sys.platform) -> list[tuple[str, Path]]:
    """(client, file) for every place a configuration may be, user files first."""
    if platform == "darwin":
        app_config = home / "Library" / "Application Support"
    elif platform.startswith("win"):
        app_config = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        app_config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return [
        ("claude-desktop", app_config / "Claude" / "claude_desktop_config.json"),
        ("claude-code-user", home / ".claude.json"),
        ("cursor", home / ".cursor" / "mcp.json"),
        ("vscode", app_config / "Code" / "User" / "mcp.json"),
        ("vscode-settings", app_config / "Code" / "User" / "settings.json"),
        ("gemini", home / ".gemini" / "settings.json"),
        ("windsurf", home / ".codeium" / "windsurf" / "mcp_config.json"),
        ("claude-code", workspace / ".mcp.json"),
        ("cursor", workspace / ".cursor" / "mcp.json"),
        ("vscode", workspace / ".vscode" / "mcp.json"),
        ("gemini", workspace / ".gemini" / "settings.json"),
        ("project", workspace / "mcp.json"),
    ]


@dataclass(frozen=True)
class Discovery:
    """Every configured server found, and the files (or entries) that could not be read."""

    entries: tuple[ServerEntry, ...]
    problems: tuple[ConfigProblem, ...]
    workspace: Path

    def named(self, name: str, from_file: str | Path | None = None) -> ServerEntry:
        """The entry called `name` (in `from_file`: a path or a client such as "cursor");
        a one-line UsageError when there is none, or several that differ."""
        candidates = [e for e in self.entries if e.name == name and (from_file is None or _matches(e, from_file))]
        if not candidates:
            where = f" in {from_file}" if from_file is not None else ""
            known = ", ".join(sorted({e.name for e in self.entries})) or "none"
            raise UsageError(f"no configured server named {name!r}{where} (configured: {known})")
        if len({e.digest() for e in candidates}) > 1:
            files = "; ".join(e.where for e in candidates)
            raise UsageError(f"{name!r} is configured differently in several files ({files}); choose one with --from FILE")
        return candidates[0]

    def in_file(self, from_file: str | Path | None) -> list[ServerEntry]:
        return [e for e in self.entries if from_file is None or _matches(e, from_file)]


def _matches(entry: ServerEntry, from_file: str | Path) -> bool:
    text = str(from_file)
    if text.lower() in (entry.client, formats.LABELS.get(entry.client, "").lower()):
        return True
    try:
        return Path(text).expanduser().resolve() == entry.source.resolve()
    except OSError:
        return False


def discover(
    *, workspace: str | Path | None = None, extra_files: Iterable[str | Path] = (), home: Path | None = None
) -> Discovery:
    """Read every place (`places`) and `extra_files` (our own format); files that do not exist are skipped."""
    home = home if home is not None else Path.home()
    root = Path(workspace).expanduser() if workspace is not None else Path.cwd()
    entries: list[ServerEntry] = []
    problems: list[ConfigProblem] = []
    seen: set[Path] = set()
    own = [("mcp-notebook", Path(f).expanduser()) for f in extra_files]
    for client, path in [*places(home, root), *own]:
        key = path.resolve() if path.exists() else path
        if key in seen:
            continue
        seen.add(key)
        if not path.is_file():
            if client == "mcp-notebook":
                problems.append(ConfigProblem(path, "listed in McpNotebook.config_files, but there is no such file"))
            continue
        found, wrong = formats.read(path, client, workspace=root)
        entries.extend(found)
        problems.extend(wrong)
    return Discovery(tuple(entries), tuple(problems), root)
