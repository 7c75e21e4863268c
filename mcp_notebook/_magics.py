"""The `%mcp` line magic: a thin front end over the Python API.

User mistakes surface as IPython UsageErrors: one line, no traceback, and the cell
counts as failed so "run all" stops there.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import time
from typing import Any, NoReturn

from IPython.core import error as ipython_error
from IPython.core.magic import Magics, line_magic, magics_class

from . import _connection as api
from ._errors import McpNotebookError, RequestTimeout
from ._health import Health
from ._runtime import get_runtime

HELP = """\
%mcp: talk to Model Context Protocol servers from this notebook.

  %mcp connect NAME [--timeout S] [--env K=V]... [--protocol-version V] -- COMMAND ARGS...
        start a server over stdio and shake hands (a NAME in use is closed first)
  %mcp ping [NAME] [-n COUNT] [-i SECONDS] [--timeout S]
        ping the server; prints each round-trip time and a summary, returns the times (s)
  %mcp status [NAME]            state, protocol version, server, ping counters
  %mcp disconnect [NAME | --all]
        close a connection and stop its server
  %mcp help                     this text

NAME may be left out while exactly one connection is open. Server pings are answered
on a background thread at once, even while a cell is busy. The same things from Python:
mcp_notebook.connect(...), conn.ping(), conn.request(...), conn.health, conn.close().
"""


_Usage = ipython_error.UsageError  # IPython shows exactly this type as one line, no traceback


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        usage = " ".join(self.format_usage().split()).removeprefix("usage: ")
        raise _Usage(f"{message}; usage: {usage}")

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise _Usage(message or self.format_usage().strip())


def _parser(prog: str) -> _Parser:
    return _Parser(prog=f"%mcp {prog}", add_help=False)


def _positive_float(text: str) -> float:
    value = float(text)
    if value < 0:
        raise ValueError(text)
    return value


_positive_float.__name__ = "number of seconds"


def _count(text: str) -> int:
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


_count.__name__ = "count"


def _env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(text)
    return key, value


_env_pair.__name__ = "K=V pair"


def _connect(args: list[str]) -> api.Connection:
    if not args:
        raise _Usage("connect needs a name and a server command: %mcp connect NAME -- COMMAND ARGS...")
    if "--" not in args:
        raise _Usage("write the server command after --, e.g. %mcp connect demo -- python server.py")
    cut = args.index("--")
    options, command = args[:cut], args[cut + 1 :]
    parser = _parser("connect")
    parser.add_argument("name")
    parser.add_argument("--era", default="legacy", choices=["legacy"])
    parser.add_argument("--timeout", type=_positive_float, default=api.DEFAULT_TIMEOUT)
    parser.add_argument("--env", type=_env_pair, action="append", default=[])
    parser.add_argument("--protocol-version")
    ns = parser.parse_args(options)
    if not command:
        raise _Usage("no server command after --, e.g. %mcp connect demo -- python server.py")
    conn = api.connect(
        command,
        name=ns.name,
        era=ns.era,
        timeout=ns.timeout or None,
        env=dict(ns.env),
        protocol_version=ns.protocol_version,
    )
    server = conn.server_info or {}
    print(
        f"connected {conn.name!r}: {server.get('name', '?')} {server.get('version', '')} "
        f"over stdio, protocol {conn.protocol_version}"
    )
    return conn


def _ping(args: list[str]) -> list[float]:
    parser = _parser("ping")
    parser.add_argument("name", nargs="?")
    parser.add_argument("-n", "--count", type=_count, default=1)
    parser.add_argument("-i", "--interval", type=_positive_float, default=1.0)
    parser.add_argument("--timeout", type=_positive_float)
    ns = parser.parse_args(args)
    conn = _pick(ns.name)
    rtts: list[float] = []
    failures = 0
    for n in range(ns.count):
        if n:
            time.sleep(ns.interval)
        try:
            rtt = conn.ping(timeout=ns.timeout)
        except RequestTimeout as exc:
            failures += 1
            print(f"ping {conn.name}: {exc}")
            continue
        rtts.append(rtt)
        print(f"ping {conn.name}: {rtt * 1000:.3f} ms")
    if ns.count > 1 or failures:
        print(_summary(conn.name, ns.count, rtts))
    return rtts


def _summary(name: str, count: int, rtts: list[float]) -> str:
    lost = count - len(rtts)
    head = f"--- {name}: {count} pings, {len(rtts)} answered, {lost} lost"
    if not rtts:
        return head
    ms = [r * 1000 for r in rtts]
    return f"{head}; min/median/max = {min(ms):.3f}/{statistics.median(ms):.3f}/{max(ms):.3f} ms"


def _status(args: list[str]) -> None:
    parser = _parser("status")
    parser.add_argument("name", nargs="?")
    ns = parser.parse_args(args)
    if ns.name is None and not api.connections():
        print("no open connections; start one with %mcp connect NAME -- COMMAND")
        return
    targets = [_pick(ns.name)] if ns.name or len(api.connections()) == 1 else list(api.connections().values())
    print("\n\n".join(format_health(conn.health) for conn in targets))


def format_health(health: Health) -> str:
    """A few readable lines about one connection."""
    server = health.server_info or {}
    rtt = f"{health.last_rtt * 1000:.3f} ms" if health.last_rtt is not None else "-"
    lines = [
        f"{health.name}: {health.state}",
        f"  protocol   {health.era} {health.protocol_version or '-'} over {health.transport}",
        f"  server     {server.get('name', '-')} {server.get('version', '')}".rstrip(),
        f"  command    {health.endpoint}",
        f"  pings      {health.pings_sent} sent, {health.ping_failures} failed, last round trip {rtt}",
        f"  server pings {health.server_pings} received, {health.pongs_sent} answered, {health.pong_failures} pongs lost",
        f"  in flight  {health.requests_in_flight}; invalid frames {health.invalid_frames}",
    ]
    if health.closed_reason:
        lines.append(f"  closed     {health.closed_reason}")
    if health.stderr_tail:
        lines.append(f"  stderr     {health.stderr_tail[-1]}")
    return "\n".join(lines)


def _disconnect(args: list[str]) -> None:
    parser = _parser("disconnect")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--all", action="store_true")
    ns = parser.parse_args(args)
    if ns.all:
        names = sorted(api.connections())
        api.close_all()
        print(f"closed {', '.join(names)}" if names else "no open connections")
        return
    conn = _pick(ns.name)
    conn.close()
    print(f"closed {conn.name!r}")


def _pick(name: str | None) -> api.Connection:
    """The named connection, or the only open one."""
    if name is not None:
        return api.get_connection(name)
    open_ = api.connections()
    if len(open_) == 1:
        return next(iter(open_.values()))
    if not open_:
        raise _Usage("no open connection; start one with %mcp connect NAME -- COMMAND")
    raise _Usage(f"several connections are open ({', '.join(sorted(open_))}); name one")


COMMANDS = {"connect": _connect, "ping": _ping, "status": _status, "disconnect": _disconnect}


def run_line(line: str) -> Any:
    """Run one `%mcp` line; user mistakes raise IPython's UsageError."""
    try:
        args = shlex.split(line)
    except ValueError as exc:
        raise _Usage(f"cannot parse the line: {exc}") from None
    if not args or args[0] in ("help", "-h", "--help"):
        print(HELP)
        return None
    command = COMMANDS.get(args[0])
    if command is None:
        raise _Usage(f"unknown subcommand {args[0]!r}; try: {', '.join([*COMMANDS, 'help'])}")
    try:
        return command(args[1:])
    except McpNotebookError as exc:
        raise _Usage(str(exc)) from None


@magics_class
class McpMagics(Magics):
    @line_magic
    def mcp(self, line: str) -> Any:
        """Talk to MCP servers; `%mcp help` lists the subcommands."""
        return run_line(line)


def load(ipython: Any) -> None:
    ipython.register_magics(McpMagics)


def unload(ipython: Any) -> None:
    api.close_all()
    get_runtime().stop()


__all__ = ["HELP", "McpMagics", "format_health", "load", "run_line", "unload"]
