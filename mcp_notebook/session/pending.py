"""A call of ours awaiting its outcome, as its caller holds it (`boundary.CallBoundary` starts it).

`Session.call` returns a `PendingCall`. A thread waits with `wait(timeout)` (its own deadline)
or `result()` (the call's); a coroutine on any asyncio loop awaits it (`await pending`, or
`wait_async(timeout)`). Either may `cancel` it, which tells the server, or `interrupt` it
on Ctrl-C, which also words what the server was told.

The threading contract: a call settles once, on whichever thread learns its outcome (the
session loop, or a transport's reading thread), and settling wakes every waiter where it
waits: a lock released for threads, a future set through its own loop's
`call_soon_threadsafe` for coroutines (`base.wakeups`: a reading thread settling a chunk of
answers sends them together). Cancelling runs on the session loop, reached through
the session (`SessionLoop`), and returns once it has happened. Nothing above the session
touches its locks or loop.
"""

from __future__ import annotations

import asyncio
import threading
from _thread import allocate_lock
from collections.abc import Callable, Generator
from typing import Any, Protocol, TypeVar

from ..base import wakeups
from ..base.errors import ConnectionClosed, Interrupted, RequestTimeout

T = TypeVar("T")

CANCEL_GRACE = 5.0  # seconds a cancellation may take on the loop (a task's tasks/cancel included)
_callbacks_lock = threading.Lock()  # registering an awaiting coroutine against settling
Waiter = tuple[asyncio.AbstractEventLoop, "asyncio.Future[None]"]  # a coroutine's loop, and the future it awaits


class SessionLoop(Protocol):
    """What a pending call needs of its session: its loop, and the words for Ctrl-C."""

    def on_loop(self) -> bool: ...

    def run_on_loop(self, fn: Callable[..., T], *args: Any) -> T: ...

    async def arun_on_loop(self, fn: Callable[..., T], *args: Any) -> T: ...

    def interrupted(self, pending: PendingCall, stopped: bool) -> Interrupted: ...

    def abandon(self, request: Any, failure: BaseException, reason: str) -> bool: ...

    async def outwait_user(self) -> bool:
        """On the session loop: wait out an authorization a person is doing; False if none is."""
        ...


def request_timeout(method: str, limit: float) -> RequestTimeout:
    return RequestTimeout(f"{method}: no response within {limit:g} s; the request was cancelled")


class PendingCall:
    """One call in flight, for its caller; subclasses say how it settles and how it stops.

    `limit` is the call's own deadline in seconds (None: none), the session's default unless
    the call asked for another; `lingers` calls (a task) take a moment to stop after `cancel`.
    """

    __slots__ = ("method", "limit", "lingers", "_loop", "_done", "_callbacks")

    def __init__(self, method: str, loop: SessionLoop | None, limit: float | None = None) -> None:
        self.method = method
        self.limit = limit
        self.lingers = False
        self._loop = loop
        self._done = allocate_lock()
        self._done.acquire()  # released once, when it settles
        self._callbacks: list[Waiter] | None = []  # the coroutines awaiting it; None once settled

    # ----- what subclasses say ----------------------------------------------------

    @property
    def settled(self) -> bool:
        raise NotImplementedError

    @property
    def rtt(self) -> float:
        """The round-trip time of its (last) round on the wire, in seconds."""
        raise NotImplementedError

    def outcome(self) -> Any:
        """The result; raises the failure or the JSON-RPC error (only once settled)."""
        raise NotImplementedError

    def stop(self, failure: BaseException, reason: str) -> bool:
        """On the session loop: give up on it, telling the server; False if it had settled."""
        raise NotImplementedError

    def _woken(self) -> None:
        """Settled: wake every waiter, once (any thread)."""
        with _callbacks_lock:
            waiters, self._callbacks = self._callbacks, None
        wakeups.release(self._done)
        for loop, future in waiters or ():
            wakeups.resolve(loop, future)

    # ----- threads ----------------------------------------------------------------

    def wait(self, timeout: float | None = None) -> bool:
        """Block until it settles or `timeout` seconds pass (None: no limit); True once settled.
        A passive wait: neither a timeout nor Ctrl-C stops the call (see `cancel`, `interrupt`)."""
        if self._loop is not None and self._loop.on_loop() and not self.settled:
            raise RuntimeError("a blocking wait on the mcp-notebook event loop thread; await the call there")
        if self._done.acquire(timeout=-1 if timeout is None else max(0.0, timeout)):
            self._done.release()
            return True
        return False

    def result(self) -> Any:
        """Wait for the outcome under the call's own deadline, which cancels it when it passes;
        Ctrl-C cancels it and raises `Interrupted`, saying what the server was told."""
        try:
            if not self.wait(self.limit):
                self._timed_out()
        except KeyboardInterrupt as exc:
            if isinstance(exc, Interrupted):
                raise
            raise self.interrupt() from exc
        return self.outcome()

    def cancel(self, failure: BaseException, reason: str) -> bool:
        """Give up on it from any thread, telling the server; False if it had settled. Returns
        once it has stopped (a lingering call: once its task is cancelled, within the grace)."""
        if self._loop is None or self.settled:
            return False
        stopped = self._loop.run_on_loop(self.stop, failure, reason)
        if stopped and self.lingers:
            self.wait(CANCEL_GRACE + 1)
        return stopped

    def interrupt(self) -> Interrupted:
        """Ctrl-C: cancel it, and the `Interrupted` to raise, which says what the server was told."""
        stopped = False
        try:
            stopped = self.cancel(ConnectionClosed("cancelled by the user"), "cancelled by the user")
        except Exception:  # noqa: BLE001 - the loop is gone: nothing was told
            pass
        assert self._loop is not None
        return self._loop.interrupted(self, stopped)

    def _timed_out(self) -> None:
        limit = self.limit or 0.0
        failure = request_timeout(self.method, limit)
        if self.cancel(failure, f"timed out after {limit:g} s"):
            raise failure

    # ----- coroutines -------------------------------------------------------------

    async def wait_async(self, timeout: float | None = None) -> bool:
        """`wait` for a coroutine on any asyncio loop, without blocking it. One future, which
        settling (through the loop's `call_soon_threadsafe`) or the timeout's timer sets."""
        loop = asyncio.get_running_loop()
        woken: asyncio.Future[None] = loop.create_future()
        waiter = (loop, woken)
        with _callbacks_lock:
            if self._callbacks is None:
                return True
            self._callbacks.append(waiter)
        timer = None if timeout is None else loop.call_later(max(0.0, timeout), _set, woken)
        try:
            await woken
        finally:
            if timer is not None:
                timer.cancel()
            if not self.settled:
                with _callbacks_lock:
                    if self._callbacks is not None and waiter in self._callbacks:
                        self._callbacks.remove(waiter)
        return self.settled

    async def acancel(self, failure: BaseException, reason: str) -> bool:
        """`cancel` for a coroutine, without blocking its loop."""
        if self._loop is None or self.settled:
            return False
        stopped = await self._loop.arun_on_loop(self.stop, failure, reason)
        if stopped and self.lingers:
            await self.wait_async(CANCEL_GRACE + 1)
        return stopped

    async def aresult(self) -> Any:
        """`result` for a coroutine: the call's own deadline cancels it; so does cancelling the
        awaiting task, which tells the server before the cancellation goes on."""
        try:
            waited = await self.wait_async(self.limit)
            while not waited and self._loop is not None and await self._loop.outwait_user():
                waited = await self.wait_async(self.limit)  # the time a person took to authorize does not count
            if not waited:
                limit = self.limit or 0.0
                failure = request_timeout(self.method, limit)
                if await self.acancel(failure, f"timed out after {limit:g} s"):
                    raise failure
        except asyncio.CancelledError:
            try:
                await asyncio.shield(self.acancel(ConnectionClosed("cancelled by the user"), "cancelled by the user"))
            except BaseException:  # noqa: BLE001 - leaving with the cancellation anyway
                pass
            raise
        return self.outcome()

    def __await__(self) -> Generator[Any, None, Any]:
        return self.aresult().__await__()


def _set(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
