"""The runtime: one daemon thread running one anyio event loop that owns every session.

It bridges synchronous callers (a notebook cell, a script) and asyncio callers (top-level
`await` in a kernel) to coroutines on that loop. A KeyboardInterrupt in the caller cancels
the coroutine it was waiting for, and waits for that cancellation to finish, so the
session can tell the server before the cell ends.
"""

from __future__ import annotations

import asyncio
import atexit
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

import anyio
import sniffio
from anyio.from_thread import BlockingPortal

from .base.handoff import handed

T = TypeVar("T")

CANCEL_GRACE = 5.0


class _Call(Generic[T]):
    """A coroutine on the loop that another thread may cancel, even before it starts.

    Cancelled, it ends as cancelled (its future too), never with an exception of its own: the
    caller is already leaving with the KeyboardInterrupt or CancelledError that cancelled it,
    which the API words as `base.errors.Interrupted`, the one interrupt exception.
    """

    def __init__(self, fn: Callable[..., Awaitable[T]], args: tuple[Any, ...]) -> None:
        self.fn = fn
        self.args = args
        self.scope: anyio.CancelScope | None = None
        self.cancelled = False

    async def run(self) -> T:
        with anyio.CancelScope() as scope:
            self.scope = scope
            if self.cancelled:
                scope.cancel()
            return await self.fn(*self.args)
        raise anyio.get_cancelled_exc_class()  # the portal's future is cancelled in turn

    async def cancel(self) -> None:
        self.cancelled = True
        if self.scope is not None:
            self.scope.cancel()


class Runtime:
    """A lazily started event-loop thread; nothing runs until the first call."""

    def __init__(self, name: str = "mcp-notebook") -> None:
        self._name = name
        self._lock = threading.Lock()
        self._portal: BlockingPortal | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._on_stop: list[Callable[[], Awaitable[None]]] = []

    @property
    def running(self) -> bool:
        return self._portal is not None

    @property
    def thread(self) -> threading.Thread | None:
        return self._thread

    def _ensure_started(self) -> BlockingPortal:
        with self._lock:
            if self._portal is None:
                ready: Future[BlockingPortal] = Future()
                thread = threading.Thread(target=self._main, args=(ready,), name=self._name, daemon=True)
                thread.start()
                self._portal = ready.result()
                self._thread = thread
                atexit.register(self.stop)
            return self._portal

    def _main(self, ready: Future[BlockingPortal]) -> None:
        async def serve() -> None:
            # Transports push frames from the loop's fd callbacks, outside any task, and the
            # session starts tasks from there; this thread runs asyncio only, so say so once
            # (sniffio otherwise finds no library outside a task, and anyio then refuses).
            sniffio.thread_local.name = "asyncio"
            async with BlockingPortal() as portal:
                self._loop = asyncio.get_running_loop()
                ready.set_result(portal)
                await portal.sleep_until_stopped()

        anyio.run(serve)

    def in_loop_thread(self) -> bool:
        return self._thread is not None and threading.current_thread() is self._thread

    def call(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run `fn(*args)` on the loop and wait; Ctrl-C cancels it there, then re-raises."""
        if self.in_loop_thread():
            raise RuntimeError("blocking call from the mcp-notebook event loop thread; use the async API there")
        portal = self._ensure_started()
        call = _Call(fn, args)
        future = portal.start_task_soon(call.run)
        try:
            return future.result()
        except KeyboardInterrupt:
            self._cancel_and_wait(portal, call, future)
            raise

    def _cancel_and_wait(self, portal: BlockingPortal, call: _Call[Any], future: Future[Any]) -> None:
        try:
            portal.start_task_soon(call.cancel)
            future.exception(timeout=CANCEL_GRACE)
        except (KeyboardInterrupt, TimeoutError, Exception):  # noqa: BLE001 - already leaving with KeyboardInterrupt
            pass

    async def acall(self, fn: Callable[..., Awaitable[T]], *args: Any) -> T:
        """Run `fn(*args)` on the loop without blocking the caller's asyncio loop."""
        portal = self._ensure_started()
        call = _Call(fn, args)
        future = portal.start_task_soon(call.run)
        waiter = asyncio.wrap_future(future)
        try:
            return await asyncio.shield(waiter)
        except asyncio.CancelledError:
            portal.start_task_soon(call.cancel)
            await asyncio.wait([waiter], timeout=CANCEL_GRACE)
            if waiter.done() and not waiter.cancelled():
                waiter.exception()  # retrieved: the caller is leaving with CancelledError
            raise

    def call_soon(self, fn: Callable[..., Any], *args: Any) -> None:
        """Schedule a plain function on the loop and return at once (the cheapest hop there)."""
        self._ensure_started()
        assert self._loop is not None
        self._loop.call_soon_threadsafe(fn, *args)

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        """Run a plain function on the loop; the future of what it returns (wait on it, or await
        it with `asyncio.wrap_future`)."""
        run, done = handed(fn, *args)
        self.call_soon(run)
        return done

    def call_sync(self, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
        """Run a plain function on the loop and wait for what it returns."""
        return self.submit(fn, *args).result(timeout)

    def spawn(self, fn: Callable[..., Awaitable[Any]], *args: Any) -> Future[Any]:
        """Start a long-lived task on the loop (a session's serve loop) and return at once."""
        return self._ensure_started().start_task_soon(fn, *args)

    def on_stop(self, hook: Callable[[], Awaitable[None]]) -> None:
        """Run `hook()` on the loop before it stops (closing sessions, reaping children)."""
        self._on_stop.append(hook)

    def stop(self) -> None:
        """Run the stop hooks, cancel what is left, and end the thread."""
        with self._lock:
            portal, thread = self._portal, self._thread
            self._portal = self._thread = None
        if portal is None or thread is None:
            return
        atexit.unregister(self.stop)
        for hook in self._on_stop:
            try:
                portal.call(hook)
            except Exception:  # noqa: BLE001 - keep stopping
                pass
        try:
            portal.call(portal.stop, True)
        except Exception:  # noqa: BLE001 - the loop is gone already
            pass
        thread.join(timeout=10)


_runtime: Runtime | None = None
_runtime_lock = threading.Lock()


def get_runtime() -> Runtime:
    """The process-wide runtime (its thread starts on first use)."""
    global _runtime
    runtime = _runtime  # every blocking call asks: the lock only while there is none
    if runtime is not None:
        return runtime
    with _runtime_lock:
        if _runtime is None:
            _runtime = Runtime()
        return _runtime
