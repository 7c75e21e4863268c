"""`%mcp compare FILE TARGET` (or `-- COMMAND`): a cassette asked again of a live server, the
differences shown; a front end over `mcp_notebook.compare()`."""

from __future__ import annotations

from argparse import Namespace

from ...api.cassettes.compare import compare
from . import show
from .commands import CommandError, after_dashes, arg, subcommand, timeout


@subcommand(
    "compare",
    "ask a live server what a saved session (conn.trace.to_jsonl) asked; show every answer that differs",
    arg("file", metavar="FILE", help="the cassette"),
    arg("url", nargs="?", metavar="URL", help="the live server's URL (or give its command after --)"),
    arg("--ignore", action="append", default=[], metavar="FIELD", help="also ignore this key name or JSON pointer"),
    arg("--junit", metavar="PATH", help="also write a JUnit-style XML summary to PATH"),
    timeout("seconds per request (default 30)", 30.0),
    after_dashes("command", "COMMAND", "the live server's command"),
)
def _compare(ns: Namespace) -> None:
    if bool(ns.url) == bool(ns.command):
        raise CommandError("give the live server as a URL or as a command after --, one of them")
    comparison = compare(ns.file, ns.url or ns.command, also_ignore=ns.ignore, timeout=ns.timeout)
    if ns.junit:
        comparison.to_junit(ns.junit)
    if show.frontend():
        show.display(comparison)
    else:
        print(comparison)
