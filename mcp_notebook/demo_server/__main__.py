"""`python -m mcp_notebook.demo_server`: run the demo MCP server (see the package docstring)."""

from __future__ import annotations

import argparse
from functools import partial

import anyio

from ._app import ERAS, App
from ._faults import SPECS, FaultError, Faults
from ._http import serve_http
from ._oauth_settings import add_arguments, from_args
from ._stdio import serve_stdio

DESCRIPTION = """\
A demo MCP server for learning and testing MCP clients: tools (echo, add, slow, image,
log, bump, ask_name, summarize, drop_stream, faults), resources and templates under
demo://, prompts with argument completion, subscriptions and logging, over stdio or
Streamable HTTP (127.0.0.1 only), in the legacy (initialize, 2024-11-05 .. 2025-11-25)
or modern (2026-07-28, stateless) era.
"""

EPILOG = """\
eras:
  legacy  initialize handshake, sessions (Mcp-Session-Id on HTTP), ping both ways
  modern  no initialize: every request carries _meta protocolVersion; server/discover;
          no ping (-32601), no server requests (input_required instead),
          subscriptions/listen; errors -32602 / -32020 / -32021 / -32022
  both    served by how the client opens: initialize -> legacy, a request with modern
          _meta -> modern (per process on stdio, per session / request on HTTP)

fault switches:
  Settings (--pong-delay-ms, --ignore-pings, --drop-percent, --seed) hold until
  changed with the `faults` tool. Actions (--crash, --expire-session, --malformed,
  --flood) happen once: given here they are armed and happen during the first
  tools/call, as if that call had asked for them; through the `faults` tool they
  happen during that call. The `faults` tool takes the same names with underscores
  and returns the settings, the counters (pings, pongs, drops, cancellations) and
  what it did.

  crash exits with code 3 after a line on stderr. drop_percent is drawn from an RNG
  seeded with --seed (default 0), so a run is repeatable.

HTTP prints "listening on http://127.0.0.1:PORT/mcp" to stderr once bound.
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m mcp_notebook.demo_server",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio", help="default: stdio")
    parser.add_argument("--port", type=int, default=0, help="HTTP port on 127.0.0.1; 0 (default) picks a free one")
    parser.add_argument("--era", choices=ERAS, default="legacy", help="default: legacy")
    parser.add_argument(
        "--ping-interval",
        type=float,
        default=None,
        metavar="SECONDS",
        help="legacy: ping the client every SECONDS once initialized (default: never); stderr gets a line per pong",
    )
    parser.add_argument(
        "--exit-with-stdin",
        action="store_true",
        help="HTTP: exit when stdin closes, so the server does not outlive its parent (start_http() sets it)",
    )
    add_arguments(parser)
    group = parser.add_argument_group("fault switches")
    for spec in SPECS:
        if spec.kind is bool:
            group.add_argument(spec.flag, action="store_true", help=spec.help.replace("%", "%%"))
        else:
            group.add_argument(spec.flag, type=int, default=None, metavar="N", help=spec.help.replace("%", "%%"))
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    values = {spec.name: getattr(args, spec.name) for spec in SPECS}
    try:
        faults = Faults(**{name: value for name, value in values.items() if value is not None and value is not False})
        oauth = from_args(args)
    except (FaultError, ValueError) as exc:
        parser.error(str(exc))
    app = App(args.era, faults, args.ping_interval)
    try:
        if args.transport == "stdio":
            anyio.run(serve_stdio, app)
        else:
            anyio.run(partial(serve_http, app, args.port, args.exit_with_stdin, oauth))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
