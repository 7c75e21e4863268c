"""Opening connections, and the registry of connections by name.

A connection stays registered until the user closes it or opens another under its name:
one whose server ended by itself (it exited, or hung up) is still listed, `closed`, so
what happened to it can be read (`health`, `stderr`).

`connect` and `aconnect` take the same options (`ConnectOptions`, whose fields hold the
defaults) and share one opening path: `_opening` is a generator of the attempts (a remembered
era verdict that no longer holds is dropped, and the server probed afresh, once), which
`connect` drives in the caller's thread and `aconnect` awaits.

`close_all` closes the connections being opened as well as the open ones: a session is known
to the registry (`_opening_now`) from before it starts until it is registered, and a connect
that began before a `close_all` is never registered (its server is stopped, and it raises
ConnectionClosed). Ctrl-C while connecting closes the connection under way at once (an OAuth
flow waiting for the user included) and raises `Interrupted`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Generator, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio

from ...base.errors import ConnectionClosed, Interrupted, UsageError
from ...runtime import Runtime, get_runtime
from ...session.handlers import Handler
from ...session.session import Session
from ..apps import meta as app_meta
from ..calls.feature_state import install as install_features
from ..connection import Connection
from ..display import frontend
from .options import DEFAULTS as D
from .options import ConnectOptions
from .targets import forget_stale_era, prepare_session, remember_era

EXIT_GRACE_AT_SHUTDOWN = 0.5

_registry: dict[str, Connection] = {}
_registry_lock = threading.RLock()
_opening_now: set[Session] = set()  # started by a connect, not yet registered: close_all closes them too
_closes = 0  # close_all()s so far: a connect that began before the latest one opens nothing

# One attempt to open: the connection's name and its session, not yet started. The driver
# sends back None once the session is ready, or the exception that stopped it (the session
# closed already); the generator returns the open Connection or raises.
Opening = Generator[tuple[str, Session], BaseException | None, Connection]


def connect(
    target: str | Sequence[str] | None = None,
    *,
    name: str | None = D.name,
    era: str = D.era,
    timeout: float | None = D.timeout,
    env: Mapping[str, str] | None = D.env,
    cwd: str | Path | None = D.cwd,
    headers: Mapping[str, str] | None = D.headers,
    transport: str = D.transport,
    bearer_token_env: str | None = D.bearer_token_env,
    secrets: Sequence[str] = D.secrets,
    protocol_version: str | None = D.protocol_version,
    probe_timeout: float = D.probe_timeout,
    capabilities: dict[str, Any] | None = D.capabilities,
    handlers: Mapping[str, Handler] | None = D.handlers,
    trace_capacity: int | None = D.trace_capacity,
    roots: Any = D.roots,
    sampling: Any = D.sampling,
    elicitation: Any = D.elicitation,
    config: str | None = D.config,
    config_file: str | Path | None = D.config_file,
    consent: bool | None = D.consent,
    apps: bool | None = D.apps,
    auth: Any = D.auth,
    check_frames: bool = D.check_frames,
    strict: bool = D.strict,
    proxy: str | None = D.proxy,
    verify: Any = D.verify,
) -> Connection:
    """Connect to an MCP server, in whichever protocol era it speaks.

    `target` is a server command (an argv list or a shell-style string, run over stdio)
    or an http(s) URL (Streamable HTTP, falling back to HTTP+SSE; `transport="http"`
    forbids the fallback, `"sse"` forces it). `era` is "auto" (probe with
    server/discover for `probe_timeout` seconds, fall back to the legacy handshake; the
    verdict is remembered per command line or URL, across kernels, and a server found
    legacy is not probed again), "legacy" or "modern";
    `protocol_version` pins a version (and so an era). A `name` already in use closes
    the old connection first. `timeout` is the default per-request timeout in seconds
    (None waits forever). `headers` go on every HTTP request; `bearer_token_env` names
    an environment variable holding a bearer token; header values that look like
    credentials, and `secrets`, never appear in traces. `handlers` answer server
    requests (and modern input requests) from the first frame on. `roots` (paths, or True
    for the working directory), `sampling` (a callback, or True to ask in the notebook) and
    `elicitation` (a callback, True to ask, or "defaults") declare those capabilities.

    `config="NAME"` (no target) connects to a server another client configured (`%mcp servers`
    lists them; `config_file`, a path or a client such as "cursor", picks one of several of that
    name): its command, arguments, env, cwd, URL, headers and transport, the options given here
    winning. A configured command runs only with consent: asked in the notebook the first time
    (and again when the entry changes), or `consent=True` once you have read it.

    `apps` declares MCP Apps (the `io.modelcontextprotocol/ui` extension) and shows tools'
    views in the cell; None (the default) turns it on where the front end can draw them.

    `auth` is "auto" (authorize with OAuth when an HTTP server answers 401, asking you
    through the front end), an `OAuth(...)` (client credentials, scopes, an `authorize`
    callback), or None (never authorize).

    Every frame the server sends is checked against the negotiated version's schema and the
    protocol's rules, off the ping path (`conn.violations`; `check_frames=False` skips it);
    `strict=True` makes the first violation an error: the call it answers fails with
    ProtocolViolation naming the rule, and the connection ends.

    Every HTTP request (the server's, the authorization flow's) goes through `proxy` (a URL;
    "" for none; None, the default, follows `%config McpNotebook.proxy`, then `HTTP_PROXY`,
    `HTTPS_PROXY`, `ALL_PROXY` and `NO_PROXY`) and trusts `verify`: True, the operating
    system's roots (or `SSL_CERT_FILE` / `SSL_CERT_DIR`); a CA bundle's path; an
    `ssl.SSLContext`; or False, any certificate.
    """
    options = ConnectOptions(
        name=name,
        era=era,
        timeout=timeout,
        env=env,
        cwd=cwd,
        headers=headers,
        transport=transport,
        bearer_token_env=bearer_token_env,
        secrets=secrets,
        protocol_version=protocol_version,
        probe_timeout=probe_timeout,
        capabilities=capabilities,
        handlers=handlers,
        trace_capacity=trace_capacity,
        roots=roots,
        sampling=sampling,
        elicitation=elicitation,
        config=config,
        config_file=config_file,
        consent=consent,
        apps=apps,
        auth=auth,
        check_frames=check_frames,
        strict=strict,
        proxy=proxy,
        verify=verify,
    )
    return open_connection(target, options)


def open_connection(
    target: str | Sequence[str] | None, options: ConnectOptions, watch: Callable[[Session], None] | None = None
) -> Connection:
    """`connect` with its options gathered; `watch` sees each session tried before it starts
    (the doctor reads their traces, a failed one's too)."""
    began = _closes
    target, options, opened_from_config = _prepare(target, options)
    runtime = get_runtime()
    opening = _opening(target, options)
    name, session = next(opening)
    while True:
        if watch is not None:
            watch(session)
        _close_existing(name)
        _start(runtime, session, name, began)
        failure: BaseException | None = None
        try:
            runtime.call(session.wait_ready)
        except BaseException as exc:  # noqa: BLE001 - handed to the opening, which decides
            runtime.call(session.close)
            failure = _opening_failed(session, name, exc)
        try:
            name, session = opening.send(failure)
        except StopIteration as opened:
            return opened_from_config(opened.value)  # type: ignore[no-any-return]
        except BaseException:
            runtime.call(session.close)  # not registered (close_all came first): its server is stopped
            raise


async def aconnect(
    target: str | Sequence[str] | None = None,
    *,
    name: str | None = D.name,
    era: str = D.era,
    timeout: float | None = D.timeout,
    env: Mapping[str, str] | None = D.env,
    cwd: str | Path | None = D.cwd,
    headers: Mapping[str, str] | None = D.headers,
    transport: str = D.transport,
    bearer_token_env: str | None = D.bearer_token_env,
    secrets: Sequence[str] = D.secrets,
    protocol_version: str | None = D.protocol_version,
    probe_timeout: float = D.probe_timeout,
    capabilities: dict[str, Any] | None = D.capabilities,
    handlers: Mapping[str, Handler] | None = D.handlers,
    trace_capacity: int | None = D.trace_capacity,
    roots: Any = D.roots,
    sampling: Any = D.sampling,
    elicitation: Any = D.elicitation,
    config: str | None = D.config,
    config_file: str | Path | None = D.config_file,
    consent: bool | None = D.consent,
    apps: bool | None = D.apps,
    auth: Any = D.auth,
    check_frames: bool = D.check_frames,
    strict: bool = D.strict,
    proxy: str | None = D.proxy,
    verify: Any = D.verify,
) -> Connection:
    """The awaitable twin of `connect`, with the same arguments (and the same defaults)."""
    options = ConnectOptions(
        name=name,
        era=era,
        timeout=timeout,
        env=env,
        cwd=cwd,
        headers=headers,
        transport=transport,
        bearer_token_env=bearer_token_env,
        secrets=secrets,
        protocol_version=protocol_version,
        probe_timeout=probe_timeout,
        capabilities=capabilities,
        handlers=handlers,
        trace_capacity=trace_capacity,
        roots=roots,
        sampling=sampling,
        elicitation=elicitation,
        config=config,
        config_file=config_file,
        consent=consent,
        apps=apps,
        auth=auth,
        check_frames=check_frames,
        strict=strict,
        proxy=proxy,
        verify=verify,
    )
    began = _closes
    target, options, opened_from_config = _prepare(target, options)
    runtime = get_runtime()
    opening = _opening(target, options)
    name, session = next(opening)
    while True:
        old = _registry.get(name)
        if old is not None:
            await old.aclose()
        _start(runtime, session, name, began)
        failure: BaseException | None = None
        try:
            await runtime.acall(session.wait_ready)
        except BaseException as exc:  # noqa: BLE001 - handed to the opening, which decides
            await runtime.acall(session.close)
            failure = _opening_failed(session, name, exc)
        try:
            name, session = opening.send(failure)
        except StopIteration as opened:
            return opened_from_config(opened.value)  # type: ignore[no-any-return]
        except BaseException:
            await runtime.acall(session.close)  # not registered (close_all came first): its server is stopped
            raise


def _prepare(
    target: str | Sequence[str] | None, options: ConnectOptions
) -> tuple[str | Sequence[str], ConnectOptions, Callable[[Any], Any]]:
    """`configured.prepare`; a plain target with no configuration options skips the configuration layer
    (its files, formats and consent store are imported with the first `config=NAME`)."""
    if target is not None and options.config is None and options.config_file is None and options.consent is None:
        return target, options, _as_is
    from . import configured

    return configured.prepare(target, options)


def _as_is(conn: Any) -> Any:
    return conn


def _opening(target: str | Sequence[str], options: ConnectOptions) -> Opening:
    """The attempts to open `target`: a second only when a cached era verdict failed."""
    for attempt in (1, 2):
        base, session = prepare_session(target, options)
        name = options.name or _default_name(base)
        features = install_features(
            session, name, roots=options.roots, sampling=options.sampling, elicitation=options.elicitation
        )
        features.apps.enabled = frontend.current().apps_default() if options.apps is None else bool(options.apps)
        if features.apps.enabled:
            session.client.capabilities = app_meta.declare(session.client.capabilities)
        failure = yield name, session
        if failure is None:
            remember_era(target, session)
            return _register(Connection(name, session, features, on_close=_forget))
        if attempt == 1 and forget_stale_era(target, session, failure):
            continue  # the cached era was wrong for this server now: probe afresh
        raise failure
    raise AssertionError("unreachable")


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
    global _closes
    with _registry_lock:
        sessions = [conn.session for conn in _registry.values()] + list(_opening_now)
        _registry.clear()
        _opening_now.clear()
        _closes += 1
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


def _start(runtime: Runtime, session: Session, name: str, began: int) -> None:
    """Start a connect's session, known to `close_all` from now on; none if one came since it began."""
    with _registry_lock:
        if _closes != began:
            raise ConnectionClosed(f"{name}: not connected: close_all() was called while it was connecting")
        _opening_now.add(session)
    runtime.spawn(session.run)  # after a close_all took it, the session opens nothing


def _opening_failed(session: Session, name: str, exc: BaseException) -> BaseException:
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


def _register(conn: Connection) -> Connection:
    """`remember` a connection that came up, unless `close_all` took it meanwhile (it closes it)."""
    with _registry_lock:
        if conn.session not in _opening_now:
            raise ConnectionClosed(f"{conn.name}: not connected: close_all() was called while it was connecting")
        _opening_now.discard(conn.session)
        return remember(conn)


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
    """`base`, or `base-2`, `base-3`, ... whichever is not in use (a closed connection's name is free)."""
    name, n = base, 2
    with _registry_lock:
        while name in _registry and not _registry[name].closed:
            name, n = f"{base}-{n}", n + 1
    return name


get_runtime().on_stop(_close_all_quickly)
