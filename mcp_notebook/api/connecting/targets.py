"""From a target, a server command or a URL, to a session ready to start.

It decides the transport (stdio, HTTP), registers credentials with the trace before any
frame is recorded, and chooses the era to open in: as asked, implied by a pinned version
or transport, or remembered from an earlier probe of the same server, in this kernel or
another (`era_memory`: a server remembered legacy is not probed). The HTTP transport
(and with it httpx2) is imported with the first URL, so `import mcp_notebook` stays light.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import ssl
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ...base.errors import HandshakeError, UsageError
from ...protocol.versions import LEGACY_VERSIONS, MODERN_VERSIONS
from ...session.era import AUTO, LEGACY, era_named, era_of_version
from ...session.session import Session
from ...session.trace import Trace
from ...transports.base import Transport
from ...transports.stdio import StdioTransport
from ...transports.urls import is_secret_name, redact_url
from . import era_memory
from .authorization import auth_hook
from .options import ConnectOptions
from .settings import defaults

if TYPE_CHECKING:
    from ...transports.http import HttpTransport
    from ...transports.http_client import HttpSettings

SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".sh")
REMEMBERED = "cache: an earlier probe of the same server"


def prepare_session(target: str | Sequence[str], options: ConnectOptions, trace: Trace | None = None) -> tuple[str, Session]:
    """A session for `target` (a command or a URL), not yet started, and a name for it.

    The name is `options.name`, or a base for one taken from the command's script or the URL's host.
    `trace`: the trace to record into (a restarted server's connection keeps its own), else a new one.
    """
    if is_url(target):
        assert isinstance(target, str)
        check_url(target)
    era, era_source = _choose_era(target, options.era, options.protocol_version, options.transport)
    capacity = options.trace_capacity if options.trace_capacity is not None else defaults.trace_capacity
    if trace is None:
        trace = Trace(capacity, max_bytes=defaults.trace_max_bytes)
    if is_url(target):
        assert isinstance(target, str)
        wire: Transport = _http_transport(target, options, trace)
        default_name = urlsplit(target).hostname or "http"
    else:
        if options.headers or options.bearer_token_env or options.transport != "auto" or options.auth not in ("auto", None):
            raise UsageError("headers, bearer tokens, OAuth and the HTTP transport choice apply to URLs, not to commands")
        if options.proxy is not None or options.verify is not True:
            raise UsageError("proxy and verify apply to URLs, not to commands")
        argv = shlex.split(target) if isinstance(target, str) else [str(part) for part in target]
        if not argv:
            raise UsageError("the server command is empty")
        for secret in options.secrets:
            trace.add_secret(secret)
        _check_program(argv[0], {**os.environ, **(options.env or {})}.get("PATH"))
        cwd = str(options.cwd) if options.cwd is not None else None
        wire = StdioTransport(argv, env=options.env, cwd=cwd, events=trace.event, max_frame_bytes=defaults.max_frame_bytes)
        default_name = _command_stem(argv)
    session = Session(
        wire,
        trace=trace,
        timeout=options.timeout,
        era=era,
        era_source=era_source,
        protocol_version=options.protocol_version,
        probe_timeout=options.probe_timeout,
        capabilities=options.capabilities,
        check_frames=options.check_frames,
        strict=options.strict,
    )
    for method, handler in (options.handlers or {}).items():
        session.request_handlers.set(method, handler)
    return options.name or default_name, session


def _choose_era(target: str | Sequence[str], era: str, protocol_version: str | None, transport: str) -> tuple[str, str | None]:
    """The era to open in and why: as asked, implied by a pinned version or transport, or remembered
    legacy (a server remembered modern is probed as any other: the probe is its first request)."""
    try:
        asked = era_named(era)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if protocol_version is not None:
        implied = era_of_version(protocol_version)
        if implied is None:
            known = ", ".join(LEGACY_VERSIONS + MODERN_VERSIONS)
            raise UsageError(f"unknown protocol version {protocol_version!r}; use one of: {known}")
        if asked not in (None, implied):
            raise UsageError(f"protocol version {protocol_version} is a {implied}-era version, not {era}")
        return implied.name, f"pinned: protocol version {protocol_version}"
    if asked is not None:
        return asked.name, "pinned"
    if transport == "sse":
        return LEGACY.name, "pinned: the HTTP+SSE transport is handshake-era only"
    if era_memory.recall(target) == LEGACY.name:
        return LEGACY.name, REMEMBERED
    return AUTO, None


def is_url(target: str | Sequence[str]) -> bool:
    return isinstance(target, str) and target.lstrip().lower().startswith(("http://", "https://"))


def check_url(url: str) -> None:
    """A URL that cannot be connected to as written (a bad port, a broken IPv6 address, no
    host) is a one-line UsageError, not a traceback from deep in the HTTP client."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        shown = re.sub(r"//[^/?#]*@", "//", url.strip()).partition("?")[0]  # no password, no query
        raise UsageError(f"{shown} is not a valid URL: {exc}") from None
    shown = redact_url(url.strip())
    if not parts.hostname:
        raise UsageError(f"{shown} names no host; write it as http://HOST:PORT/PATH")
    if port == 0:
        raise UsageError(f"{shown}: port 0 cannot be connected to; use the server's port (1-65535)")


def _check_program(program: str, path: str | None) -> None:
    """Say what is wrong with a command that cannot run, where the transport would only say
    "not found on PATH": a directory, a file that is not executable, a script named without ./"""
    if shutil.which(program, path=path) is not None or not os.path.exists(program):
        return  # found, or truly not there: the transport says so
    if os.path.isdir(program):
        raise UsageError(f"{program!r} is a directory, not a program; give the server's command (python {program}/server.py)")
    if not os.access(program, os.X_OK):
        raise UsageError(f"{program!r} is not executable: run it with its interpreter (e.g. python {program}), or chmod +x it")
    raise UsageError(f"{program!r} is not on PATH (a command without a slash is looked up there); write ./{program}")


def _http_transport(url: str, options: ConnectOptions, trace: Trace) -> HttpTransport:
    """An HTTP transport whose credentials the trace will never show."""
    from ...transports.http import HttpTransport  # httpx2 is imported with the first URL, not with the package

    mode, bearer_token_env = options.transport, options.bearer_token_env
    if mode not in ("auto", "http", "sse"):
        raise UsageError(f"unknown transport {mode!r}; use auto, http (Streamable HTTP only) or sse (HTTP+SSE)")
    all_headers = dict(options.headers or {})
    if bearer_token_env is not None:
        token = os.environ.get(bearer_token_env)
        if not token:
            raise UsageError(f"environment variable {bearer_token_env} is not set (it should hold the bearer token)")
        all_headers["Authorization"] = f"Bearer {token}"
    for key, value in all_headers.items():
        if is_secret_name(key) or key.lower() == "authorization":
            trace.add_secret(value)
            trace.add_secret(value.partition(" ")[2] or value)
    for secret in options.secrets:
        trace.add_secret(secret)
    for part in urlsplit(url).query.split("&"):
        key, _, value = part.partition("=")
        if value and is_secret_name(key):
            trace.add_secret(value)
    http = http_settings(options)
    for proxy in http.proxies().values():
        if password := urlsplit(proxy).password:
            trace.add_secret(password)
    return HttpTransport(
        url.strip(),
        headers=all_headers,
        mode=mode,
        events=trace.event,
        max_frame_bytes=defaults.max_frame_bytes,
        auth=auth_hook(url.strip(), options.auth, all_headers, trace, http),
        http=http,
    )


def http_settings(options: ConnectOptions) -> HttpSettings:
    """The HTTP settings of a connection: its own options, then `%config McpNotebook`'s."""
    from ...transports.http_client import HttpSettings

    verify = options.verify
    if not isinstance(verify, (bool, str, ssl.SSLContext)):
        raise UsageError(f"verify must be True, False, a CA bundle's path or an ssl.SSLContext; got {verify!r:.80}")
    if isinstance(verify, str) and not os.path.exists(os.path.expanduser(verify)):
        raise UsageError(f"verify: no CA bundle at {verify!r}")
    proxy = options.proxy if options.proxy is not None else defaults.proxy
    return HttpSettings(
        proxy=proxy,
        verify=os.path.expanduser(verify) if isinstance(verify, str) else verify,
        read_timeout=defaults.http_read_timeout,
    )


def remember_era(target: str | Sequence[str], session: Session) -> None:
    """Keep what the probe found, for later connects to the same server, in any kernel."""
    if (session.era_source or "").startswith("probe"):
        era_memory.remember(target, session.era)


def forget_stale_era(target: str | Sequence[str], session: Session, exc: BaseException) -> bool:
    """True (and the cache entry gone) when a cached era verdict just failed to open. Not when an
    authorization ran and failed: that is not the era's fault, and probing afresh would ask the
    person again."""
    if getattr(getattr(session.transport, "auth", None), "authorizations", 0):  # an OAuthFlow that asked
        return False
    if isinstance(exc, HandshakeError) and session.era_source == REMEMBERED:
        era_memory.forget(target)
        return True
    return False


def _command_stem(argv: list[str]) -> str:
    """The script's stem if the command runs one (`python server.py` -> server), else the program's.

    An argument right after an option is that option's value (`node -r preload.cjs index.js`).
    """
    scripts = [
        Path(arg).stem
        for before, arg in zip(argv, argv[1:], strict=False)
        if not arg.startswith("-") and not before.startswith("-") and Path(arg).suffix in SCRIPT_SUFFIXES
    ]
    return scripts[0] if scripts else Path(argv[0]).stem
