"""`%mcp tap NAME`: open (or show) the tap of that name, which watches another client's sessions
(`mcp_notebook.tap`); `--upstream URL` makes it an HTTP reverse proxy, `--close` closes it.
The tap is the line's value, so it shows once: where it listens and the entries to paste.

`%mcp trace`, `health` and `violations` take a tap's name as they take a connection's
(`commands.tap_of`: a name no connection has).
"""

from __future__ import annotations

from argparse import Namespace
from typing import Any

from ...taps import registry
from .commands import CommandError, after_dashes, arg, flag, subcommand


@subcommand(
    "tap",
    "watch another client (Claude Code, Cursor, an agent) talk to a server: shows the entry to paste into its "
    "configuration, then %mcp trace/health/violations NAME read what it saw (--upstream: an HTTP server, via a proxy)",
    arg("name", help="the tap's name (a configured server's name wraps that server)"),
    arg("--upstream", metavar="URL", help="an HTTP MCP server: the tap is a proxy to it on 127.0.0.1 (configure tap.url)"),
    flag("--close", help="close the tap of this name"),
    after_dashes("command", "COMMAND ARGS...", "the server's command, for the entries to paste (stdio)"),
    epilog="Python: tap = mcp_notebook.tap(NAME); tap.command(argv), tap.entry('cursor'), tap.wait(frames=N).",
)
def _tap(ns: Namespace) -> Any:
    if ns.close:
        if ns.upstream or ns.command:
            raise CommandError("--close takes the tap's name only")
        found = registry.find(ns.name)
        if found is None:
            raise CommandError(f"no open tap named {ns.name!r} (open: {', '.join(registry.names()) or 'none'})")
        found.close()
        print(f"closed tap {ns.name!r}")
        return None
    from ...taps.tap import tap

    return tap(ns.name, upstream=ns.upstream, command=ns.command or None)
