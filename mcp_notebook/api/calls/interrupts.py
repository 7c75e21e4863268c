"""Ctrl-C in a blocking call: the `Interrupted` that says, in one line, what the server was told.

The request itself is stopped where it waits (`Connection._round_trip`, `exchange.request`,
or the runtime cancelling its coroutine, which abandons the request on the loop); this
module only words the outcome, from what the session does when it abandons a request.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ...base.errors import Interrupted
from ...runtime import get_runtime
from ...session.session import Session

T = TypeVar("T")


def interrupted(session: Session, *, stopped: bool = True, task: bool = False) -> Interrupted:
    """What Ctrl-C did to the request it stopped (`stopped` False: it had already ended)."""
    if not stopped:
        return Interrupted("interrupted; the request had already ended, so the server was told nothing")
    if task:
        return Interrupted("cancelled; the server was sent tasks/cancel")
    if session.era == "modern" and session.transport.kind != "stdio":
        return Interrupted("cancelled; the request's response stream was closed, which cancels it in 2026-07-28")
    if session.closed:
        return Interrupted("cancelled; the connection is closed, so the server was told nothing")
    return Interrupted("cancelled; the server was sent notifications/cancelled")


def call(session: Session, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
    """`runtime.call` for a request on `session`: Ctrl-C cancels it there (which tells the server)
    and raises `Interrupted`."""
    try:
        return get_runtime().call(fn, *args)
    except Interrupted:
        raise
    except KeyboardInterrupt as exc:
        raise interrupted(session) from exc
