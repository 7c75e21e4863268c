"""A plain function handed to another thread, with the future of what it returns.

`handed(fn, *args)` gives the callable to run there (an event loop's `call_soon_threadsafe`
takes it) and the `concurrent.futures.Future` the caller waits on or wraps for asyncio; the
function's exception, whatever it is, is handed over the same way, never raised there.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


def handed(fn: Callable[..., T], *args: Any) -> tuple[Callable[[], None], Future[T]]:
    """The callable that runs `fn(*args)` and settles the future, and that future."""
    done: Future[T] = Future()

    def run() -> None:
        try:
            done.set_result(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            done.set_exception(exc)

    return run, done
