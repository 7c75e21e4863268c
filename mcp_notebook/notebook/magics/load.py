"""`%mcp load`: a load test of a server (`mcp_notebook.load`) as a subcommand.

The server is a URL (`--url`) or a command after `--`; the workload a tool with its
`key=value` arguments (each value read as JSON where it is JSON, else as a string) or
`--cassette PATH`. The live tables show while it runs; the line returns the `LoadReport`.
"""

from __future__ import annotations

import json
from argparse import Namespace
from typing import Any

from .commands import CommandError, after_dashes, arg, count, key_values, pairs, seconds, subcommand
from .session import _header


@subcommand(
    "load",
    "load-test a server: SESSIONS sessions calling TOOL (or replaying a cassette) for S seconds or N calls; returns the report",
    arg("tool", nargs="?", help="the tool each session calls (or --cassette)"),
    pairs("key=value", "the tool's arguments; a value that is JSON is read as JSON, others are strings"),
    arg("--url", help="the server's http(s) URL (or a command after --)"),
    arg("--cassette", metavar="PATH", help="replay this cassette's requests instead of calling TOOL"),
    arg("--sessions", type=count, default=1, metavar="N", help="sessions at once (default 1)"),
    arg("--duration", type=seconds, metavar="S", help="stop after S seconds"),
    arg("--calls", type=count, metavar="N", help="stop after N calls in all"),
    arg("--rate", type=seconds, metavar="R", help="at most R calls/s overall"),
    arg("--ramp", type=seconds, metavar="S", help="open the sessions over S seconds"),
    arg("--processes", type=count, metavar="N", help="on a local Dask cluster of N worker processes"),
    arg("--cluster", metavar="ADDRESS", help="on the Dask cluster at ADDRESS (tcp://scheduler:8786)"),
    arg("--era", default="auto", choices=["auto", "legacy", "modern"], help="the protocol era; auto probes (default)"),
    arg("--header", type=_header, action="append", default=[], metavar="'K: V'", help="URLs: an HTTP header"),
    after_dashes("command", "COMMAND", "the server command (stdio): one process per session"),
    bare="load needs a server (--url URL, or a command after --) and a TOOL or --cassette: "
    "%mcp load echo text=hi --sessions 8 --duration 5 -- python -m mcp_notebook.demo_server",
)
def _load(ns: Namespace) -> Any:
    if (ns.url is None) == (not ns.command):
        raise CommandError("give the server as --url URL or as a command after --, one of them")
    if (ns.tool is None) == (ns.cassette is None):
        raise CommandError("give a TOOL (with its key=value arguments) or --cassette PATH, one of them")
    if ns.cassette is not None and ns.pairs:
        raise CommandError("key=value arguments are a tool's; a cassette brings its own")
    workload: Any = ns.cassette if ns.cassette is not None else {"tool": ns.tool, "arguments": _arguments(ns.pairs)}
    options: dict[str, Any] = {"era": ns.era}
    if ns.header:
        options["headers"] = dict(ns.header)
    from ...workloads.run import load  # the load test comes with its first use, not with the magics

    return load(
        ns.url if ns.url is not None else ns.command,
        workload,
        sessions=ns.sessions,
        duration=ns.duration,
        calls=ns.calls,
        rate=ns.rate,
        ramp=ns.ramp,
        processes=ns.processes,
        cluster=ns.cluster,
        **options,
    )


def _arguments(words: list[str]) -> dict[str, Any]:
    parsed: dict[str, Any] = {}
    for key, text in key_values(words).items():
        try:
            parsed[key] = json.loads(text)
        except ValueError:
            parsed[key] = text
    return parsed
