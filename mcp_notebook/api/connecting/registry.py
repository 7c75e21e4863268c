"""The registry of connections by name, and the connects under way that `close_all` closes too.

A connection stays registered until the user closes it or opens another under its name:
one whose server ended by itself (it exited, or hung up) is still listed, `closed`, so
what happened to it can be read (`health`, `stderr`). A session is known here
(`_opening_now`) from before it starts until it is registered, and a connect that began
before a `close_all` is never registered (its server is stopped, and it raises
ConnectionClosed): `closes` counts the `close_all`s, and each connect notes it as it begins.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import anyio

from ...base.errors import ConnectionClosed, Interrupted, UsageError
from ...runtime import Runtime, get_runtime
from ...session.session import Session
from ..connection import Connection, session_of

EXIT_GRACE_AT_SHUTDOWN = 0.5

_registry: dict[str, Connection] = {}
_registry_lock = threading.RLock()
_opening_now: set[Session] = set()  # started by a connect, not yet registered: close_all closes them too
closes = 0  # close_all()s so far: a connect that began before the latest one opens nothing
on_close_all: list[Callable[[], None]] = []  # told first, on the loop thread: must not block (reload watchers stop)


def connections() -> dict[str, Connection]:
    """Every connection, by name: the open ones, and those whose server ended by itself (their
    state is "closed") until they are closed or their name is connected again."""
    with _registry_lock:
        return dict(_registry)


def get_connection(name: str) -> Connection:
    """The connection called `name` (open, or closed by its server); UsageError if there is none."""
    conn = connections().get(name)
    if conn is None:
        known = ", ".join(sorted(connections())) or "none"
        raise UsageError(f"no connection named {name!r} (connections: {known})")
    return conn


def close_all() -> None:
    """Close every connection and reap every server process."""
    runtime = get_runtime()
    if runtime.running:
        runtime.call(_close_all)


async def _close_all(grace: float | None = None) -> None:
    global closes
    for told in on_close_all:
        told()
    with _registry_lock:
        sessions = [session_of(conn) for conn in _registry.values()] + list(_opening_now)
        _registry.clear()
        _opening_now.clear()
        closes += 1
    async with anyio.create_task_group() as tg:
        for session in sessions:
            tg.start_soon(session.close, grace)


async def _close_all_quickly() -> None:
    """At interpreter exit or kernel shutdown there is little time: SIGTERM after a short grace."""
    await _close_all(grace=EXIT_GRACE_AT_SHUTDOWN)


def remember(conn: Connection) -> Connection:
    """Register an open connection under its name (tests wrap this to see every connection made)."""
    with _registry_lock:
        _registry[conn.name] = conn
    return conn


def start(runtime: Runtime, session: Session, name: str, began: int) -> None:
    """Start a connect's session, known to `close_all` from now on; none if one came since it began."""
    with _registry_lock:
        if closes != began:
            raise ConnectionClosed(f"{name}: not connected: close_all() was called while it was connecting")
        _opening_now.add(session)
    runtime.spawn(session.run)  # after a close_all took it, the session opens nothing


def opening_failed(session: Session, name: str, exc: BaseException) -> BaseException:
    """What a connect whose session did not come up raises: Ctrl-C is `Interrupted`, a
    session `close_all` closed says so."""
    with _registry_lock:
        taken = session not in _opening_now
        _opening_now.discard(session)
    if isinstance(exc, KeyboardInterrupt) and not isinstance(exc, Interrupted):
        return Interrupted(f"{name}: interrupted while connecting; the connection is closed")
    if taken and isinstance(exc, ConnectionClosed):
        return ConnectionClosed(f"{name}: not connected: close_all() was called while it was connecting")
    return exc


def register(conn: Connection) -> Connection:
    """`remember` a connection that came up, unless `close_all` took it meanwhile (it closes it)."""
    with _registry_lock:
        if session_of(conn) not in _opening_now:
            raise ConnectionClosed(f"{conn.name}: not connected: close_all() was called while it was connecting")
        _opening_now.discard(session_of(conn))
        return remember(conn)


def forget(conn: Connection) -> None:
    with _registry_lock:
        if _registry.get(conn.name) is conn:
            del _registry[conn.name]


def existing(name: str) -> Connection | None:
    """The connection registered as `name`, read under the registry's lock."""
    with _registry_lock:
        return _registry.get(name)


def close_existing(name: str) -> None:
    """Close the connection a new connect is about to take the name of (`connect`'s step)."""
    old = existing(name)
    if old is not None:
        old.close()


async def aclose_existing(name: str) -> None:
    """`close_existing`, awaited (`aconnect`'s step)."""
    old = existing(name)
    if old is not None:
        await old.aio.close()


def default_name(base: str) -> str:
    """`base`, or `base-2`, `base-3`, ... whichever is not in use (a closed connection's name is free)."""
    name, n = base, 2
    with _registry_lock:
        while name in _registry and not _registry[name].closed:
            name, n = f"{base}-{n}", n + 1
    return name


get_runtime().on_stop(_close_all_quickly)
