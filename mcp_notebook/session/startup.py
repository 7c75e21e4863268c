"""Why a session could not be set up, in words a user can act on: the one interesting exception
out of the task group's, turned into a `HandshakeError` that says what to check.

Functions of the failure, the hangup (if the server went away) and the transport; the session
calls them once, when its run ends before it was ready (the era probe too, when its server exits).
"""

from __future__ import annotations

import os
import re
import shutil
import sys

from ..base.errors import ConnectionClosed, HandshakeError, McpError, RequestTimeout, TransportError
from ..base.stderr import quoted
from ..transports.base import Transport

if sys.version_info < (3, 11):
    from exceptiongroup import BaseExceptionGroup


def unwrap(exc: BaseException) -> BaseException:
    """The one interesting exception inside the exception groups task groups raise."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


async def gone(exc: BaseException, transport: Transport) -> BaseException:
    """`exc`, or, when it is a failed write to a server process that is going away, the hangup it
    heralds: a write knows only the broken pipe; the exit code and the server's last stderr lines
    say why (waited for as a hangup waits, 2 s at most)."""
    if not isinstance(exc, ConnectionClosed) or exc.exit_code is not None or transport.kind != "stdio":
        return exc
    code = await transport.wait_exit(timeout=2.0)
    if code is None:
        return exc
    return ConnectionClosed(f"the server exited with code {code}", exit_code=code, stderr_tail=tuple(transport.stderr_tail))


def startup_error(exc: BaseException, hangup: ConnectionClosed | None, transport: Transport) -> BaseException:
    """Say why the connection could not be set up, in words a user can act on."""
    if isinstance(exc, HandshakeError):
        return exc
    if isinstance(exc, TransportError):
        return HandshakeError(str(exc))
    if isinstance(exc, FileNotFoundError):
        return HandshakeError(f"{exc}; check the command, or give the full path")
    if isinstance(exc, ConnectionClosed) or hangup is not None:
        closed = hangup or exc
        assert isinstance(closed, ConnectionClosed)
        hint = other_python(closed.stderr_tail, transport)
        return HandshakeError(f"{closed.reason} during the handshake{quoted(closed.stderr_tail)}{hint}")
    if isinstance(exc, RequestTimeout):
        if transport.kind == "stdio":
            return HandshakeError(f"the server did not answer initialize in time ({exc}); is it an MCP server on stdio?")
        return HandshakeError(
            f"{transport.describe()} took the connection but sent no answer to initialize in time ({exc}); "
            "is the URL an MCP endpoint, and is the server responding?"
        )
    if isinstance(exc, McpError):
        return HandshakeError(f"the server refused initialize: {exc}")
    if isinstance(exc, OSError):
        return HandshakeError(f"could not start the server: {exc}")
    return exc


MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")


def other_python(stderr_tail: tuple[str, ...] | None, transport: Transport) -> str:
    """A hint when a stdio server's `python` is not this kernel's and lacks a module: the usual
    cause is a notebook server started without its venv on PATH, so `python` is the system's."""
    command = getattr(transport, "command", None)
    missing = MISSING_MODULE.search("\n".join(stderr_tail or ()))
    if transport.kind != "stdio" or not command or not missing:
        return ""
    program = command[0]
    if not os.path.basename(program).startswith("python"):
        return ""
    found = shutil.which(program)
    if found is None or os.path.dirname(os.path.abspath(found)) == os.path.dirname(os.path.abspath(sys.executable)):
        return ""
    return (
        f"; the server's {program!r} is {found}, not this kernel's Python ({sys.executable}), and has no module "
        f"{missing.group(1)!r}: start it with the kernel's (`sys.executable`), or install {missing.group(1)!r} for {found}"
    )
