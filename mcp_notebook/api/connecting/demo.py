"""`mcp_notebook.demo()`: start the bundled demo server and connect to it, in one call.

API level: nothing here imports IPython. Inside IPython (where IPython is already
imported) the `%mcp` magics are loaded too, silently, so the call fits a first cell.
"""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any

import anyio

from ...auth.config import OAuth
from ...base.errors import AuthorizationError
from ...runtime import get_runtime
from ..connection import Connection, session_of
from .connect import connect
from .options import DEFAULT_TIMEOUT

if TYPE_CHECKING:
    from ... import demo_server

DEMO_KEEPALIVE = 2.0  # seconds: often enough that a health widget visibly moves
CLIENT_ERA = {"legacy": "legacy", "modern": "modern", "both": "auto"}
OAUTH_SWITCHES = ("token_seconds", "token_calls", "step_up_tool", "refreshes", "issued_log")

_http_servers: dict[str, demo_server.DemoServerProcess] = {}  # connection name -> its HTTP demo server
_lock = threading.Lock()


def demo(
    name: str = "demo",
    *,
    transport: str = "stdio",
    era: str = "legacy",
    client_era: str | None = None,
    ping_interval: float | None = None,
    keepalive: float | None = DEMO_KEEPALIVE,
    timeout: float | None = DEFAULT_TIMEOUT,
    load_magics: bool = True,
    apps: bool | None = None,
    elicitation: Any = None,
    sampling: Any = None,
    oauth: bool = False,
    **faults: Any,
) -> Connection:
    """Start the demo MCP server and connect to it; the open `Connection`, called `name`.

    `transport` is "stdio" (a child process spoken to over its pipes) or "http" (a child
    process listening on 127.0.0.1, Streamable HTTP; it stops when the connection
    closes). `era` is the server's: "legacy", "modern" or "both"; the client opens in
    the same era, or probes ("auto") for "both", unless `client_era` says otherwise.
    `ping_interval` makes the server ping us every so many seconds. `keepalive` is this
    connection's keepalive interval in seconds (2 s by default, so a health widget
    moves; None keeps the `%config McpNotebook` defaults). `faults` are the demo
    server's fault switches (`pong_delay_ms=200`, `ignore_pings=True`, `flood=10`, ...;
    see `mcp_notebook.demo_server`). `elicitation` and `sampling` are `connect()`'s: they
    answer the server's `ask_name` and `summarize` tools. `apps` is `connect`'s (MCP Apps: the
    server's counters view). Inside IPython the `%mcp` magics
    are loaded too.

    `oauth=True` (HTTP only) protects the server with its own authorization server, which
    approves every request at once; the client authorizes unattended by following that
    approval's redirect (`follow_redirect`), and keeps no token on disk. Its fault switches
    go with the others: `token_seconds=N`, `token_calls=N` (a token is good for N tool
    calls), `step_up_tool="add"` (that tool needs another scope: 403, step-up),
    `refreshes=N` (later refreshes fail: a new authorization).
    """
    if transport not in ("stdio", "http"):
        raise ValueError(f"transport must be 'stdio' or 'http', not {transport!r}")
    oauth_switches = {key: faults.pop(key) for key in OAUTH_SWITCHES if key in faults}
    if oauth_switches and not oauth:
        raise ValueError(f"{next(iter(oauth_switches))} is an OAuth fault switch: it needs oauth=True")
    if oauth and transport != "http":
        raise ValueError("oauth=True needs transport='http'")
    if era not in CLIENT_ERA:
        raise ValueError(f"era must be one of {tuple(CLIENT_ERA)}, not {era!r}")
    from ... import demo_server  # a separate program: imported when a demo starts, not with the package

    chosen_era = client_era or CLIENT_ERA[era]
    if load_magics:
        _load_magics()
    _stop_server(name)
    if transport == "stdio":
        argv = demo_server.command("stdio", era, ping_interval=ping_interval, **faults)
        conn = connect(argv, name=name, era=chosen_era, timeout=timeout, elicitation=elicitation, sampling=sampling, apps=apps)
    else:
        settings = demo_server.OAuthSettings(**oauth_switches) if oauth else None
        process, url = demo_server.start_http(era, ping_interval=ping_interval, oauth=settings, **faults)
        auth: OAuth | str = OAuth(authorize=follow_redirect, remember=False) if oauth else "auto"
        try:
            conn = connect(
                url,
                name=name,
                era=chosen_era,
                timeout=timeout,
                transport="http",
                elicitation=elicitation,
                sampling=sampling,
                apps=apps,
                auth=auth,
            )
        except BaseException:
            process.stop()
            raise
        with _lock:
            _http_servers[name] = process
        get_runtime().spawn(_stop_when_closed, conn, process)
    if keepalive is not None:
        conn.keepalive(interval=keepalive)
    return conn


def follow_redirect(url: str) -> str:
    """An `authorize=` callback for an authorization server that approves at once (the demo's):
    it plays the browser, asks for the authorization URL, and returns where it was sent back to."""
    from ...transports.http_client import HttpSettings, sync_client  # with the HTTP stack: imported when a flow asks

    with sync_client(HttpSettings(), timeout=30.0) as client:
        response = client.get(url)
    location = response.headers.get("location")
    if not response.is_redirect or location is None:
        raise AuthorizationError(f"the authorization server answered HTTP {response.status_code}, not a redirect")
    return str(response.url.join(location))


def http_server(name: str = "demo") -> demo_server.DemoServerProcess | None:
    """The HTTP demo server process behind the demo connection `name` (its `url`, `stderr_log`), if any."""
    with _lock:
        return _http_servers.get(name)


def _stop_server(name: str) -> None:
    with _lock:
        process = _http_servers.pop(name, None)
    if process is not None:
        process.stop()


async def _stop_when_closed(conn: Connection, process: demo_server.DemoServerProcess) -> None:
    """Stop the HTTP server once its connection has closed (runs on the session loop)."""
    try:
        await session_of(conn).wait_closed()
    finally:
        with _lock:
            if _http_servers.get(conn.name) is process:
                del _http_servers[conn.name]
        if process.stdin is not None:
            process.stdin.close()  # at once: a server started by start_http() exits when its stdin closes
        await anyio.to_thread.run_sync(process.stop, abandon_on_cancel=True)


def _load_magics() -> None:
    """Load the extension into the running IPython, if any (no output; a no-op when loaded)."""
    ipython_module = sys.modules.get("IPython")
    shell = ipython_module.get_ipython() if ipython_module is not None else None
    if shell is not None and "mcp_notebook" not in shell.extension_manager.loaded:
        shell.extension_manager.load_extension("mcp_notebook")
