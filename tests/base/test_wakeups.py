"""Wake-ups held back by a thread settling many calls, then sent together: each blocked thread
once, each event loop through one `call_soon_threadsafe`, and always sent, whatever ends the block."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from mcp_notebook.base import wakeups


class CountingLoop(asyncio.SelectorEventLoop):
    """An event loop that counts the callbacks other threads hand it."""

    def __init__(self) -> None:
        super().__init__()
        self.handed = 0

    def call_soon_threadsafe(self, callback: Any, *args: Any, context: Any = None) -> asyncio.Handle:
        self.handed += 1
        return super().call_soon_threadsafe(callback, *args, context=context)


def locked() -> threading.Lock:
    lock = threading.Lock()
    lock.acquire()
    return lock


def run_pending(loop: asyncio.AbstractEventLoop) -> None:
    loop.run_until_complete(asyncio.sleep(0))


def test_outside_a_held_block_a_wake_up_is_sent_at_once() -> None:
    lock = locked()
    wakeups.release(lock)
    assert not lock.locked()
    loop = CountingLoop()
    try:
        future = loop.create_future()
        wakeups.resolve(loop, future)
        assert loop.handed == 1
        run_pending(loop)
        assert future.done()
    finally:
        loop.close()


def test_held_wake_ups_go_out_as_the_block_ends_one_handoff_per_loop() -> None:
    loops = [CountingLoop(), CountingLoop()]
    try:
        futures = [[loop.create_future() for _ in range(3)] for loop in loops]
        locks = [locked() for _ in range(3)]
        with wakeups.held():
            for lock in locks:
                wakeups.release(lock)
            for loop, mine in zip(loops, futures, strict=True):
                for future in mine:
                    wakeups.resolve(loop, future)
            assert all(lock.locked() for lock in locks)
            assert [loop.handed for loop in loops] == [0, 0]
        assert not any(lock.locked() for lock in locks)
        assert [loop.handed for loop in loops] == [1, 1]
        for loop, mine in zip(loops, futures, strict=True):
            run_pending(loop)
            assert all(future.done() for future in mine)
    finally:
        for loop in loops:
            loop.close()


def test_a_nested_block_leaves_the_sending_to_the_outer_one() -> None:
    lock = locked()
    with wakeups.held():
        with wakeups.held():
            wakeups.release(lock)
        assert lock.locked()
    assert not lock.locked()


def test_wake_ups_are_sent_when_the_block_fails() -> None:
    lock = locked()
    with pytest.raises(KeyError), wakeups.held():
        wakeups.release(lock)
        raise KeyError("the reader failed")
    assert not lock.locked()


def test_a_block_holds_only_its_own_threads_wake_ups() -> None:
    mine, theirs = locked(), locked()
    released_there = threading.Event()

    def elsewhere() -> None:
        wakeups.release(theirs)
        released_there.set()

    with wakeups.held():
        wakeups.release(mine)
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        assert released_there.is_set() and not theirs.locked()
        assert mine.locked()
    assert not mine.locked()


def test_a_closed_loop_is_skipped_and_the_rest_still_woken() -> None:
    closed = CountingLoop()
    future = closed.create_future()
    closed.close()
    lock = locked()
    with wakeups.held():
        wakeups.resolve(closed, future)
        wakeups.release(lock)
    assert not lock.locked()
    assert not future.done()
