"""The request core of the feature API: one request for a caller that waits on it, in
either era, from a thread or from a coroutine.

A request goes out with a progress token (unless its caller wants none) and, on modern
connections, the log level it asks for. A `Caller` registered with the connection's core
(`core`, which routes to it) collects its progress, its log lines and the server's questions;
the caller shows them in its own cell at each wake-up (a `Presenter` of the front end's). The
deadline (`base.timeouts.Deadline`: an idle timeout that progress resets, under a maximum
total) is the caller's, enforced here: when it passes, or on Ctrl-C or cancellation of the
awaiting task, the request is cancelled on the server first.

This is the core: it imports no feature and no front end. What a feature adds comes in
through the connection's `Core`: a task-augmented request brings its own follower
(`CallSpec.follow`, from `tasks.follow`), an error a feature knows how to retry is retried by
the hook it registered (`Core.retry_on`: client_side's URL-required retry), and the cell is
shown through the front end the core was given (`Core.front`).

The session's one call boundary (`Session.call`) carries the request: a one-round request
is written from the caller's thread where the transport allows it, and its response wakes
the caller where it waits, a thread or an asyncio loop; modern requests (several rounds
when the server asks for input) and task-augmented ones (a task followed to its end by the
exchange's `follow`) run as a flow on the session loop. This module keeps only what is the
caller's: its cell, its deadline, and what Ctrl-C or a cancelled task means.

Feature methods are written once, as generators that yield the `CallSpec`s they need:
`drive` runs one in the calling thread, `adrive` in the awaiting coroutine.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from ...base.errors import ConnectionClosed, Interrupted, McpError, RequestTimeout, UsageError
from ...base.timeouts import Deadline, check_timeout
from ...runtime import get_runtime
from ...session.session import CallOptions, PendingCall
from .core import Core, Presenting
from .progress import Caller, new_token

T = TypeVar("T")

TICK = 0.05  # seconds between the caller's looks at progress, logs and questions
LOG_LEVEL_KEY = "io.modelcontextprotocol/logLevel"

# A task-augmented request's follower: (its call, send a round, stopped?, method, params) -> its payload
Follow = Callable[[Caller, Any, Callable[[], bool], str, dict[str, Any] | None], Any]
# What shows one awaited request (label, progress option, connection name): the front end's
# presenter unless the caller brings its own (a batch's calls show nothing one by one)
Show = Callable[[str, Any, str], Presenting]


@dataclass(slots=True)  # not frozen: frozen fields are set through object.__setattr__, ~3 µs a request
class CallSpec:
    """One request a feature method needs, and how its caller waits for it (never changed once made)."""

    method: str
    params: dict[str, Any] | None = None
    timeout: float | None = None  # None: the connection's
    max_total: float | None = None
    reset_on_progress: bool = True
    progress: Any = False  # None: a bar if the server reports progress; a callable; False: no token
    log_level: str | None = None  # modern: this request's log level (None: the connection's)
    follow: Follow | None = None  # task-augmented (params carry `task`): the task followed, its payload the result

    def __post_init__(self) -> None:
        check_timeout(self.timeout)
        check_timeout(self.max_total, "max_total")


Steps = Generator[CallSpec, Any, T]


def drive(fx: Core, steps: Steps[T]) -> T:
    """Run a feature method's steps, each request waited for in this thread."""
    try:
        exchange = next(steps)
        while True:
            try:
                try:
                    result = request(fx, exchange)
                except McpError as error:  # retried only where a feature registered a retry for its code
                    retry = fx.retries.get(error.code)
                    if retry is None:
                        raise
                    result = retry.blocking(error, functools.partial(request, fx, exchange), _shower(fx))
            except BaseException as exc:  # noqa: BLE001 - raised where the step asked
                exchange = steps.throw(exc)
            else:
                exchange = steps.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(fx: Core, steps: Steps[T], show: Show | None = None) -> T:
    """Run a feature method's steps, each request awaited in this coroutine (shown by `show`,
    else by the front end's presenter)."""
    try:
        exchange = next(steps)
        while True:
            try:
                try:
                    result = await arequest(fx, exchange, show)
                except McpError as error:
                    retry = fx.retries.get(error.code)
                    if retry is None:
                        raise
                    result = await retry.awaited(error, functools.partial(arequest, fx, exchange, show), _shower(fx))
            except BaseException as exc:  # noqa: BLE001 - raised where the step asked
                exchange = steps.throw(exc)
            else:
                exchange = steps.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _shower(fx: Core) -> Callable[[Any], None]:
    """Shows a question outside any waiting request (URLs a -32042 error asks for) in the caller's cell."""
    return lambda question: fx.front().presenter(fx.name, None, fx.name).ask(question)


def _prepare(fx: Core, exchange: CallSpec) -> tuple[dict[str, Any] | None, Caller]:
    """The params as sent (progress token, modern log level) and the Caller that collects for the caller."""
    session = fx.session
    token = None if exchange.progress is False else new_token()
    level = (exchange.log_level or fx.log_level) if session.rules.log_level_per_request else None
    params = exchange.params
    if token is not None or level is not None:
        params = dict(params or {})
        meta = dict(params.get("_meta") or {})
        if token is not None:
            meta["progressToken"] = token
        if level is not None:
            meta[LOG_LEVEL_KEY] = level
        params["_meta"] = meta
    limit = session.limit(exchange.timeout)
    return params, Caller(exchange.method, Deadline(limit, exchange.max_total, exchange.reset_on_progress), token, level)


def _timed_out(call: Caller) -> RequestTimeout:
    return RequestTimeout(f"{call.method}: {call.deadline.reason()}; the request was cancelled")


def _options(fx: Core, exchange: CallSpec, call: Caller, params: dict[str, Any] | None) -> CallOptions:
    """How the session runs the request: under the caller's deadline; a task followed to its end."""
    follow = exchange.follow
    if follow is None:
        return fx.options(call)
    return fx.options(call, lambda send, stopped: follow(call, send, stopped, exchange.method, params))


def request(fx: Core, exchange: CallSpec) -> Any:
    """Send a request and wait in this thread, showing what arrives for it in the caller's cell."""
    session = fx.session
    if get_runtime().in_loop_thread():
        raise RuntimeError("a blocking call from the mcp-notebook event loop thread; await the a-method (acall_tool, ...) there")
    params, call = _prepare(fx, exchange)
    presenter = fx.front().presenter(f"{fx.name} {exchange.method}", exchange.progress, fx.name)
    fx.begin(call)  # before the request goes out: its first progress may come at once
    failed, seen = True, 0
    pending: PendingCall | None = None
    try:
        pending = session.call(exchange.method, params, _options(fx, exchange, call, params))
        while True:
            remaining = call.deadline.remaining()
            if pending.wait(TICK if remaining is None else min(TICK, remaining)):
                break
            seen = presenter.attend(call, seen)
            if remaining is not None and call.deadline.remaining() <= 0:  # type: ignore[operator]
                failure = _timed_out(call)
                if pending.cancel(failure, call.deadline.reason()):
                    raise failure
                break  # it ended meanwhile
        result = pending.outcome()
        failed = False
        return result
    except KeyboardInterrupt as exc:
        if pending is None or isinstance(exc, Interrupted):
            raise
        raise pending.interrupt() from exc
    finally:
        fx.end(call)
        presenter.attend(call, seen)
        presenter.close(failed)


async def arequest(fx: Core, exchange: CallSpec, show: Show | None = None) -> Any:
    """Send a request and await it without blocking the caller's event loop; what arrives for
    it is shown from this coroutine, so in the caller's cell. Cancelling the awaiting task
    cancels the request on the server."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        raise UsageError(
            "the awaitable methods (acall_tool, ...) run on an asyncio event loop; "
            "use the blocking ones (call_tool, ...) elsewhere"
        ) from None
    session = fx.session
    params, call = _prepare(fx, exchange)
    presenter = (show or fx.front().presenter)(f"{fx.name} {exchange.method}", exchange.progress, fx.name)
    fx.begin(call)
    failed, seen = True, 0
    pending: PendingCall | None = None
    try:
        pending = session.call(exchange.method, params, _options(fx, exchange, call, params))
        while True:
            remaining = call.deadline.remaining()
            if await pending.wait_async(TICK if remaining is None else min(TICK, remaining)):
                break
            seen = presenter.attend(call, seen)
            if remaining is not None and call.deadline.remaining() <= 0:  # type: ignore[operator]
                failure = _timed_out(call)
                if await pending.acancel(failure, call.deadline.reason()):
                    raise failure
                break  # it ended meanwhile
        result = pending.outcome()
        failed = False
        return result
    except (asyncio.CancelledError, KeyboardInterrupt):
        if pending is not None:
            try:
                await pending.acancel(ConnectionClosed("cancelled by the user"), "cancelled by the user")
            except Exception:  # noqa: BLE001 - leaving with the cancellation anyway
                pass
        raise
    finally:
        fx.end(call)
        presenter.attend(call, seen)
        presenter.close(failed)
