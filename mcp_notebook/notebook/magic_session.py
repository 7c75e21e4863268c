"""The session subcommands: `%mcp connect`, `ping`, `status`, `disconnect`."""

from __future__ import annotations

import statistics
import time

from ..api import connect as api
from ..api.options import DEFAULT_TIMEOUT, DEFAULTS
from ..api.targets import is_url
from ..base.errors import RequestTimeout
from ..session.health import Health
from .commands import CommandError, Parser, count, pick, seconds, subcommand


def _env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(text)
    return key, value


_env_pair.__name__ = "K=V pair"


CONNECT_USAGE = (
    "NAME URL [--header 'K: V']... [--bearer-token-env VAR] [--transport auto|http|sse] [--timeout S]\n"
    "  %mcp connect NAME [--env K=V]... [--timeout S] -- COMMAND ARGS...\n"
    "        both: [--era auto|legacy|modern] [--protocol-version V] [--probe-timeout S]"
)


@subcommand("connect", CONNECT_USAGE, "connect over HTTP, or start a server over stdio; a NAME in use is closed first")
def _connect(args: list[str]) -> api.Connection:
    if not args:
        raise CommandError("connect needs a name and a URL or a server command: %mcp connect NAME URL, or NAME -- COMMAND")
    options, command = (args[: args.index("--")], args[args.index("--") + 1 :]) if "--" in args else (args, [])
    parser = Parser("connect")
    parser.add_argument("name")
    parser.add_argument("url", nargs="?")
    parser.add_argument("--era", default="auto", choices=["auto", "legacy", "modern"])
    parser.add_argument("--probe-timeout", type=seconds, default=DEFAULTS.probe_timeout)
    parser.add_argument("--timeout", type=seconds, default=DEFAULT_TIMEOUT)
    parser.add_argument("--env", type=_env_pair, action="append", default=[])
    parser.add_argument("--protocol-version")
    parser.add_argument("--header", type=_header, action="append", default=[])
    parser.add_argument("--bearer-token-env", metavar="VAR")
    parser.add_argument("--transport", choices=["auto", "http", "sse"], default="auto")
    ns = parser.parse_args(options)
    if ns.url is not None and command:
        raise CommandError("give a URL or a server command after --, not both")
    if ns.url is not None and not is_url(ns.url):
        raise CommandError(f"{ns.url!r} is not an http(s) URL; to start a server, write its command after --")
    if ns.url is None and "--" not in args:
        raise CommandError("write the server command after --, e.g. %mcp connect demo -- python server.py")
    if ns.url is None and not command:
        raise CommandError("no server command after --, e.g. %mcp connect demo -- python server.py")
    http_only = {"header": ns.header, "bearer_token_env": ns.bearer_token_env, "transport": ns.transport != "auto"}
    if ns.url is None and any(http_only.values()):
        raise CommandError("--header, --bearer-token-env and --transport are for URLs, not server commands")
    if ns.url is not None and ns.env:
        raise CommandError("--env is for server commands, not URLs")
    conn = api.connect(
        ns.url or command,
        name=ns.name,
        era=ns.era,
        timeout=ns.timeout or None,
        env=dict(ns.env),
        headers=dict(ns.header),
        transport=ns.transport,
        bearer_token_env=ns.bearer_token_env,
        protocol_version=ns.protocol_version,
        probe_timeout=ns.probe_timeout,
    )
    server = conn.server_info or {}
    print(
        f"connected {conn.name!r}: {server.get('name', '?')} {server.get('version', '')} "
        f"over {conn.session.transport.kind}, {conn.era} protocol {conn.protocol_version} ({conn.session.era_source})"
    )
    return conn


def _header(text: str) -> tuple[str, str]:
    key, sep, value = text.partition(":")
    if not sep or not key.strip():
        raise ValueError(text)
    return key.strip(), value.strip()


_header.__name__ = "'Name: value' header"


@subcommand("ping", "[NAME] [-n COUNT] [-i SECONDS] [--timeout S]", "ping the server; prints each round-trip time and a summary, returns the times (s)")
def _ping(args: list[str]) -> list[float]:
    parser = Parser("ping")
    parser.add_argument("name", nargs="?")
    parser.add_argument("-n", "--count", type=count, default=1)
    parser.add_argument("-i", "--interval", type=seconds, default=1.0)
    parser.add_argument("--timeout", type=seconds)
    ns = parser.parse_args(args)
    conn = pick(ns.name)
    if conn.era == "modern":
        print(f"ping {conn.name}: the ping method was removed in 2026-07-28, so none is sent; each line is a "
              "liveness probe instead: the transport is up and a fresh server/discover came back")
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
        what = "liveness probe" if conn.era == "modern" else "ping"
        print(f"{what} {conn.name}: {rtt * 1000:.3f} ms")
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


@subcommand("status", "[NAME]", "state, protocol version, server, ping counters")
def _status(args: list[str]) -> None:
    parser = Parser("status")
    parser.add_argument("name", nargs="?")
    ns = parser.parse_args(args)
    if ns.name is None and not api.connections():
        print("no open connections; start one with %mcp connect NAME -- COMMAND")
        return
    targets = [pick(ns.name)] if ns.name or len(api.connections()) == 1 else list(api.connections().values())
    print("\n\n".join(format_health(conn.health) for conn in targets))


def format_health(health: Health) -> str:
    """A few readable lines about one connection."""
    server = health.server_info or {}
    rtt = f"{health.last_rtt * 1000:.3f} ms" if health.last_rtt is not None else "-"
    lines = [
        f"{health.name}: {health.state}",
        f"  protocol   {health.era} {health.protocol_version or '-'} over {health.transport} ({health.era_source or '-'})",
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


@subcommand("disconnect", "[NAME | --all]", "close a connection and stop its server")
def _disconnect(args: list[str]) -> None:
    parser = Parser("disconnect")
    parser.add_argument("name", nargs="?")
    parser.add_argument("--all", action="store_true")
    ns = parser.parse_args(args)
    if ns.all:
        names = sorted(api.connections())
        api.close_all()
        print(f"closed {', '.join(names)}" if names else "no open connections")
        return
    conn = pick(ns.name)
    conn.close()
    print(f"closed {conn.name!r}")
