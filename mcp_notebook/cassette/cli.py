"""`python -m mcp_notebook.replay PATH`: a cassette served as an MCP server (stdio, or `--http`)."""

from __future__ import annotations

import argparse
from functools import partial

import anyio

from .http import serve_http
from .matching import MATCH_MODES
from .player import Player, log
from .stdio import serve_stdio
from .tape import CassetteError, load

DESCRIPTION = """\
Serve a saved session (conn.trace.to_jsonl(PATH)) as an MCP server: each request is answered
with the recorded reply, matched by method and params (--match), and the server requests and
notifications recorded around it are sent where they came. No server and no network needed.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m mcp_notebook.replay", description=DESCRIPTION)
    parser.add_argument("path", help="the cassette: a trace saved with Trace.to_jsonl")
    parser.add_argument("--http", action="store_true", help="serve Streamable HTTP on 127.0.0.1 instead of stdio")
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1; 0 (default) picks a free one")
    parser.add_argument(
        "--match",
        choices=MATCH_MODES,
        default="params",
        help="params: same method and params (default); method: the next of the method; order: the next recorded request",
    )
    parser.add_argument("--exit-with-stdin", action="store_true", help="HTTP: exit when stdin closes")
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        tape = load(args.path)
    except CassetteError as exc:
        parser.error(str(exc))
    player = Player(tape, args.match)
    if tape.clipped:
        log(f"{tape.clipped} frame(s) were too large for the trace to keep whole: they replay clipped")
    try:
        if args.http:
            anyio.run(partial(serve_http, player, args.port, args.exit_with_stdin))
        else:
            anyio.run(serve_stdio, player)
    except KeyboardInterrupt:
        pass
    return 0
