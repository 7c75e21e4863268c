"""The request core of the feature API: one request for a caller that waits on it, in
either era, from a thread or from a coroutine.

A request goes out with a progress token (unless its caller wants none) and, on modern
connections, the log level it asks for. A `Call` registered with the session's feature
state collects its progress, its log lines and the server's questions; the caller shows
them in its own cell at each wake-up (a `Presenter` of the front end's). The deadline (an idle timeout that
progress resets, under a maximum total) is the caller's: when it passes, or on Ctrl-C or
cancellation of the awaiting task, the request is cancelled on the server first.

Legacy requests from a thread take the fast path: written from the caller's thread where
the transport allows it (stdio), else one hop to the loop, and the response itself wakes
the caller. Modern requests (several rounds when the server asks for input),
task-augmented ones (a task followed to its end, `tasks`) and every awaited request run
as a `Flight` on the session loop.

Feature methods are written once, as generators that yield the `Exchange`s they need:
`drive` runs one in the calling thread, `adrive` in the awaiting coroutine.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from ...base.errors import ConnectionClosed, McpError, RequestTimeout, UsageError
from ...runtime import CANCEL_GRACE, Runtime, get_runtime
from ...session.pending import Pending
from ...session.session import Session
from ..client_side.answers import Question
from ..client_side.url_required import URL_ELICITATION_REQUIRED, aretry, retry
from ..connecting.options import check_timeout
from ..display import frontend
from ..tasks.follow import TaskRun
from .feature_state import FeatureState, asking_for
from .interrupts import interrupted
from .progress import Call, Deadline, new_token

T = TypeVar("T")

TICK = 0.05  # seconds between the caller's looks at progress, logs and questions
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"


@dataclass(slots=True)  # not frozen: frozen fields are set through object.__setattr__, ~3 µs a request
class Exchange:
    """One request a feature method needs, and how its caller waits for it (never changed once made)."""

    method: str
    params: dict[str, Any] | None = None
    timeout: float | None = None  # None: the connection's
    max_total: float | None = None
    reset_on_progress: bool = True
    progress: Any = False  # None: a bar if the server reports progress; a callable; False: no token
    log_level: str | None = None  # modern: this request's log level (None: the connection's)
    task: bool = False  # task-augmented (params carry `task`): the result is the task's payload

    def __post_init__(self) -> None:
        check_timeout(self.timeout)
        check_timeout(self.max_total, "max_total")


Steps = Generator[Exchange, Any, T]


def drive(fx: FeatureState, steps: Steps[T]) -> T:
    """Run a feature method's steps, each request waited for in this thread."""
    try:
        exchange = next(steps)
        while True:
            try:
                try:
                    result = request(fx, exchange)
                except McpError as error:  # the retry wrapper only when the server asks for URLs
                    if error.code != URL_ELICITATION_REQUIRED:
                        raise
                    result = retry(error, functools.partial(request, fx, exchange), fx.requests, fx.name, _shower(fx))
            except BaseException as exc:  # noqa: BLE001 - raised where the step asked
                exchange = steps.throw(exc)
            else:
                exchange = steps.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(fx: FeatureState, steps: Steps[T]) -> T:
    """Run a feature method's steps, each request awaited in this coroutine."""
    try:
        exchange = next(steps)
        while True:
            try:
                try:
                    result = await arequest(fx, exchange)
                except McpError as error:
                    if error.code != URL_ELICITATION_REQUIRED:
                        raise
                    send = functools.partial(arequest, fx, exchange)
                    result = await aretry(error, send, fx.requests, fx.name, _shower(fx))
            except BaseException as exc:  # noqa: BLE001 - raised where the step asked
                exchange = steps.throw(exc)
            else:
                exchange = steps.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _shower(fx: FeatureState) -> Callable[[Question], None]:
    """Shows a question outside any waiting request (URLs a -32042 error asks for) in the caller's cell."""
    return lambda question: frontend.current().presenter(fx.name, None, fx.name).ask(question)


def _prepare(fx: FeatureState, exchange: Exchange) -> tuple[dict[str, Any] | None, Call]:
    """The params as sent (progress token, modern log level) and the Call that collects for the caller."""
    session = fx.session
    token = None if exchange.progress is False else new_token()
    level = (exchange.log_level or fx.log_level) if session.era == "modern" else None
    params = exchange.params
    if token is not None or level is not None:
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        if token is not None:
            meta["progressToken"] = token
        if level is not None:
            meta[LOG_LEVEL_KEY] = level
        params["_meta"] = meta
    limit = session.timeout if exchange.timeout is None else exchange.timeout
    return params, Call(exchange.method, Deadline(limit, exchange.max_total, exchange.reset_on_progress), token, level)


def _timed_out(call: Call) -> RequestTimeout:
    return RequestTimeout(f"{call.method}: {call.deadline.reason()}; the request was cancelled")


class Sent:
    """A legacy request from a thread: sent from there (or launched in one hop), its response
    releases the caller's lock."""

    __slots__ = ("session", "pending")
    lingers = False  # stopped is ended

    def __init__(self, session: Session, pending: Pending) -> None:
        self.session = session
        self.pending = pending

    def launch_here(self) -> bool:
        return self.session.send_here(self.pending)

    def launch(self) -> None:
        self.session.launch(self.pending)

    def stop(self, failure: BaseException, reason: str) -> bool:
        return self.session.abandon(self.pending, failure, reason)

    def outcome(self) -> Any:
        return self.pending.outcome()


class Flight:
    """A request run to its end on the session loop, every round of it, for a caller elsewhere.

    `done()` runs on the loop when it ends. `stop()` (on the loop) cancels it: the round on
    the wire is abandoned, which tells the server, and a wait between rounds (a question
    the user has not answered yet) ends. A task flight then cancels its task, within
    CANCEL_GRACE, before it is done (it `lingers`).
    """

    def __init__(
        self,
        session: Session,
        fx: FeatureState,
        call: Call,
        params: dict[str, Any] | None,
        done: Callable[[], Any],
        task: bool = False,
    ) -> None:
        self.session = session
        self.lingers = task
        self.fx = fx
        self.call = call
        self.params = params
        self.done = done
        self.pending: Pending | None = None  # the round on the wire
        self.scope: anyio.CancelScope | None = None
        self.result: Any = None
        self.failure: BaseException | None = None
        self.finished = False

    def launch_here(self) -> bool:
        return False  # it runs on the loop

    def launch(self) -> None:
        try:
            self.session.spawn(self._run)
        except ConnectionClosed as exc:
            self.failure = exc
            self._finish()

    async def _run(self) -> None:
        asking_for(self.call)  # a question from an input_required round goes to this call's cell
        completed = False
        try:
            with anyio.CancelScope() as scope:
                self.scope = scope
                if self.failure is None:  # else stopped before it started
                    if self.lingers:
                        run = TaskRun(self.session, self.fx.task_watch, self.call, self._round, lambda: scope.cancel_called)
                        self.result = await run.run(self.call.method, self.params)
                    elif self.session.era == "modern":
                        self.result = await self.session.eras.modern_request(
                            self.call.method, self.params, timeout=None, send=self._round
                        )
                    else:
                        self.result = (await self._round(self.call.method, self.params)).outcome()
                    completed = True
        except Exception as exc:  # noqa: BLE001 - handed to the caller
            self.failure = self.failure or exc
        finally:
            if not completed and self.failure is None:
                self.failure = ConnectionClosed("the connection was closed")
            self._finish()

    def _finish(self) -> None:
        self.finished = True
        try:
            self.done()
        except Exception:  # noqa: BLE001 - the caller is gone (its event loop closed): nobody to wake
            pass

    async def _round(self, method: str, params: dict[str, Any] | None) -> Pending:
        """One request on the wire; the caller's deadline governs it, a stop() abandons it."""
        session = self.session
        pending = session.new_request(method, params)
        pending.event = anyio.Event()
        self.pending = pending
        self.fx.track(pending)
        session.launch(pending)
        try:
            await pending.event.wait()
        except anyio.get_cancelled_exc_class():
            session.abandon(pending, ConnectionClosed("cancelled"), "cancelled by the user")  # settled already after a stop()
            raise
        finally:
            self.fx.track(pending, on=False)
            self.pending = None
        return pending

    def stop(self, failure: BaseException, reason: str) -> bool:
        """Cancel the request, telling the server; False if it had ended."""
        if self.finished:
            return False
        self.failure = self.failure or failure
        if self.pending is not None:
            self.session.abandon(self.pending, failure, reason)
            self.fx.track(self.pending, on=False)  # gone from cancel()'s view before the caller leaves
        if self.scope is not None:
            self.scope.cancel()
        return True

    def outcome(self) -> Any:
        if self.failure is not None:
            raise self.failure
        return self.result


def request(fx: FeatureState, exchange: Exchange) -> Any:
    """Send a request and wait in this thread, showing what arrives for it in the caller's cell."""
    session, runtime = fx.session, get_runtime()
    if runtime.in_loop_thread():
        raise RuntimeError("a blocking call from the mcp-notebook event loop thread; await the a-method (acall_tool, ...) there")
    params, call = _prepare(fx, exchange)
    waker = threading.Lock()
    waker.acquire()
    pending = None
    handle: Sent | Flight
    if session.era == "modern" or exchange.task:
        handle = Flight(session, fx, call, params, waker.release, exchange.task)
    else:
        pending = session.new_request(exchange.method, params, waker)
        handle = Sent(session, pending)
    presenter = frontend.current().presenter(f"{fx.name} {exchange.method}", exchange.progress, fx.name)
    fx.begin(call, pending)
    failed, seen = True, 0
    try:
        if not handle.launch_here():
            runtime.call_soon(handle.launch)
        while True:
            remaining = call.deadline.remaining()
            if waker.acquire(timeout=TICK if remaining is None else max(0.0, min(TICK, remaining))):
                break
            seen = presenter.attend(call, seen)
            if remaining is not None and call.deadline.remaining() <= 0:  # type: ignore[operator]
                failure = _timed_out(call)
                if runtime.call_sync(handle.stop, failure, call.deadline.reason()):
                    if handle.lingers:
                        waker.acquire(timeout=CANCEL_GRACE + 1)  # until its task is cancelled
                    raise failure
                break  # it ended meanwhile
        result = handle.outcome()
        failed = False
        return result
    except KeyboardInterrupt as exc:
        stopped = runtime.call_sync(
            handle.stop, ConnectionClosed("cancelled by the user"), "cancelled by the user", timeout=CANCEL_GRACE
        )
        if stopped and handle.lingers:
            waker.acquire(timeout=CANCEL_GRACE + 1)  # until its task is cancelled
        raise interrupted(session, stopped=stopped, task=handle.lingers) from exc
    finally:
        fx.end(call, pending)
        presenter.attend(call, seen)
        presenter.close(failed)


async def arequest(fx: FeatureState, exchange: Exchange) -> Any:
    """Send a request and await it without blocking the caller's event loop; what arrives for
    it is shown from this coroutine, so in the caller's cell. Cancelling the awaiting task
    cancels the request on the server."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        raise UsageError(
            "the awaitable methods (acall_tool, ...) run on an asyncio event loop; "
            "use the blocking ones (call_tool, ...) elsewhere"
        ) from None
    session, runtime = fx.session, get_runtime()
    params, call = _prepare(fx, exchange)
    woken: asyncio.Future[None] = loop.create_future()
    flight = Flight(session, fx, call, params, lambda: loop.call_soon_threadsafe(_wake, woken), exchange.task)
    presenter = frontend.current().presenter(f"{fx.name} {exchange.method}", exchange.progress, fx.name)
    fx.begin(call)
    failed, seen = True, 0
    try:
        runtime.call_soon(flight.launch)
        while not woken.done():
            remaining = call.deadline.remaining()
            await asyncio.wait((woken,), timeout=TICK if remaining is None else max(0.0, min(TICK, remaining)))
            if woken.done():
                break
            seen = presenter.attend(call, seen)
            if remaining is not None and call.deadline.remaining() <= 0:  # type: ignore[operator]
                failure = _timed_out(call)
                if await _on_loop(runtime, flight.stop, failure, call.deadline.reason()):
                    if flight.lingers:
                        await asyncio.wait((woken,), timeout=CANCEL_GRACE + 1)  # until its task is cancelled
                    raise failure
                break  # it ended meanwhile
        result = flight.outcome()
        failed = False
        return result
    except (asyncio.CancelledError, KeyboardInterrupt):
        try:
            if (
                await _on_loop(
                    runtime, flight.stop, ConnectionClosed("cancelled by the user"), "cancelled by the user", timeout=CANCEL_GRACE
                )
                and flight.lingers
            ):
                await asyncio.wait((woken,), timeout=CANCEL_GRACE + 1)  # until its task is cancelled
        except Exception:  # noqa: BLE001 - leaving with the cancellation anyway
            pass
        raise
    finally:
        fx.end(call)
        presenter.attend(call, seen)
        presenter.close(failed)


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


async def _on_loop(runtime: Runtime, fn: Callable[..., T], *args: Any, timeout: float | None = None) -> T:
    """`runtime.call_sync` for a coroutine: run a plain function on the session loop, await its value."""
    return await asyncio.wait_for(asyncio.wrap_future(runtime.submit(fn, *args)), timeout)
