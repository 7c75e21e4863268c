"""The public Python API: connect to a server, use the connection from any cell.

Every blocking method has an awaitable twin (`ping` / `aping`, ...) for top-level
`await` in a notebook; both run the work on the runtime's event-loop thread.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from ..base.errors import ConnectionClosed, UsageError
from ..runtime import CANCEL_GRACE, get_runtime
from ..session.eras import PROBE_TIMEOUT
from ..session.handlers import Handler
from ..session.health import Health
from ..session.session import Pending, Session, request_timeout
from ..session.subscriptions import Subscription
from ..session.trace import Trace
from .features import ClientFeatures
from .monitor import Monitor
from .panels import LivePanels
from .targets import forget_stale_era, prepare_session, remember_era

DEFAULT_TIMEOUT = 60.0
EXIT_GRACE_AT_SHUTDOWN = 0.5

_registry: dict[str, Connection] = {}
_registry_lock = threading.Lock()


class Connection(ClientFeatures, LivePanels):
    """A live connection to one MCP server, usable from any cell or thread."""

    def __init__(self, name: str, session: Session) -> None:
        self.name = name
        self._session = session
        self.monitor = Monitor(name, session)  # keepalive, ready/degraded/stale, health history
        self.monitor.start()

    # ----- what we know about the server -----

    @property
    def session(self) -> Session:
        return self._session

    @property
    def state(self) -> str:
        return self._session.counters.state

    @property
    def era(self) -> str:
        return self._session.era

    @property
    def protocol_version(self) -> str | None:
        return self._session.protocol_version

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self._session.server_info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self._session.server_capabilities

    @property
    def instructions(self) -> str | None:
        return self._session.instructions

    @property
    def trace(self) -> Trace:
        return self._session.trace

    @property
    def closed(self) -> bool:
        return self._session.closed

    @property
    def health(self) -> Health:
        """A snapshot of the connection's health, taken now."""
        return self.monitor.health()

    @property
    def health_history(self) -> list[Health]:
        """Recent health snapshots, oldest first (one a second by default, and one per state change)."""
        return list(self.monitor.history)

    def keepalive(self, **settings: Any) -> Any:
        """Set this connection's keepalive: enabled=, interval=, timeout=, misses=, reset=True."""
        return self.monitor.configure(**settings)

    @property
    def stderr(self) -> list[str]:
        """The server's recent stderr lines (bounded)."""
        return list(self._session.transport.stderr_tail)

    # ----- requests -----

    def ping(self, *, timeout: float | None = None) -> float:
        """Ping the server; returns the round-trip time in seconds.

        On a modern (2026-07-28) connection, where ping was removed, this sends no ping:
        it checks the transport and times a fresh `server/discover` instead.
        """
        if self._session.era == "modern":
            return get_runtime().call(_ping, self._session, timeout)
        pending = self._round_trip("ping", None, timeout)
        pending.outcome()
        return pending.rtt

    async def aping(self, *, timeout: float | None = None) -> float:
        return await get_runtime().acall(_ping, self._session, timeout)

    def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send a raw JSON-RPC request and return its result; errors raise McpError.

        Modern requests carry their `_meta` and may take several rounds (input_required),
        so they run on the session loop; legacy ones take the one-hop fast path.
        """
        if self._session.era == "modern":
            return get_runtime().call(_request, self._session, method, params, timeout)
        return self._round_trip(method, params, timeout).outcome()

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        callback: Callable[[str, dict[str, Any]], Any] | None = None,
        timeout: float | None = None,
    ) -> Subscription:
        """Open a `subscriptions/listen` stream (2026-07-28) and wait for the server's acknowledgment.

        `callback(method, params)` runs for each notification (in a worker thread); they
        are also kept on `subscription.received`. An abrupt drop re-listens by itself;
        `subscription.close()` ends it. On legacy connections use resources/subscribe.
        """
        if self._session.era != "modern":
            raise UsageError("subscriptions/listen belongs to the modern era (2026-07-28); this connection is legacy")
        wanted: dict[str, Any] = {}
        for key, on in (("toolsListChanged", tools), ("promptsListChanged", prompts), ("resourcesListChanged", resources)):
            if on:
                wanted[key] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        if not wanted:
            raise UsageError("listen to something: tools=True, prompts=True, resources=True or resource_uris=[...]")
        runtime, session = get_runtime(), self._session
        subscription = Subscription(session, wanted, callback)
        subscription.closer = lambda: runtime.call_sync(subscription.cancel)
        runtime.call_sync(_start_listening, session, subscription)
        limit = session.timeout if timeout is None else timeout
        if not subscription.wait_acknowledged(limit) or subscription.ended:
            subscription.close()
            raise ConnectionClosed(f"subscriptions/listen was not acknowledged: {subscription.ended or f'no answer within {limit:g} s'}")
        return subscription

    def discover(self, *, refresh: bool = False) -> dict[str, Any]:
        """The server's `server/discover` result (modern era), cached for its `ttlMs`."""
        if self._session.era != "modern":
            raise UsageError("server/discover belongs to the modern era; this connection is legacy")
        return get_runtime().call(_discover, self._session, refresh)

    async def arequest(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        return await get_runtime().acall(_request, self._session, method, params, timeout)

    def _round_trip(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> Pending:
        """One request from a blocking caller: one hop to the loop, woken by the response itself.

        Ctrl-C or the timeout abandons the request on the loop (which tells the server)
        before this returns, so the session stays usable.
        """
        session, runtime = self._session, get_runtime()
        limit = session.timeout if timeout is None else timeout
        waker = threading.Lock()
        waker.acquire()
        pending = session.new_request(method, params, waker)
        runtime.call_soon(session.launch, pending)
        try:
            if waker.acquire(timeout=-1 if limit is None else limit):
                return pending
        except KeyboardInterrupt:
            cancelled = ConnectionClosed("cancelled by the user")
            runtime.call_sync(session.abandon, pending, cancelled, "cancelled by the user", timeout=CANCEL_GRACE)
            raise
        failure = request_timeout(method, limit or 0)
        if runtime.call_sync(session.abandon, pending, failure, f"timed out after {limit:g} s"):
            raise failure
        return pending

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a raw JSON-RPC notification."""
        get_runtime().call_sync(self._session.notify, method, params)

    async def anotify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await get_runtime().acall(_notify, self._session, method, params)

    def on_request(self, method: str, handler: Handler | None = None) -> Any:
        """Answer server requests for `method` with `handler(params) -> dict`.

        A handler for `ping` replaces the built-in pong. Sync handlers run in a worker
        thread, async ones on the session loop. Usable as a decorator.
        """
        if handler is None:
            def decorate(fn: Handler) -> Handler:
                self._session.request_handlers.set(method, fn)
                return fn
            return decorate
        self._session.request_handlers.set(method, handler)
        return handler

    def remove_handler(self, method: str) -> None:
        """Forget the handler for server requests `method` (a `ping` falls back to the built-in pong)."""
        self._session.request_handlers.set(method, None)

    def on_notification(self, method: str, handler: Handler | None) -> None:
        """Call `handler(params)` for every server notification `method` (None removes it)."""
        self._session.notification_handlers.set(method, handler)

    # ----- closing -----

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Wait until the connection is closed (the server exited, or close() ran); False on timeout."""
        return get_runtime().call(_wait_closed, self._session, timeout)

    def close(self) -> None:
        """Close the connection and reap the server process."""
        _forget(self)
        get_runtime().call(self._session.close)

    async def aclose(self) -> None:
        _forget(self)
        await get_runtime().acall(self._session.close)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        version = self.protocol_version or "?"
        return f"<Connection {self.name!r} {self.state} {self.era} {version} {self._session.transport.describe()!r}>"


async def _ping(session: Session, timeout: float | None) -> float:
    return await session.ping(timeout=timeout)


async def _wait_closed(session: Session, timeout: float | None) -> bool:
    with anyio.move_on_after(timeout):
        await session.wait_closed()
        return True
    return False


async def _notify(session: Session, method: str, params: dict[str, Any] | None) -> None:
    session.notify(method, params)


def _start_listening(session: Session, subscription: Subscription) -> None:
    session.subscriptions.add(subscription)
    session.spawn(subscription.run)


async def _discover(session: Session, refresh: bool) -> dict[str, Any]:
    return await session.discover(refresh=refresh)


async def _request(session: Session, method: str, params: dict[str, Any] | None, timeout: float | None) -> Any:
    return await session.request(method, params, timeout=timeout)


def connect(
    target: str | Sequence[str],
    *,
    name: str | None = None,
    era: str = "auto",
    timeout: float | None = DEFAULT_TIMEOUT,
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    headers: Mapping[str, str] | None = None,
    transport: str = "auto",
    bearer_token_env: str | None = None,
    secrets: Sequence[str] = (),
    protocol_version: str | None = None,
    probe_timeout: float = PROBE_TIMEOUT,
    capabilities: dict[str, Any] | None = None,
    handlers: Mapping[str, Handler] | None = None,
    trace_capacity: int | None = None,
    roots: Any = None,
    sampling: Any = None,
    elicitation: Any = None,
) -> Connection:
    """Connect to an MCP server, in whichever protocol era it speaks.

    `target` is a server command (an argv list or a shell-style string, run over stdio)
    or an http(s) URL (Streamable HTTP, falling back to HTTP+SSE; `transport="http"`
    forbids the fallback, `"sse"` forces it). `era` is "auto" (probe with
    server/discover for `probe_timeout` seconds, fall back to the legacy handshake;
    the verdict is cached per command line or origin), "legacy" or "modern";
    `protocol_version` pins a version (and so an era). A `name` already in use closes
    the old connection first. `timeout` is the default per-request timeout in seconds
    (None waits forever). `headers` go on every HTTP request; `bearer_token_env` names
    an environment variable holding a bearer token; header values that look like
    credentials, and `secrets`, never appear in traces. `handlers` answer server
    requests (and modern input requests) from the first frame on. `roots` (paths, or True
    for the working directory), `sampling` (a callback, or True to ask in the notebook) and
    `elicitation` (a callback, True to ask, or "defaults") declare those capabilities.
    """
    options = dict(
        name=name, era=era, timeout=timeout, env=env, cwd=cwd, headers=headers, transport=transport,
        bearer_token_env=bearer_token_env, secrets=secrets, protocol_version=protocol_version,
        probe_timeout=probe_timeout, capabilities=capabilities, handlers=handlers, trace_capacity=trace_capacity,
        roots=roots, sampling=sampling, elicitation=elicitation,
    )
    runtime = get_runtime()
    for attempt in (1, 2):
        conn_name, session = prepare_session(target, **options)
        conn_name = options["name"] or _default_name(conn_name)
        _close_existing(conn_name)
        runtime.spawn(session.run)
        try:
            runtime.call(session.wait_ready)
        except BaseException as exc:
            runtime.call(session.close)
            if attempt == 1 and forget_stale_era(target, session, exc):
                continue  # the cached era was wrong for this server now: probe afresh
            raise
        remember_era(target, session)
        return _remember(Connection(conn_name, session))
    raise AssertionError("unreachable")


_CONNECT_DEFAULTS: dict[str, Any] = {
    p.name: p.default for p in inspect.signature(connect).parameters.values() if p.kind is p.KEYWORD_ONLY
}


async def aconnect(target: str | Sequence[str], **given: Any) -> Connection:
    """The awaitable twin of `connect`, with the same arguments (and the same defaults)."""
    unknown = set(given) - set(_CONNECT_DEFAULTS)
    if unknown:
        raise TypeError(f"aconnect() got unexpected keyword arguments: {', '.join(sorted(unknown))}")
    options = {**_CONNECT_DEFAULTS, **given}
    runtime = get_runtime()
    for attempt in (1, 2):
        base, session = prepare_session(target, **options)
        name = options["name"] or _default_name(base)
        old = _registry.get(name)
        if old is not None:
            await old.aclose()
        runtime.spawn(session.run)
        try:
            await runtime.acall(session.wait_ready)
        except BaseException as exc:
            await runtime.acall(session.close)
            if attempt == 1 and forget_stale_era(target, session, exc):
                continue
            raise
        remember_era(target, session)
        return _remember(Connection(name, session))
    raise AssertionError("unreachable")


def connections() -> dict[str, Connection]:
    """Every open connection, by name."""
    with _registry_lock:
        return {name: conn for name, conn in _registry.items() if not conn.closed}


def get_connection(name: str) -> Connection:
    """The open connection called `name`; UsageError if there is none."""
    conn = connections().get(name)
    if conn is None:
        known = ", ".join(sorted(connections())) or "none"
        raise UsageError(f"no connection named {name!r} (open connections: {known})")
    return conn


def close_all() -> None:
    """Close every connection and reap every server process."""
    runtime = get_runtime()
    if runtime.running:
        runtime.call(_close_all)


async def _close_all(grace: float | None = None) -> None:
    with _registry_lock:
        sessions = [conn._session for conn in _registry.values()]
        _registry.clear()
    async with anyio.create_task_group() as tg:
        for session in sessions:
            tg.start_soon(session.close, grace)


async def _close_all_quickly() -> None:
    """At interpreter exit or kernel shutdown there is little time: SIGTERM after a short grace."""
    await _close_all(grace=EXIT_GRACE_AT_SHUTDOWN)


def _remember(conn: Connection) -> Connection:
    with _registry_lock:
        _registry[conn.name] = conn
    return conn


def _forget(conn: Connection) -> None:
    with _registry_lock:
        if _registry.get(conn.name) is conn:
            del _registry[conn.name]


def _close_existing(name: str) -> None:
    with _registry_lock:
        old = _registry.get(name)
    if old is not None:
        old.close()


def _default_name(base: str) -> str:
    """`base`, or `base-2`, `base-3`, ... whichever is not in use."""
    name, n = base, 2
    with _registry_lock:
        while name in _registry:
            name, n = f"{base}-{n}", n + 1
    return name


get_runtime().on_stop(_close_all_quickly)
