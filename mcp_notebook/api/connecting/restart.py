"""Restarting a connection's server under the same `Connection`: `conn.reconnect()`, and reload.

The rule kept: what the user holds carries on across a restart: the `Connection` object, its
trace (the new session records into it, after a "reconnect" event saying why), its health
monitor (history kept, `restarts` counted) and so the live widgets that read them, and the
handlers the user set. Only what belongs to one server process or HTTP session is new: the
session and its core (list caches, each feature's state). The old session is closed before
the new one starts, and restarts of one connection are serialised, so a restart never leaves
two servers running. The tools are listed before and after, and the difference is said as a
pin's difference is (`configs.pins.compare`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...base.errors import McpNotebookError
from ...base.plural import counted
from ...configs.pins import ToolsDiff, compare, record_of
from ...runtime import get_runtime
from ..apps import host as app_host
from ..connection import Connection, session_of
from ..tools import pins as tool_pins
from . import registry
from .features import install as install_features
from .options import ConnectOptions
from .reload import Watch, watched_paths
from .targets import prepare_session, remember_era


@dataclass(frozen=True)
class Reconnected:
    """What a restart did: why, how long it took, and how the tools changed (`diff`, a `ToolsDiff`)."""

    name: str
    why: str
    seconds: float
    tools: tuple[str, ...] | None  # the tools listed after the restart; None: the server has none
    diff: ToolsDiff

    def summary(self) -> str:
        tools = "" if self.tools is None else f"; {counted(len(self.tools), 'tool')}, {self.diff.summary()}"
        return f"{self.name}: reconnected ({self.why}) in {self.seconds:.2f} s{tools}"

    def __repr__(self) -> str:
        return f"<Reconnected {self.summary()}>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.summary())


class Restarter:
    """How to start a connection's server again (its target and options, as first prepared), its
    reload watch, and the lock that keeps one restart at a time."""

    def __init__(self, target: str | Sequence[str], options: ConnectOptions) -> None:
        self.target = target
        self.options = options.replace(reload=False)
        self._lock = threading.Lock()
        self._watch: Watch | None = None

    def __call__(self, conn: Connection, *, why: str = "asked", reload: bool | None = None) -> Reconnected:
        paths = watched_paths(self.target, self.options) if reload else None  # checked before anything restarts
        with self._lock:
            result = self._restart(conn, why)
        if reload is False:
            self.stop_watching()
        elif paths is not None:
            self.watch(conn, paths)
        return result

    def _restart(self, conn: Connection, why: str) -> Reconnected:
        began = registry.closes
        runtime = get_runtime()
        old = session_of(conn)
        before = _listed(conn)
        started = time.perf_counter()
        o = self.options  # the new session is made (a command that cannot run fails) before the old one closes
        _, session = prepare_session(self.target, o.replace(name=conn.name), trace=conn.trace)
        core = install_features(session, conn.name, roots=o.roots, sampling=o.sampling, elicitation=o.elicitation, apps=o.apps)
        conn.trace.event("reconnect", why)
        conn.monitor.restarting(why)
        app_host.of(conn).close_views("the server restarted")
        runtime.call(old.close)
        try:
            registry.start(runtime, session, conn.name, began)
        except BaseException:
            conn._adopt(session, core)  # the connection reads closed, with the new session's trace
            raise
        try:
            runtime.call(session.wait_ready)
        except BaseException as exc:  # noqa: BLE001 - closed, and raised as a connect's failure is
            runtime.call(session.close)
            conn._adopt(session, core)  # closed: its stderr (a traceback, say) is the connection's to show
            raise registry.opening_failed(session, conn.name, exc) from None
        conn._adopt(session, core)
        registry.register(conn)
        remember_era(self.target, session)
        after = _listed(conn)
        diff = compare(record_of(before), after) if before is not None and after is not None else ToolsDiff()
        if tool_pins.status(conn) is not None:
            tool_pins.check(conn)  # its standing pin warning follows the new tools
        result = Reconnected(
            conn.name, why, time.perf_counter() - started, None if after is None else tuple(t["name"] for t in after), diff
        )
        conn.trace.event("reconnected", result.summary(), **diff.as_dict())
        return result

    def watch(self, conn: Connection, paths: Sequence[str] | None = None) -> None:
        """Restart `conn` whenever its server's files change (a new watch replaces the old)."""
        chosen = paths if paths is not None else watched_paths(self.target, self.options)
        self.stop_watching()
        self._watch = Watch(conn, chosen)
        self._watch.start()

    def stop_watching(self) -> None:
        watch, self._watch = self._watch, None
        if watch is not None:
            watch.stop()

    def closing(self, conn: Connection) -> None:
        """The connection closes: its watch stops (and its thread is joined), its name is free."""
        self.stop_watching()
        registry.forget(conn)


def _listed(conn: Connection) -> list[dict[str, Any]] | None:
    """The server's tools (the cached listing if there is one), or None: no tools, or no answer."""
    if conn.closed or "tools" not in (conn.server_capabilities or {}):
        return None
    try:
        return [dict(tool) for tool in conn.list_tools()]
    except McpNotebookError:
        return None
