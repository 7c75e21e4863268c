"""Waking whoever waits for a settled call: at once, or held back and sent together.

A thread that settles many calls in a row (a transport's reading thread, with a chunk of
answers) holds its wake-ups (`with held():`) and sends them as the chunk ends. Sent one by one,
each wake-up hands the GIL to the woken thread or loop while the reader still has the rest of
the chunk to read, and the two take turns for it frame by frame; held, every blocked thread is
woken once, and every event loop gets one `call_soon_threadsafe` (one write to its self-pipe)
for all its coroutines. Outside `held`, and on any other thread, a wake-up is sent at once. A
held wake-up is always sent, whatever ends the block.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_local = threading.local()


class _Held:
    __slots__ = ("locks", "loops")

    def __init__(self) -> None:
        self.locks: list[Any] = []
        self.loops: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}

    def send(self) -> None:
        for loop, futures in self.loops.items():
            _to_loop(loop, futures)
        for lock in self.locks:
            lock.release()


def release(lock: Any) -> None:
    """Release `lock`, on which a thread may be blocked (held back inside `held`)."""
    batch: _Held | None = getattr(_local, "held", None)
    if batch is None:
        lock.release()
    else:
        batch.locks.append(lock)


def resolve(loop: asyncio.AbstractEventLoop, future: asyncio.Future[None]) -> None:
    """Set `future` (its result None) on its loop, from any thread (held back inside `held`)."""
    batch: _Held | None = getattr(_local, "held", None)
    if batch is None:
        _to_loop(loop, [future])
    else:
        batch.loops.setdefault(loop, []).append(future)


@contextmanager
def held() -> Iterator[None]:
    """Hold this thread's wake-ups until the block ends, then send them (nested: the outer one sends)."""
    if getattr(_local, "held", None) is not None:
        yield
        return
    batch = _local.held = _Held()
    try:
        yield
    finally:
        _local.held = None
        batch.send()


def _to_loop(loop: asyncio.AbstractEventLoop, futures: list[asyncio.Future[None]]) -> None:
    try:
        loop.call_soon_threadsafe(_set_all, futures)
    except RuntimeError:  # that loop has closed: nobody waits there
        pass


def _set_all(futures: list[asyncio.Future[None]]) -> None:
    for future in futures:
        if not future.done():
            future.set_result(None)
