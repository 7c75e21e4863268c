"""The names `Connection` had before its public surface was cut (issue #38), kept for one
release: reading one warns (DeprecationWarning, naming the new spelling) and gives what the
new spelling gives. Remove this module, and `Connection.__getattr__`, in the release after.

The rule kept here: no old name is in `dir()` or seen by type checkers; each still works.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

from .aio import AsyncConnection

# The awaitable twins that were `a`-prefixed methods of `Connection`: now `conn.aio.<name>`.
AWAITABLE = frozenset(name for name in vars(AsyncConnection) if not name.startswith("_"))

# Other names removed from `Connection`: (the new spelling, what it gives).
MOVED: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "session": ("mcp_notebook.api.connection.session_of(conn) (internals)", lambda conn: conn._session),
    "log_records": ("conn.logs.records", lambda conn: conn.logs.records),
    "log_panel": ("conn.logs.panel", lambda conn: conn.logs.panel),
    "subscription_records": ("conn.subscriptions.records", lambda conn: conn.subscriptions.records),
    "subscriptions_panel": ("conn.subscriptions.panel", lambda conn: conn.subscriptions.panel),
    "resource_updates": ("conn.subscriptions.updates", lambda conn: conn.subscriptions.updates),
    "health_history": ("conn.monitor.history", lambda conn: list(conn.monitor.history)),
}


def old_name(conn: Any, name: str) -> Any:
    """`conn.<name>` for a name `Connection` no longer has, with a DeprecationWarning; else AttributeError."""
    if name.startswith("a") and name[1:] in AWAITABLE:
        new, value = f"conn.aio.{name[1:]}", getattr(conn.aio, name[1:])
    elif name in MOVED:
        new, get = MOVED[name]
        value = get(conn)
    else:
        raise AttributeError(f"'Connection' object has no attribute {name!r}")
    warnings.warn(f"Connection.{name} is deprecated; use {new}", DeprecationWarning, stacklevel=3)
    return value
