"""The `auth=` option of `connect()` made into the HTTP transport's OAuth client.

"auto" (the default) authorizes when the server answers 401, unless the caller already
sends an `Authorization` header; an `OAuth(...)` says how; None never authorizes. Without
an `authorize` callback of the caller's, the user is asked through the front end, which may
follow the flow's steps (`AuthProgress`); a device grant's code is shown through it too. Every
credential the flow learns is registered with the trace, so it shows nowhere. Front ends
read a connection's authorization (`auth_status`, never a token), its steps, and log out here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ...auth.config import OAuth
from ...base.errors import UsageError
from ...session.trace import Trace
from ..connection import Connection, session_of
from ..display import frontend
from ..display.auth_progress import AuthProgress
from . import settings

if TYPE_CHECKING:
    from ...auth.device import DeviceCode, DeviceWait
    from ...auth.flow import OAuthFlow  # with the HTTP stack under it: imported when a connection first authorizes
    from ...transports.http_client import HttpSettings


def auth_hook(
    url: str, option: Any, headers: Mapping[str, str], trace: Trace, http: HttpSettings | None = None
) -> OAuthFlow | None:
    """The OAuth client for a connection to `url`, or None when it is not to authorize."""
    if option is None:
        return None
    if isinstance(option, str) and option == "auto":
        if any(key.lower() == "authorization" for key in headers):
            return None  # the caller brings a credential of its own
        options = OAuth()
    elif isinstance(option, OAuth):
        options = option
    else:
        raise UsageError(f"auth must be 'auto', None or an mcp_notebook.OAuth(...); got {option!r:.80}")
    from ...auth.flow import OAuthFlow

    if options.public_url is None and settings.defaults.public_url:
        options = replace(options, public_url=settings.defaults.public_url)
    progress = AuthProgress(trace)

    def ask_front_end(url: str) -> str:
        return frontend.current().authorize(url, progress)

    def show_code(code: DeviceCode) -> DeviceWait:
        return frontend.current().show_device_code(code, progress)

    return OAuthFlow(
        url, options, events=progress.event, secret=trace.add_secret, authorize=ask_front_end, show_code=show_code, http=http
    )


@dataclass(frozen=True)
class AuthStatus:
    """Who a connection is authorized as, and for what: what a person may see (never a token)."""

    connection: str
    server: str
    authorized: bool
    issuer: str | None
    client_id: str | None
    client_source: str | None
    scopes: tuple[str, ...]
    expires_at: float | None
    refreshable: bool
    authorizations: int


def flow_of(conn: Connection) -> OAuthFlow | None:
    from ...auth.flow import OAuthFlow

    auth = getattr(session_of(conn).transport, "auth", None)
    return auth if isinstance(auth, OAuthFlow) else None


def auth_status(conn: Connection) -> AuthStatus | None:
    """The connection's authorization, or None when it does not use OAuth."""
    flow = flow_of(conn)
    if flow is None:
        return None
    token, client, found = flow.token, flow.client, flow.found
    return AuthStatus(
        conn.name,
        flow.server_url,
        token is not None,
        found.issuer if found else None,
        client.client_id if client else None,
        client.source if client else None,
        token.scopes if token else (),
        token.expires_at if token else None,
        bool(token and token.refresh_token),
        flow.authorizations,
    )


def logout(conn: Connection) -> int:
    """Forget the connection's token, in memory and on disk; how many saved files went."""
    flow = flow_of(conn)
    if flow is None:
        raise UsageError(f"{conn.name} does not use OAuth, so there is nothing to log out of")
    return flow.logout()


def auth_steps(conn: Connection) -> list[dict[str, Any]]:
    """The OAuth steps in the connection's trace (its last flows): when, which step, what happened."""
    entries = [e for e in conn.trace.entries() if e.kind in ("auth", "auth-http")]
    start = entries[0].monotonic if entries else 0.0
    rows = []
    for entry in entries:
        detail = entry.detail
        if entry.kind == "auth-http":
            what = f"{detail.get('method', '')} {detail.get('url', '')} -> {detail.get('status', entry.note or 'failed')}"
        else:
            what = entry.note or ""
            if detail.get("scopes") and not what.endswith(str(detail["scopes"])):  # not said twice
                what += f" (scopes: {detail['scopes']})"
        rows.append({"seconds": round(entry.monotonic - start, 3), "step": detail.get("step", ""), "what": what})
    return rows
