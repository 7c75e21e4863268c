"""Configured servers read from every client's file, each in that client's real format.

The fixtures are written into a fresh HOME and project folder (`config_home`): the real
user's files are never read. Each is shaped as its client's documentation shows, cited above it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcp_notebook.api.connecting.server_listing import configured_servers
from mcp_notebook.base.errors import UsageError
from mcp_notebook.configs.discovery import discover

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fixtures sit where each client looks on Linux")

# https://modelcontextprotocol.io/quickstart/user (Claude Desktop: mcpServers, command/args/env)
CLAUDE_DESKTOP = {
    "mcpServers": {
        "filesystem": {
            "command": "npx",
            "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/username/Desktop"],
        },
        "github": {
            "command": "docker",
            "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],
            "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret_value_1234"},
        },
    }
}
# https://code.claude.com/docs/en/mcp (Claude Code: ~/.claude.json user scope at the top level,
# local scope under projects.<path>; type http with headers; ${VAR:-default} expansion)
CLAUDE_CODE_USER = {
    "numStartups": 12,
    "mcpServers": {"notion": {"type": "http", "url": "https://mcp.notion.com/mcp"}},
    "projects": {
        "PROJECT": {
            "mcpServers": {
                "airtable": {
                    "type": "stdio",
                    "command": "npx",
                    "args": ["-y", "airtable-mcp-server"],
                    "env": {"AIRTABLE_API_KEY": "${AIRTABLE_KEY:-none}"},
                }
            }
        },
        "/somewhere/else": {"mcpServers": {"elsewhere": {"command": "true"}}},
    },
}
# https://code.claude.com/docs/en/mcp (project scope: .mcp.json at the project root)
CLAUDE_CODE_PROJECT = {
    "mcpServers": {
        "api-server": {
            "type": "sse",
            "url": "${API_BASE_URL:-https://api.example.com}/sse",
            "headers": {"Authorization": "Bearer ${API_KEY}"},
        },
    }
}
# https://cursor.com/docs/mcp (Cursor: ~/.cursor/mcp.json and .cursor/mcp.json; url for remote
# servers; ${env:NAME}, ${userHome}, ${workspaceFolder})
CURSOR_USER = {
    "mcpServers": {
        "userjot": {"url": "https://api.userjot.com/v1/mcp", "headers": {"Authorization": "Bearer ${env:USERJOT_API_TOKEN}"}},
    }
}
CURSOR_PROJECT = {
    "mcpServers": {
        "local-tools": {"command": "python", "args": ["${workspaceFolder}/tools.py"], "env": {"HOME_DIR": "${userHome}"}},
    }
}
# https://code.visualstudio.com/docs/copilot/reference/mcp-configuration (VS Code: "servers" with
# "type", "inputs" with promptString and password; JSONC, so comments and trailing commas)
VSCODE_PROJECT = """// .vscode/mcp.json
{
  "inputs": [
    {"type": "promptString", "id": "perplexity-key", "description": "Perplexity API Key", "password": true},
  ],
  "servers": {
    "perplexity": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "server-perplexity-ask"],
      "env": {"PERPLEXITY_API_KEY": "${input:perplexity-key}"}, // asked when it starts
    },
    "fetch": {"type": "http", "url": "https://mcp.example.com/mcp"},
  },
}
"""
VSCODE_SETTINGS = """{
  "editor.fontSize": 14,
  /* MCP servers in the user settings, as VS Code wrote them before mcp.json */
  "mcp": {
    "servers": {"memory": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}},
  },
}
"""
# https://geminicli.com/docs/tools/mcp-server/ (Gemini CLI: httpUrl is Streamable HTTP, url is SSE)
GEMINI = {
    "theme": "Dracula",
    "mcpServers": {
        "github": {"httpUrl": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "token"}, "timeout": 5000},
        "events": {"url": "http://localhost:8080/sse"},
        "git": {"command": "uvx", "args": ["mcp-server-git"], "cwd": "./repo"},
    },
}
# https://docs.windsurf.com/windsurf/cascade/mcp (Windsurf: serverUrl for remote servers)
WINDSURF = {
    "mcpServers": {
        "zapier": {"serverUrl": "https://actions.zapier.com/mcp/sk-zap-12345/sse?api_key=abcdef"},
        "old": {"command": "npx", "args": ["-y", "old-server"], "disabled": True},
    }
}


def write(path: Path, content: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2))
    return path


@pytest.fixture
def everywhere(config_home: tuple[Path, Path]) -> tuple[Path, Path]:
    home, project = config_home
    write(home / ".config/Claude/claude_desktop_config.json", CLAUDE_DESKTOP)
    write(home / ".claude.json", json.loads(json.dumps(CLAUDE_CODE_USER).replace("PROJECT", str(project))))
    write(project / ".mcp.json", CLAUDE_CODE_PROJECT)
    write(home / ".cursor/mcp.json", CURSOR_USER)
    write(project / ".cursor/mcp.json", CURSOR_PROJECT)
    write(project / ".vscode/mcp.json", VSCODE_PROJECT)
    write(home / ".config/Code/User/settings.json", VSCODE_SETTINGS)
    write(home / ".gemini/settings.json", GEMINI)
    write(home / ".codeium/windsurf/mcp_config.json", WINDSURF)
    return home, project


def by_name(found) -> dict:
    return {(e.client, e.name): e for e in found.entries}


def test_every_client_is_read_in_its_own_format(everywhere):
    home, project = everywhere
    found = discover()
    entries = by_name(found)
    assert not found.problems
    assert set(entries) == {
        ("claude-desktop", "filesystem"), ("claude-desktop", "github"),
        ("claude-code", "notion"), ("claude-code", "airtable"), ("claude-code", "api-server"),
        ("cursor", "userjot"), ("cursor", "local-tools"),
        ("vscode", "perplexity"), ("vscode", "fetch"), ("vscode-settings", "memory"),
        ("gemini", "github"), ("gemini", "events"), ("gemini", "git"),
        ("windsurf", "zapier"), ("windsurf", "old"),
    }  # fmt: skip
    assert entries["claude-code", "airtable"].scope == str(project)  # only this project's local scope
    assert entries["claude-code", "notion"].transport == "http"
    assert entries["claude-code", "api-server"].transport == "sse"
    assert entries["gemini", "github"].transport == "http" and entries["gemini", "events"].transport == "sse"
    assert entries["windsurf", "zapier"].url.startswith("https://actions.zapier.com/")
    assert entries["windsurf", "old"].disabled
    assert entries["vscode", "perplexity"].inputs[0]["password"] is True
    assert entries["claude-desktop", "filesystem"].source == home / ".config/Claude/claude_desktop_config.json"


def test_the_listing_shows_names_files_transports_and_no_secret(everywhere):
    listing = configured_servers()
    text, html = repr(listing), listing._repr_mimebundle_()["text/html"]
    for shown in (text, html):
        assert "ghp_secret_value_1234" not in shown  # an env value: never shown
        assert "sk-zap-12345" not in shown or "abcdef" not in shown
        assert "abcdef" not in shown  # a credential-looking query value
        assert "Bearer" not in shown  # header values are never shown
    assert "~/.config/Claude/claude_desktop_config.json" in text and "./.vscode/mcp.json" in text and "mcp-server-git" in text
    row = next(line for line in text.splitlines() if line.startswith("zapier"))
    assert "Windsurf" in row and "auto" in row and "no" in row.split()[-1]
    assert len(listing) == 15 and not listing.problems


def test_a_broken_file_is_one_line_and_the_others_still_load(everywhere):
    home, project = everywhere
    write(home / ".cursor/mcp.json", '{"mcpServers": {"a": {"command": "x",}}')  # Cursor's file is JSON: no trailing comma
    write(project / "mcp.json", {"mcpServers": {"ok": {"command": "python"}, "bad": {"args": ["no command"]}}})
    write(home / ".gemini/settings.json", {"mcpServers": ["not", "an", "object"]})
    write(home / ".codeium/windsurf/mcp_config.json", [1, 2])
    write(project / ".vscode/mcp.json", '{"servers": {"x": {"type": "websocket", "url": "ws://x"}}}')
    listing = configured_servers()
    lines = repr(listing).splitlines()
    problems = [line for line in lines if line.startswith("cannot read")]
    assert len(problems) == 5, problems
    assert any(".cursor/mcp.json: not valid JSON:" in p for p in problems)
    assert any("mcp.json: server 'bad': no \"command\" and no URL" in p for p in problems)
    assert any('.gemini/settings.json: "mcpServers" should be an object' in p for p in problems)
    assert any("mcp_config.json: expected a JSON object at the top, found a list" in p for p in problems)
    assert any("server 'x': unknown type 'websocket'" in p for p in problems)
    names = {e.name for e in listing}
    assert {"ok", "filesystem", "notion", "memory", "local-tools"} <= names  # the rest still load


def test_our_own_files_come_from_config_files(config_home, monkeypatch):
    from mcp_notebook.api.connecting.settings import defaults

    home, _ = config_home
    ours = write(home / "team-servers.json", {"mcpServers": {"team": {"command": "python", "args": ["-m", "team"]}}})
    monkeypatch.setattr(defaults, "config_files", [str(ours), str(home / "missing.json")])
    listing = configured_servers()
    assert [(e.name, e.client) for e in listing] == [("team", "mcp-notebook")]
    assert [p.problem for p in listing.problems] == ["listed in McpNotebook.config_files, but there is no such file"]


def test_names_are_found_and_ambiguity_is_one_line(everywhere):
    found = discover()
    assert found.named("perplexity").client == "vscode"
    with pytest.raises(UsageError, match=r"'github' is configured differently in several files .*choose one with --from"):
        found.named("github")
    assert found.named("github", "gemini").transport == "http"
    assert found.named("github", str(Path.home() / ".config/Claude/claude_desktop_config.json")).command == "docker"
    with pytest.raises(UsageError, match=r"no configured server named 'nope' \(configured: "):
        found.named("nope")
