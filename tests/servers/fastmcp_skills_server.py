"""Test peer: FastMCP (4.x) serving a directory of skills through its Skills extension
(`io.modelcontextprotocol/skills`, SEP-2640) over Streamable HTTP, files read live from disk
(so a test can change one after the listing, as a skill updated meanwhile would be).

Usage::

    python fastmcp_skills_server.py SKILLS_DIR PORT     # binds 127.0.0.1
"""

from __future__ import annotations

import sys
from pathlib import Path

from fastmcp import FastMCP
from fastmcp.server.providers.skills import SkillsDirectoryProvider
from fastmcp.skills.extension import SkillsExtension


def main() -> None:
    root, port = Path(sys.argv[1]), int(sys.argv[2])
    mcp = FastMCP("skills-test-server")
    provider = SkillsDirectoryProvider(roots=root, experimental_skills=True)
    mcp.add_provider(provider)
    mcp.add_extension(SkillsExtension(providers=[provider]))
    mcp.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="WARNING")


if __name__ == "__main__":
    main()
