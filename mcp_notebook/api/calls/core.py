"""The core of one connection's feature calls (`Core`): what every request needs, and the one
route of the server's log lines and progress to the cell that waits.

What every request needs: the session, the connection's name, the calls callers wait on, the
rounds on the wire (for `cancel(id)`), the connection's log level, the list caches
(`listings`), the front end to show things through (`front`, passed in: the core imports no
front end and no feature), and the retries features register for an error code (`retry_on`:
client_side's URL-required retry). Each feature keeps its own state object, made by that
feature's module, added here once (`add`) and read back by its type (`get`).

How a server's log line reaches the waiting cell (this module, then `progress.Caller`):
1. `options` marks the request's task as asking for its call: the session runs `on_start` in
   the task that runs the request on its loop, which sets `_asking`; whatever that task starts
   (over HTTP, the reader of its response stream) shares the mark.
2. `notifications/message` runs `_on_log` inline on the session thread, in frame order; it
   picks the cell (`current_call(for_logs=True)`: the asking call, else the newest waiting call
   that asked for logs, else the newest waiting call) and hands it the record (`Caller.take_log`
   posts it to the call's inbox). The caller drains that inbox at its next wake-up and its
   front end's presenter shows the line. Every record, shown or not, then goes to `keep_log`
   (the connection's log store, client_side's).
Progress takes the same road by its token (`_on_progress`). Handlers only record, never print.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, cast

from ...base.errors import McpError
from ...base.sizes import bounded, clipped_text
from ...session.session import CallOptions, Session
from ...session.subscriptions import Subscription
from .listings import Listings
from .progress import Caller, LogRecord

S = TypeVar("S")

LOG_DATA_CLIP = 64 * 1024  # characters of one log message's data kept (panels unfold 20,000)

# The call whose request this task serves: set in the task that runs a request on the session
# loop (`Core.options`), and so known to what that task starts (see `Core.current_call`).
_asking: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("mcp_notebook_asking", default=None)


class Presenting(Protocol):
    """What the core asks of the display of one waiting call (the front end's `Presenter`)."""

    def attend(self, call: Caller, seen: int) -> int: ...

    def close(self, failed: bool) -> None: ...

    def ask(self, question: Any, call: Caller | None = None) -> None: ...


class Front(Protocol):
    """What the core asks of the front end (`api.display.frontend.FrontEnd`)."""

    def presenter(self, label: str, progress: Any, connection: str) -> Presenting: ...

    def warn(self, text: str) -> None: ...


@dataclass(frozen=True, slots=True)
class Retry:
    """What a feature does when a request fails with its error code: each face gets the error,
    how to send the request again, and how to show a question in the caller's cell."""

    blocking: Callable[[McpError, Callable[[], Any], Callable[[Any], None]], Any]
    awaited: Callable[[McpError, Callable[[], Awaitable[Any]], Callable[[Any], None]], Awaitable[Any]]


class Core:
    """What every feature call of one connection needs (see the module docstring)."""

    def __init__(self, session: Session, name: str, front: Callable[[], Front]) -> None:
        self.session = session
        self.name = name
        self.front = front
        self.lock = threading.Lock()
        self.calls: dict[str, Caller] = {}  # progress token -> call
        self.waiting: dict[Caller, None] = {}  # calls a caller waits on, oldest first (a dict: O(1) to drop)
        self.pendings: dict[int, Any] = {}  # request id -> Pending, for cancel()
        self.log_level: str | None = None
        self.listings = Listings(session)
        self.keep_log: Callable[[LogRecord, int, bool], None] = lambda record, size, shown: None
        self.retries: dict[int, Retry] = {}
        self._features: dict[type, object] = {}
        handlers = session.notification_handlers
        # Bookkeeping runs inline, in frame order: progress or a log line that precedes a
        # result is seen before the caller wakes.
        handlers.set_inline("notifications/progress", self._on_progress)
        handlers.set_inline("notifications/message", self._on_log)

    # ----- the features' own states -----

    def add(self, state: object) -> None:
        """A feature's state for this connection (one of each type), made by the feature's module."""
        self._features[type(state)] = state

    def get(self, kind: type[S]) -> S:
        """The feature state of type `kind` that its module added."""
        return cast(S, self._features[kind])

    def retry_on(self, code: int, retry: Retry) -> None:
        """When a request fails with `code`, `retry` may ask the user and send it again."""
        self.retries[code] = retry

    # ----- callers -----

    def begin(self, call: Caller, pending: Any = None) -> None:
        with self.lock:
            if call.token is not None:
                self.calls[call.token] = call
            self.waiting[call] = None
            if pending is not None:
                self.pendings[pending.id] = pending

    def end(self, call: Caller, pending: Any = None) -> None:
        with self.lock:
            if call.token is not None:
                self.calls.pop(call.token, None)
            self.waiting.pop(call, None)
            if pending is not None:
                self.pendings.pop(pending.id, None)

    def track(self, pending: Any, on: bool = True) -> None:
        """A round of a flow went on the wire (or ended): `cancel(id)` finds it. (A one-round
        request is its own round: the session's `in_flight(id)` finds it.)"""
        with self.lock:
            if on:
                self.pendings[pending.id] = pending
            else:  # by identity: a round re-issued after a broken stream has a new id
                for request_id in [i for i, p in self.pendings.items() if p is pending]:
                    del self.pendings[request_id]

    def options(self, call: Caller, flow: Callable[[Any, Callable[[], bool]], Any] | None = None) -> CallOptions:
        """How the session runs `call`'s request: under the caller's deadline, its rounds
        tracked, its task marked as asking for `call`; a `flow` (a task followed) lingers."""

        def in_its_cell() -> None:
            _asking.set(call)  # questions, progress and log lines of this request go to its cell

        return CallOptions(own_deadline=True, flow=flow, lingers=flow is not None, on_round=self.track, on_start=in_its_cell)

    def current_call(self, *, for_logs: bool = False) -> Caller | None:
        """The cell to show things in: the call whose request asks, else the call most recently
        started that a caller still waits on (for a log line, preferably one that asked for logs)."""
        asking = _asking.get()
        with self.lock:
            if asking is not None and asking in self.waiting:
                return asking
            if for_logs:
                wanting = [call for call in self.waiting if call.log_level is not None]
                return wanting[-1] if wanting else next(reversed(self.waiting), None)
            askable = [call for call in self.waiting if call.takes_questions]
            return askable[-1] if askable else None

    # ----- session thread -----

    def _on_progress(self, params: dict[str, Any]) -> None:
        params = self.session.trace.redactor.value(params)  # its message is shown: no known secret in it
        with self.lock:
            call = self.calls.get(params.get("progressToken"))  # type: ignore[arg-type]
        if call is not None:
            call.on_progress(params)

    def _on_log(self, params: dict[str, Any]) -> None:
        params = self.session.trace.redactor.value(params)  # shown and kept: no known secret in it
        data, size = bounded(params.get("data"), LOG_DATA_CLIP)
        logger = params.get("logger")
        level = clipped_text(str(params.get("level", "info")), 100)
        record = LogRecord(level, data, clipped_text(logger, 200) if isinstance(logger, str) else logger)
        call = self.current_call(for_logs=True)
        shown = call is not None and call.take_log(record)
        self.keep_log(record, size, shown)


class Featured(Protocol):
    """What the feature methods use of their connection."""

    name: str

    @property
    def _core(self) -> Core: ...

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        callback: Callable[[str, dict[str, Any]], Any] | None = None,
        timeout: float | None = None,
    ) -> Subscription: ...

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None: ...

    def reconnect(self, *, reload: bool | None = None, why: str = "asked") -> Any: ...
