"""Opening connections: `connect` and `aconnect`, over one opening path.

`connect` and `aconnect` take the same options, written once: `ConnectOptions`'s fields give
both their signature and defaults (`options.options_of`). They share one opening path:
`_opening` is a generator of the attempts (a remembered era verdict that no longer holds is
dropped, and the server probed afresh, once), which `connect` drives in the caller's thread
and `aconnect` awaits. What comes up is registered by
name in `registry`, which also closes the connects under way when `close_all` runs. Ctrl-C
while connecting closes the connection under way at once (an OAuth flow waiting for the user
included) and raises `Interrupted`.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

from ...runtime import get_runtime
from ...session.session import Session
from ..connection import Connection
from . import registry
from .features import install as install_features
from .options import Arguments, ConnectOptions, options_of
from .registry import aclose_existing, close_existing, default_name, opening_failed, register, start
from .registry import close_all as close_all
from .registry import connections as connections
from .registry import get_connection as get_connection
from .reload import watched_paths
from .restart import Restarter
from .targets import forget_stale_era, prepare_session, remember_era

# One attempt to open: the connection's name and its session, not yet started. The driver
# sends back None once the session is ready, or the exception that stopped it (the session
# closed already); the generator returns the open Connection or raises.
Opening = Generator[tuple[str, Session], BaseException | None, Connection]


@options_of(Arguments)
def connect(target: str | Sequence[str] | None, options: ConnectOptions) -> Connection:
    """Connect to an MCP server, in whichever protocol era it speaks.

    `target` is a server command (an argv list or a shell-style string, run over stdio)
    or an http(s) URL (Streamable HTTP, falling back to HTTP+SSE; `transport="http"`
    forbids the fallback, `"sse"` forces it). `era` is "auto" (probe with
    server/discover, and fall back to the legacy handshake on an answer that is not modern;
    over stdio the handshake is offered beside a probe unanswered after `probe_timeout`
    seconds, and a late DiscoverResult still wins; the
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

    `reload=True` restarts a stdio server when the files its command names change (`python
    server.py`: server.py), under the same connection, as `conn.reconnect()` does.
    """
    return open_connection(target, options)


def open_connection(
    target: str | Sequence[str] | None, options: ConnectOptions, watch: Callable[[Session], None] | None = None
) -> Connection:
    """`connect` with its options gathered; `watch` sees each session tried before it starts
    (the doctor reads their traces, a failed one's too)."""
    began = registry.closes
    target, options, opened_from_config = _prepare(target, options)
    runtime = get_runtime()
    opening = _opening(target, options)
    name, session = next(opening)
    while True:
        if watch is not None:
            watch(session)
        close_existing(name)
        start(runtime, session, name, began)
        failure: BaseException | None = None
        try:
            runtime.call(session.wait_ready)
        except BaseException as exc:  # noqa: BLE001 - handed to the opening, which decides
            runtime.call(session.close)
            failure = opening_failed(session, name, exc)
        try:
            name, session = opening.send(failure)
        except StopIteration as opened:
            return opened_from_config(opened.value)  # type: ignore[no-any-return]
        except BaseException:
            runtime.call(session.close)  # not registered (close_all came first): its server is stopped
            raise


@options_of(Arguments)
async def aconnect(target: str | Sequence[str] | None, options: ConnectOptions) -> Connection:
    """The awaitable twin of `connect`, with the same arguments (and the same defaults)."""
    began = registry.closes
    target, options, opened_from_config = _prepare(target, options)
    runtime = get_runtime()
    opening = _opening(target, options)
    name, session = next(opening)
    while True:
        await aclose_existing(name)
        start(runtime, session, name, began)
        failure: BaseException | None = None
        try:
            await runtime.acall(session.wait_ready)
        except BaseException as exc:  # noqa: BLE001 - handed to the opening, which decides
            await runtime.acall(session.close)
            failure = opening_failed(session, name, exc)
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
    paths = watched_paths(target, options) if options.reload else None  # checked before a server starts
    for attempt in (1, 2):
        base, session = prepare_session(target, options)
        name = options.name or default_name(base)
        features = install_features(
            session, name, roots=options.roots, sampling=options.sampling, elicitation=options.elicitation, apps=options.apps
        )
        failure = yield name, session
        if failure is None:
            remember_era(target, session)
            restarter = Restarter(target, options.replace(name=name))
            conn = register(Connection(name, session, features, on_close=restarter.closing, reopen=restarter))
            if paths is not None:
                restarter.watch(conn, paths)
            return conn
        if attempt == 1 and forget_stale_era(target, session, failure):
            continue  # the cached era was wrong for this server now: probe afresh
        raise failure
    raise AssertionError("unreachable")
