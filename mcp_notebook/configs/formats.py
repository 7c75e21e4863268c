"""Reading one client's configuration file into `ServerEntry`s, with that format's quirks.

Every client keeps a map of server names to entries, under a key of its own:

- `mcpServers`: Claude Desktop, Claude Code (`.mcp.json`; `~/.claude.json` at its top level and
  per project under `projects.<path>`), Cursor, Windsurf, Gemini CLI, a project's `mcp.json`
  and our own files. Windsurf names a URL `serverUrl`; Gemini CLI's `httpUrl` is Streamable HTTP
  and its `url` is the old HTTP+SSE; Claude Code and Cursor say `type` (`http`, `sse`, `stdio`).
- `servers` with `inputs` beside it: VS Code's `.vscode/mcp.json`, and the `mcp` section of
  its user `settings.json`. VS Code's files are JSONC (comments, trailing commas): read with
  `json5`, a well-kept parser of a superset of it.

A file that cannot be read, or is not shaped as its client writes it, is one `ConfigProblem`;
an entry that names neither a command nor a URL is one too, and the file's other entries load.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import json5

from .entries import HTTP, SSE, STDIO, ConfigProblem, ServerEntry

Found = tuple[list[ServerEntry], list[ConfigProblem]]

JSONC_CLIENTS = ("vscode", "vscode-settings")
TYPES = {"stdio": STDIO, "http": HTTP, "streamable-http": HTTP, "streamablehttp": HTTP, "sse": SSE}
# Client -> the fields that hold a URL, and the transport each means ("auto": the client probes).
URL_FIELDS: dict[str, tuple[tuple[str, str], ...]] = {
    "gemini": (("httpUrl", HTTP), ("url", SSE)),
    "windsurf": (("serverUrl", "auto"), ("url", "auto")),
}
DEFAULT_URL_FIELDS = (("url", "auto"),)
# Client labels as listings show them (the `--from` option takes these too).
LABELS = {
    "claude-desktop": "Claude Desktop",
    "claude-code": "Claude Code",
    "cursor": "Cursor",
    "vscode": "VS Code",
    "vscode-settings": "VS Code",
    "gemini": "Gemini CLI",
    "windsurf": "Windsurf",
    "project": "project mcp.json",
    "mcp-notebook": "mcp-notebook",
}


def read(path: Path, client: str, *, workspace: Path | None = None) -> Found:
    """The entries of one file, or the problems that kept them out."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [ConfigProblem(path, f"cannot read it: {getattr(exc, 'strerror', None) or exc}")]
    if not text.strip():
        return [], []  # an empty file is a client's "nothing configured yet"
    try:
        root = json5.loads(text) if client in JSONC_CLIENTS else json.loads(text)
    except ValueError as exc:
        return [], [ConfigProblem(path, f"not valid {'JSONC' if client in JSONC_CLIENTS else 'JSON'}: {_one_line(exc)}")]
    if not isinstance(root, dict):
        return [], [ConfigProblem(path, f"expected a JSON object at the top, found {_kind(root)}")]
    return _sections(path, client, root, workspace)


def _sections(path: Path, client: str, root: dict[str, Any], workspace: Path | None) -> Found:
    """The server maps of a file, each with its inputs and scope, per the client's layout."""
    entries: list[ServerEntry] = []
    problems: list[ConfigProblem] = []

    def take(servers: Any, key: str, inputs: Any = None, scope: str | None = None) -> None:
        found, wrong = parse_servers(path, client, servers, key=key, inputs=inputs, scope=scope)
        entries.extend(found)
        problems.extend(wrong)

    if client == "vscode":
        take(root.get("servers"), "servers", root.get("inputs"))
    elif client == "vscode-settings":
        section = root.get("mcp")
        if isinstance(section, dict):
            take(section.get("servers"), "mcp.servers", section.get("inputs"))
        elif section is not None:
            problems.append(ConfigProblem(path, f'"mcp" should be an object, found {_kind(section)}'))
    elif client == "claude-code-user":
        take(root.get("mcpServers"), "mcpServers")
        projects = root.get("projects")
        for project, settings in projects.items() if isinstance(projects, dict) else []:
            if workspace is not None and _same_dir(project, workspace) and isinstance(settings, dict):
                take(settings.get("mcpServers"), f"projects.{project}.mcpServers", scope=project)
    elif "mcpServers" in root or "servers" not in root:
        take(root.get("mcpServers"), "mcpServers")
    else:  # a project mcp.json written in VS Code's shape
        take(root.get("servers"), "servers", root.get("inputs"))
    return entries, problems


def parse_servers(path: Path, client: str, servers: Any, *, key: str, inputs: Any = None, scope: str | None = None) -> Found:
    """Entries from one map of server names to definitions (None: the file configures none)."""
    if servers is None:
        return [], []
    if not isinstance(servers, dict):
        return [], [ConfigProblem(path, f'"{key}" should be an object of servers by name, found {_kind(servers)}')]
    shared_inputs = tuple(i for i in inputs if isinstance(i, dict)) if isinstance(inputs, list) else ()
    label = "claude-code" if client == "claude-code-user" else client
    entries, problems = [], []
    for name, spec in servers.items():
        try:
            entries.append(_entry(path, label, str(name), spec, shared_inputs, scope))
        except ValueError as exc:
            problems.append(ConfigProblem(path, f"server {name!r}: {exc}"))
    return entries, problems


def _entry(path: Path, client: str, name: str, spec: Any, inputs: tuple[dict[str, Any], ...], scope: str | None) -> ServerEntry:
    if not isinstance(spec, dict):
        raise ValueError(f"expected an object, found {_kind(spec)}")
    declared = spec.get("type") or spec.get("transport")
    if declared is not None and (not isinstance(declared, str) or declared.lower() not in TYPES):
        raise ValueError(f"unknown type {declared!r} (expected stdio, http or sse)")
    kind = TYPES[declared.lower()] if isinstance(declared, str) else None
    disabled = spec.get("disabled") is True or spec.get("enabled") is False
    common = ServerEntry(name, client, path, STDIO, inputs=inputs, scope=scope, disabled=disabled)
    command = spec.get("command")
    url, url_kind = next(
        ((spec[f], t) for f, t in URL_FIELDS.get(client, DEFAULT_URL_FIELDS) if spec.get(f) is not None), (None, "auto")
    )
    if command is not None and url is not None:
        raise ValueError("names both a command and a URL")
    if command is not None:
        if not isinstance(command, str) or not command.strip():
            raise ValueError('"command" should be a non-empty string')
        if kind not in (None, STDIO):
            raise ValueError(f'type {declared!r} needs a URL, not a "command"')
        cwd = spec.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise ValueError('"cwd" should be a string')
        return replace(common, command=command, args=_strings(spec, "args"), env=_pairs(spec, "env"), cwd=cwd)
    if url is not None:
        if not isinstance(url, str) or not url.strip():
            raise ValueError("the URL should be a non-empty string")
        if kind == STDIO:
            raise ValueError('type "stdio" needs a "command", not a URL')
        return replace(common, transport=kind or url_kind, url=url.strip(), headers=_pairs(spec, "headers"))
    fields = ", ".join(f'"{f}"' for f, _ in URL_FIELDS.get(client, DEFAULT_URL_FIELDS))
    raise ValueError(f'no "command" and no URL ({fields})')


def _strings(spec: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = spec.get(key)
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise ValueError(f'"{key}" should be a list of strings')
    return tuple(str(v) for v in value)


def _pairs(spec: Mapping[str, Any], key: str) -> tuple[tuple[str, str], ...]:
    value = spec.get(key)
    if value is None:
        return ()
    if not isinstance(value, dict):
        raise ValueError(f'"{key}" should be an object of names to values')
    bad = [k for k, v in value.items() if not isinstance(v, (str, int, float)) or isinstance(v, bool)]
    if bad:
        raise ValueError(f'"{key}" value of {bad[0]!r} should be a string')
    return tuple((str(k), str(v)) for k, v in value.items())


def _same_dir(project: str, workspace: Path) -> bool:
    try:
        return Path(project).expanduser().resolve() == workspace.resolve()
    except (OSError, ValueError):
        return False


def _kind(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", type(None): "null"}.get(
        type(value), "a number"
    )


def _one_line(exc: Exception) -> str:
    return " ".join(str(exc).split())
