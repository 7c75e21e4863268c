"""The session subcommands: `%mcp connect`, `ping`, `status`, `disconnect`.

`connect NAME` names a new connection (with no URL and no command: the configured server of
that name, `%mcp servers`); the others take the connection as every subcommand does
(`commands.connection`), and as their first word too.
"""

from __future__ import annotations

import os
import time
import weakref
from argparse import Namespace
from pathlib import Path
from typing import Any

from ...api.connecting import connect as api
from ...api.connecting.options import DEFAULT_TIMEOUT, DEFAULTS
from ...api.connecting.server_listing import connect_all
from ...api.connecting.targets import is_url
from ...api.connection import Connection
from ...auth.config import OAuth
from ...base.errors import RequestTimeout, UsageError
from ...base.plural import counted
from ...base.text import one_line
from ...session import health_view
from ...session.era import ERA_CHOICES
from ...session.health import Health
from ..render import pings
from ..render.pings import PingTimes
from .commands import (
    CommandError,
    after_dashes,
    arg,
    connection,
    connection_of,
    connections_of,
    count,
    flag,
    seconds,
    subcommand,
    timeout,
)


def _env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise ValueError(text)
    return key, value


_env_pair.__name__ = "K=V pair"


def _header(text: str) -> tuple[str, str]:
    key, sep, value = text.partition(":")
    if not sep or not key.strip():
        raise ValueError(text)
    return key.strip(), value.strip()


_header.__name__ = "'Name: value' header"


URL_ONLY = "for URLs, not server commands"


@subcommand(
    "connect",
    "connect over HTTP, or start a server over stdio, or (NAME alone) connect to the configured server of that name "
    "(%mcp servers); a NAME in use is closed first",
    arg("name", nargs="?", help="the new connection's name; alone, the configured server of that name"),
    arg("url", nargs="?", help="an http(s) URL to connect to; or give a server command after --"),
    arg("--era", default="auto", choices=ERA_CHOICES, help="the protocol era; auto probes (default)"),
    arg("--protocol-version", metavar="V", help="the protocol version to ask for"),
    arg("--probe-timeout", type=seconds, metavar="S", default=DEFAULTS.probe_timeout, help="how long --era auto probes"),
    timeout("how long each request may take; 0: no limit", default=DEFAULT_TIMEOUT),
    arg("--env", type=_env_pair, action="append", default=[], metavar="K=V", help="server commands: an environment variable"),
    arg("--header", type=_header, action="append", default=[], metavar="'K: V'", help=f"an HTTP header, {URL_ONLY}"),
    arg("--bearer-token-env", metavar="VAR", help=f"send the token in $VAR as Authorization: Bearer, {URL_ONLY}"),
    arg("--transport", choices=["auto", "http", "sse"], default="auto", help=f"the HTTP transport, {URL_ONLY}"),
    arg(
        "--proxy", metavar="URL", help=f"send HTTP requests through this proxy ('' for none; default: HTTP(S)_PROXY), {URL_ONLY}"
    ),
    arg("--cacert", metavar="PEM", help=f"trust the CA certificates in this file (default: the system's), {URL_ONLY}"),
    arg(
        "--from", dest="from_file", metavar="FILE", help="a configured server: the file (or client, e.g. cursor) to take it from"
    ),
    flag(
        "--consent",
        help="a configured command, or a URL sent values from this machine: go ahead without asking (read it in %%mcp servers)",
    ),
    flag("--all", help="connect to every configured server (of --from FILE), each asking for consent on its own"),
    arg(
        "--auth",
        choices=["auto", "none", "device"],
        default="auto",
        help="OAuth: authorize when the server asks (auto), with a code to enter on any device (device), or never",
    ),
    arg("--client-id", metavar="ID", help="OAuth: a client registered beforehand with the authorization server"),
    arg("--client-secret-env", metavar="VAR", help="OAuth: the environment variable holding that client's secret"),
    arg("--client-metadata-url", metavar="URL", help="OAuth: this client's Client ID Metadata Document (https)"),
    arg("--private-key-file", metavar="PEM", help="OAuth: sign client credentials JWTs with this key (private_key_jwt)"),
    arg("--scope", action="append", metavar="SCOPE", help="OAuth: ask for this scope, not the server's choice (repeatable)"),
    arg(
        "--roots",
        nargs="+",
        action="extend",
        metavar="PATH",
        help="offer these directories (or file:// URIs) as roots; write them before -- or after the URL",
    ),
    flag("--strict", help="the first frame of the server's that breaks the spec fails the call and ends the connection"),
    flag("--reload", help="server commands: restart the server when the files its command names change"),
    after_dashes("command", "COMMAND", "the server command to start and speak to over stdio"),
    bare="connect needs a name and a URL or a server command (%mcp connect NAME URL, or NAME -- COMMAND), "
    "or the name of a configured server (%mcp servers lists them)",
)
def _connect(ns: Namespace) -> Connection | None:
    if ns.all or (ns.url is None and ns.command is None):
        return _connect_configured(ns)
    if ns.from_file is not None or ns.consent:
        raise CommandError("--from and --consent are for configured servers: %mcp connect NAME --from FILE")
    if ns.name is None:
        raise CommandError("connect needs a name for the new connection: %mcp connect NAME URL, or NAME -- COMMAND")
    command = ns.command or []
    if ns.url is not None and command:
        raise CommandError("give a URL or a server command after --, not both")
    if ns.url is not None and not is_url(ns.url):
        raise CommandError(f"{ns.url!r} is not an http(s) URL; to start a server, write its command after --")
    if ns.url is None and ns.command is None:
        raise CommandError("write the server command after --, e.g. %mcp connect demo -- python server.py")
    if ns.url is None and not command:
        raise CommandError("no server command after --, e.g. %mcp connect demo -- python server.py")
    http_only = {
        "header": ns.header,
        "bearer_token_env": ns.bearer_token_env,
        "transport": ns.transport != "auto",
        "proxy": ns.proxy is not None,
        "cacert": ns.cacert,
    }
    if ns.url is None and any(http_only.values()):
        raise CommandError(f"--header, --bearer-token-env, --transport, --proxy and --cacert are {URL_ONLY}")
    auth = _auth_option(ns)
    if ns.url is None and auth not in ("auto", None):
        raise CommandError(f"the OAuth options are {URL_ONLY}")
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
        auth=auth,
        roots=ns.roots,
        strict=ns.strict,
        proxy=ns.proxy,
        verify=ns.cacert or True,
        reload=ns.reload,
    )
    return conn  # shows as its one status line (Connection._repr_pretty_)


def _connect_configured(ns: Namespace) -> Connection | None:
    """`%mcp connect NAME [--from FILE]` and `%mcp connect --all [--from FILE]`."""
    if ns.env or ns.header or ns.bearer_token_env or ns.transport != "auto":
        raise CommandError(
            "--env, --header, --bearer-token-env and --transport go with a URL or a command; a configured server has its own"
        )
    if ns.proxy is not None or ns.cacert:
        raise CommandError("--proxy and --cacert go with a URL; for configured servers, set %config McpNotebook.proxy")
    options = dict(
        era=ns.era,
        timeout=ns.timeout or None,
        protocol_version=ns.protocol_version,
        probe_timeout=ns.probe_timeout,
        strict=ns.strict,
    )
    if ns.all:
        if ns.name is not None:
            raise CommandError("give a configured server's NAME or --all, not both")
        results = connect_all(ns.from_file, consent=True if ns.consent else None, **options)
        if not results:
            print("no configured servers found (%mcp servers shows where they were looked for)")
        for name, value in results.items():
            print(connected_line(value) if isinstance(value, Connection) else f"{name}: not connected: {value}")
        return None  # each line said how it went; mcp_notebook.connect_all() returns them
    if ns.name is None:
        raise CommandError("connect needs a name: %mcp connect NAME URL, NAME -- COMMAND, or a configured server's NAME")
    try:
        conn = api.connect(config=ns.name, config_file=ns.from_file, consent=True if ns.consent else None, **options)
    except UsageError as exc:
        if str(exc).startswith("no configured server"):
            raise CommandError(f"{exc}; %mcp servers lists them. To start a server, write its command after --") from None
        raise
    return conn


def connected_line(conn: Connection) -> str:
    return health_view.status_line(conn.health)


_told_no_ping: weakref.WeakSet[Connection] = weakref.WeakSet()  # modern connections told once


def _auth_option(ns: Namespace) -> Any:
    """`auth=` for connect: None, "auto", or an OAuth made of the OAuth options."""
    client = (ns.client_id, ns.client_secret_env, ns.client_metadata_url, ns.private_key_file, ns.scope)
    if ns.auth == "none":
        if any(client):
            raise CommandError("--auth none never authorizes: leave out the other OAuth options")
        return None
    if not any(client):
        return OAuth(grant="device") if ns.auth == "device" else "auto"
    secret = None
    if ns.client_secret_env is not None:
        secret = os.environ.get(ns.client_secret_env)
        if not secret:
            raise CommandError(f"environment variable {ns.client_secret_env} is not set (it should hold the client secret)")
    key = None
    if ns.private_key_file is not None:
        try:
            key = Path(ns.private_key_file).expanduser().read_text()
        except OSError as exc:
            raise CommandError(f"cannot read the private key {ns.private_key_file}: {exc.strerror}") from None
    return OAuth(
        client_id=ns.client_id,
        client_secret=secret,
        client_metadata_url=ns.client_metadata_url,
        private_key=key,
        scopes=ns.scope,
        grant="device" if ns.auth == "device" else "auto",
    )


@subcommand(
    "ping",
    "ping the server; returns the round-trip times (s), shown as a line each, then a summary",
    connection(positional=True),
    arg("-n", "--count", type=count, metavar="N", default=1, help="how many pings (default: 1)"),
    arg("-i", "--interval", type=seconds, metavar="S", default=1.0, help="seconds between pings (default: 1)"),
    timeout("how long to wait for each answer (default: the connection's)"),
)
def _ping(ns: Namespace) -> PingTimes:
    conn = connection_of(ns)
    word = conn.rules.probe
    rtts = PingTimes(name=conn.name, sent=ns.count, word=word)
    if not conn.rules.pings and conn not in _told_no_ping:
        _told_no_ping.add(conn)
        rtts.lines.append(
            f"ping {conn.name}: the ping method was removed in 2026-07-28, so none is sent; each line is a "
            "liveness probe instead: the transport is up and a fresh server/discover came back"
        )
    for n in range(ns.count):
        if n:
            time.sleep(ns.interval)
        try:
            rtt = conn.ping(timeout=ns.timeout)
        except RequestTimeout as exc:
            rtts.lines.append(f"{word} {conn.name}: {exc}")
            continue
        rtts.append(rtt)
        rtts.lines.append(pings.line(word, conn.name, rtt))
    return rtts


@subcommand(
    "status",
    "state, protocol version, server, ping counters (of every connection, if several are open)",
    connection(positional=True),
)
def _status(ns: Namespace) -> None:
    targets = connections_of(ns)
    if not targets:
        print("no open connections; start one with %mcp connect NAME -- COMMAND")
        return
    print("\n\n".join(format_health(conn.health) for conn in targets))


def format_health(health: Health) -> str:
    """A few readable lines about one connection (server text on one line, no control sequence)."""
    server = health.server_info or {}
    rtt = f"{health.last_rtt * 1000:.3f} ms" if health.last_rtt is not None else "-"
    probes = health_view.probes_word(health)
    lines = [
        f"{health.name}: {health.state}",
        f"  protocol   {health.era} {one_line(health.protocol_version or '-')} over {health.transport} "
        f"({one_line(health.era_source or '-')})",
        f"  server     {one_line(server.get('name', '-'))} {one_line(server.get('version', ''))}".rstrip(),
        f"  command    {one_line(health.endpoint)}",
        f"  {probes:<10} {health.pings_sent} sent, {health.ping_failures} failed, last round trip {rtt}",
        f"  server pings {health.server_pings} received, {health.pongs_sent} answered, "
        f"{counted(health.pong_failures, 'pong')} lost",
        f"  in flight  {health.requests_in_flight}; invalid frames {health.invalid_frames}; "
        f"violations {health.violations}" + (f" (%mcp violations -c {health.name})" if health.violations else ""),
    ]
    if health.closed_reason:
        lines.append(f"  closed     {health_view.ended(health) or one_line(health.closed_reason)}")
    shown = health.stderr_tail[-3:] if health.state == "closed" else health.stderr_tail[-1:]
    lines += [f"  stderr     {one_line(line)}" for line in shown]
    return "\n".join(lines)


@subcommand(
    "reconnect",
    "restart a connection's server under the same connection (its trace and widgets carry on); says how its tools changed",
    connection(positional=True),
    flag("--reload", help="then restart it whenever the server's files change (server commands)"),
    flag("--no-reload", help="stop restarting it when its files change"),
)
def _reconnect(ns: Namespace) -> Any:
    if ns.reload and ns.no_reload:
        raise CommandError("give --reload or --no-reload, not both")
    reload = True if ns.reload else False if ns.no_reload else None
    return connection_of(ns).reconnect(reload=reload, why="%mcp reconnect")


@subcommand(
    "disconnect",
    "close a connection and stop its server",
    connection(positional=True),
    flag("--all", help="close every connection"),
)
def _disconnect(ns: Namespace) -> None:
    if ns.all and ns.conn:
        raise CommandError("give a connection or --all, not both")
    if ns.all:
        names = sorted(api.connections())
        api.close_all()
        print(f"closed {', '.join(names)}" if names else "no open connections")
        return
    conn = connection_of(ns)
    conn.close()
    print(f"closed {conn.name!r}")
