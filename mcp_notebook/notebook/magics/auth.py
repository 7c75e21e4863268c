"""`%mcp auth`: who each connection is authorized as (issuer, client, scopes, expiry; never
a token), `--logout` to forget it, `--steps` for the steps of its flows as a table.

Text only, so it reads the same in a live notebook, a saved one and a terminal.
"""

from __future__ import annotations

import time
from argparse import Namespace
from typing import Any

from ...api.connecting.authorization import AuthStatus, auth_status, auth_steps, logout
from ...base.plural import counted
from ...base.text import one_line, wrapped
from .commands import connection, connections_of, flag, subcommand


@subcommand(
    "auth",
    "OAuth: who each connection is authorized as and for what (never a token)",
    connection(positional=True),
    flag("--logout", help="forget the connection's token, here, in its saved file and in the system keyring"),
    flag("--steps", help="the steps of its OAuth flows: discovery, registration, authorization, token, refresh"),
)
def _auth(ns: Namespace) -> None:
    conns = connections_of(ns, one=ns.logout or ns.steps)
    if not conns:
        print("no open connections; start one with %mcp connect NAME URL")
        return
    for conn in conns:
        if ns.logout:
            gone = logout(conn)
            print(f"{conn.name}: logged out; {counted(gone, 'saved token file')} deleted")
        elif ns.steps:
            print(format_steps(conn.name, auth_steps(conn)))
        else:
            status = auth_status(conn)
            print(format_status(status) if status else f"{conn.name}: no OAuth (not an HTTP server, or auth=None)")


def format_status(status: AuthStatus) -> str:
    if not status.authorized:
        return f"{status.connection}: not authorized (the server has not asked, or the token was forgotten)"
    lines = [
        f"{status.connection}: authorized for {one_line(status.server)}",
        f"  issuer     {one_line(status.issuer or '-')}",
        f"  client     {one_line(status.client_id or '-')} ({status.client_source or '-'})",
        f"  scopes     {one_line(' '.join(status.scopes)) or '(none named)'}",
        f"  expires    {_expiry(status.expires_at)}",
        f"  refresh    {'yes' if status.refreshable else 'no refresh token'}",
        f"  asked      {counted(status.authorizations, 'time')} this session",
    ]
    return "\n".join(lines)


def _expiry(expires_at: float | None) -> str:
    if expires_at is None:
        return "not said"
    left = expires_at - time.time()
    when = time.strftime("%H:%M:%S UTC", time.gmtime(expires_at))
    return f"expired at {when}" if left <= 0 else f"in {left / 60:.0f} min ({when})"


def format_steps(name: str, rows: list[dict[str, Any]]) -> str:
    if not rows:
        return f"{name}: no OAuth steps yet"
    width = max(len(str(row["step"])) for row in rows)
    lines = [f"{name}: OAuth steps", f"  {'seconds':>8}  {'step':<{width}}  what"]
    lead = " " * (2 + 8 + 2 + width + 2)  # the `what` column's lines, at word boundaries
    for row in rows:
        first = f"  {row['seconds']:>8.3f}  {str(row['step']):<{width}}  "
        lines.append(wrapped(one_line(str(row["what"])), indent=lead, first=first))
    return "\n".join(lines)
