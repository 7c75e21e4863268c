"""The exceptions the public API raises.

Their text often quotes a server (an error message, stderr lines): shown, it never carries
a terminal control sequence (`base.text.plain`). Known secrets are the session's to redact
(`session.redaction.Redactor.exception`) before an error reaches its caller.

In IPython they show as one line, not a traceback through our internals: IPython asks an
exception for `_render_traceback_()`. Asked again by `%tb` (the exception no longer being
handled then), they give the whole traceback.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

from .public import public
from .text import plain


def _render_traceback(exc: BaseException) -> list[str]:
    """IPython's hook: one line while the cell that raised `exc` fails; the full traceback later (`%tb`)."""
    if sys.exc_info()[1] is exc:
        return [f"{type(exc).__name__}: {exc}"]
    return [line.rstrip("\n") for line in traceback.format_exception(type(exc), exc, exc.__traceback__)]


@public
class McpNotebookError(Exception):
    """Base class of every error this package raises on purpose."""

    def __str__(self) -> str:
        return plain(super().__str__())

    def _render_traceback_(self) -> list[str]:
        return _render_traceback(self)


@public
class Interrupted(KeyboardInterrupt):
    """Ctrl-C ended a blocking call; the message says what the server was told.

    A KeyboardInterrupt still, so whatever stops on Ctrl-C stops on it.
    """

    def __str__(self) -> str:
        return plain(super().__str__())

    def _render_traceback_(self) -> list[str]:
        return _render_traceback(self)


@public
class McpError(McpNotebookError):
    """The server answered a request with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None, *, method: str | None = None) -> None:
        self.code = code
        self.message = message
        self.data = data
        self.method = method
        where = f"{method}: " if method else ""
        super().__init__(f"{where}{message} (code {code})")


@public
class ConnectionClosed(McpNotebookError):
    """The connection is gone: closed by us, or the server exited or hung up, so nothing more
    can be sent on it (a transport whose peer is gone raises it too). Connect again."""

    def __init__(self, reason: str, *, exit_code: int | None = None, stderr_tail: tuple[str, ...] = ()) -> None:
        self.reason = reason
        self.exit_code = exit_code
        self.stderr_tail = stderr_tail
        super().__init__(reason)


@public
class RequestTimeout(McpNotebookError, TimeoutError):
    """No response within the request's timeout; the request was cancelled."""


@public
class HandshakeError(McpNotebookError):
    """The connection could not be set up (bad version, bad reply, server gone)."""


@public
class UsageError(McpNotebookError, ValueError):
    """The caller asked for something that cannot be done as asked (bad name, bad option)."""


@public
class TransportError(McpNotebookError):
    """The transport could not reach or understand the server; the message says what to do.

    `status` is the HTTP status when there was one.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


@public
class AuthorizationError(TransportError):
    """OAuth authorization of an HTTP server failed or was refused; the message says which step and why."""


@public
class ProtocolViolation(McpNotebookError):
    """The server answered in a way the protocol does not allow (e.g. an unknown resultType)."""


class ReissuableError(TransportError):
    """A transport failure after which the session re-issues the request once, with a new id:
    a 2026-07-28 response stream that ended before its response.

    Not public: to a user it is a `TransportError`, which is what the request fails with if the
    re-issued one breaks too (`session.inbound.Inbound.send_failed`).
    """


# Earlier names, kept for code that catches them (both are in `mcp_notebook.__all__`): a
# transport whose peer was gone raised `TransportClosed`, which to a user is a closed connection;
# a response stream that broke raised `StreamBroken`, which to a user is a transport failure.
TransportClosed = ConnectionClosed
StreamBroken = TransportError
