"""What the client tells the server about itself: the log level it wants (`logging/setLevel`,
or per request on modern connections) and the roots it offers. `set_log_level` is written once,
as steps, and given both faces (`calls.twins`); the rest are plain functions of the connection
that `Connection` lists by name.
"""

from __future__ import annotations

from typing import Any

from ...base.errors import UsageError
from ...runtime import get_runtime
from ...session.session import Session
from ..calls.core import Featured
from ..calls.exchange import CallSpec, Steps
from ..calls.progress import LOG_LEVELS
from ..calls.twins import twin
from .answers import ServerRequests, roots_of

# ----- logging -----


def set_log_level(conn: Featured, level: str) -> Steps[None]:
    """The least severe level of the server's log messages to receive. Legacy connections send
    `logging/setLevel`; modern ones (2026-07-28 has no such request) remember it and send it
    with each later request as `_meta` `io.modelcontextprotocol/logLevel`."""
    fx = conn._core
    if level not in LOG_LEVELS:
        raise UsageError(f"unknown log level {level!r}; use one of: {', '.join(LOG_LEVELS)}")
    if "logging" not in fx.session.server.capabilities:
        raise UsageError(f"{fx.name}: the server does not offer logging")
    if fx.session.rules.set_log_level:
        yield CallSpec("logging/setLevel", {"level": level})
    fx.log_level = level


SET_LOG_LEVEL = twin(set_log_level)  # the table: its blocking face and awaitable twin, taken by `Connection`


def log_level(self: Featured) -> str | None:
    """The log level set with `set_log_level`, if any."""
    return self._core.log_level


# ----- roots -----


def roots(self: Featured) -> list[dict[str, Any]] | None:
    """The roots this client offers (`roots/list`), or None when it declared none."""
    roots = self._core.get(ServerRequests).roots
    return None if roots is None else [dict(root) for root in roots]


def set_roots(self: Featured, roots: Any) -> None:
    """Change the roots (paths, file:// URIs or root dicts) and tell a legacy server they
    changed (`notifications/roots/list_changed`); modern servers ask for roots per request."""
    _change_roots(self, roots)
    if self._core.session.rules.roots_changed:
        self.notify("notifications/roots/list_changed")


async def aset_roots(self: Featured, roots: Any) -> None:
    """`set_roots`, awaited: change the roots and tell a legacy server they changed."""
    _change_roots(self, roots)
    session = self._core.session
    if session.rules.roots_changed:
        await get_runtime().acall(_roots_changed, session)


async def _roots_changed(session: Session) -> None:
    session.notify("notifications/roots/list_changed")


def _change_roots(self: Featured, roots: Any) -> None:
    requests = self._core.get(ServerRequests)
    if requests.roots is None:
        raise UsageError(
            f"{self.name}: this connection declared no roots capability; "
            "connect with roots=[path, ...] (or roots=True for the working directory)"
        )
    listed = roots_of(roots)
    if listed is None:
        raise UsageError("set_roots() takes paths, file:// URIs or root dicts (an empty list for none)")
    requests.roots = listed
