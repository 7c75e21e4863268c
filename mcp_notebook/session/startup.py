"""Why a session could not be set up, in words a user can act on: the one interesting exception
out of the task group's, turned into a `HandshakeError` that says what to check.

Pure functions of the failure, the hangup (if the server went away) and the transport; the
session calls them once, when its run ends before it was ready.
"""

from __future__ import annotations

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
        return HandshakeError(f"{closed.reason} during the handshake{quoted(closed.stderr_tail)}")
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
