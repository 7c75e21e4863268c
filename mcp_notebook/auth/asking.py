"""Asking the user to authorize: the `authorize` callback (the caller's, or the front end's),
run in a worker thread while the flow waits for the URL the browser was sent back to.

The rule kept here: the flow never waits for the user longer than someone waits for the flow.
Cancelled (the connection closed, Ctrl-C while connecting) or unwanted (the last request that
waited for it was given up), it stops waiting at once; the callback's thread is abandoned, to
return when it will (the front end's own waits notice, through `abandoned()`, and return).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread

from ..base.errors import AuthorizationError
from ..base.text import plain


async def ask_user(authorize: Callable[[str], str], url: str, unwanted: anyio.Event | None) -> str:
    """The URL the browser was sent back to, as `authorize(url)` returns it; an
    AuthorizationError when it fails or returns something else, or `unwanted` is set first."""
    answered: list[Any] = []
    async with anyio.create_task_group() as tg:
        if unwanted is not None:
            tg.start_soon(_cancel_when, unwanted, tg.cancel_scope)
        try:
            answered.append(await anyio.to_thread.run_sync(authorize, url, abandon_on_cancel=True))
        except AuthorizationError as exc:
            answered.append(exc)
        except Exception as exc:  # noqa: BLE001 - the user's callback: its failure ends this flow only
            answered.append(AuthorizationError(f"authorization was not completed: {plain(exc) or type(exc).__name__}"))
        tg.cancel_scope.cancel()
    if not answered:
        raise AuthorizationError("authorization given up: no request waits for it any more")
    if isinstance(answered[0], AuthorizationError):
        raise answered[0]
    if not isinstance(answered[0], str):
        raise AuthorizationError("the authorize callback must return the URL the browser was sent back to")
    return answered[0]


async def _cancel_when(event: anyio.Event, scope: anyio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
