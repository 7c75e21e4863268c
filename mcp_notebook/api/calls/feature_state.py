"""Per-connection state of the client features: list caches, in-flight calls, logs, subscriptions.

One `FeatureState` is installed on a session when it is made (`install`), so the
notification handlers are in place from the first frame on, and the connection holds it.
Handlers run on the session thread, only record, and never print. The server's log messages
are kept in a ring bounded by count and by size, each one's data clipped when huge; resource
updates are counted for the subscribed resources and the UPDATED_URIS most recently updated
others (the server names the URIs), and in all.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any, Protocol

import anyio.to_thread

from ...base.sizes import Ring, bounded, clipped_text
from ...session.session import Session
from ...session.subscriptions import Subscription
from ..apps.host import AppHost
from ..client_side.answers import ServerRequests
from ..results.objects import Listing
from ..tasks.follow import TaskWatch
from ..tools.checks import ToolChecks
from .progress import Caller, LogRecord

LOG_HISTORY = 1000
LOG_BYTES = 16 * 1024 * 1024  # about the most the kept log messages hold
UPDATED_URIS = 1000  # resources whose updates are counted one by one, besides those subscribed
LOG_DATA_CLIP = 64 * 1024  # characters of one log message's data kept (panels unfold 20,000)
RECORD_COST = 300  # what a kept log record costs besides its data
LIST_CHANGED = {
    "notifications/tools/list_changed": ("tools",),
    "notifications/prompts/list_changed": ("prompts",),
    "notifications/resources/list_changed": ("resources", "resourceTemplates"),
}

# The call whose request this task serves: set by the request core in the task that runs a
# request on the session loop, and so known to what that task starts (see current_call).
_asking: contextvars.ContextVar[Caller | None] = contextvars.ContextVar("mcp_notebook_asking", default=None)


class FeatureState:
    """What the feature API remembers about one connection's session."""

    def __init__(self, session: Session, name: str, requests: ServerRequests | None = None) -> None:
        self.session = session
        self.name = name
        self.lock = threading.Lock()
        self.cache: dict[str, Listing] = {}
        self.tool_checks = ToolChecks()  # the cached tools listing's, compiled on first use
        self.list_changes: dict[str, int] = {}
        self.calls: dict[str, Caller] = {}  # progress token -> call
        self.waiting: dict[Caller, None] = {}  # calls a caller waits on, oldest first (a dict: O(1) to drop)
        self.pendings: dict[int, Any] = {}  # request id -> PendingCall, for cancel()
        self._log_ring: Ring[LogRecord] = Ring(LOG_HISTORY, LOG_BYTES, on_drop=self._log_dropped)
        self.logs = self._log_ring.items  # oldest first
        self.unrouted_logs: deque[LogRecord] = deque()  # those no cell showed: a subsequence of logs
        self.log_level: str | None = None
        self.subscriptions: dict[str, list[Callable[[str], Any]]] = {}
        self.listens: dict[str, Any] = {}  # modern: uri -> its subscriptions/listen Subscription
        self.updates: deque[tuple[str, float]] = deque(maxlen=LOG_HISTORY)
        self.update_counts: dict[str, int] = {}  # by resource, the most recently updated UPDATED_URIS (and all subscribed)
        self.updates_total = 0
        self.requests = requests or ServerRequests()
        self.requests.current_call = self.current_call
        self.task_watch = TaskWatch(session)
        self.apps = AppHost()  # MCP Apps: switched on by connect()
        handlers = session.notification_handlers
        # Bookkeeping runs inline, in frame order: progress or a log line that precedes a
        # result is seen before the caller wakes. User callbacks stay off the frame path.
        handlers.set_inline("notifications/progress", self._on_progress)
        handlers.set_inline("notifications/message", self._on_log)
        handlers.set("notifications/resources/updated", self._on_updated)
        handlers.set_inline("notifications/elicitation/complete", self.requests.on_elicitation_complete)
        for method in LIST_CHANGED:
            handlers.set_inline(method, self._list_changed_handler(method))

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

    def current_call(self, *, for_logs: bool = False) -> Caller | None:
        """The cell to show things in: the call whose request asks, else the call most recently
        started that a caller still waits on (for a log line, preferably one that asked for logs).

        The asking call is known to whatever runs in its request's task: the handlers of its
        modern `input_required` rounds, and over HTTP the reader of its response stream (a
        task started from that task, so sharing its context), which is where its
        request-scoped progress and log lines arrive."""
        asking = _asking.get()
        with self.lock:
            if asking is not None and asking in self.waiting:
                return asking
            if for_logs:
                wanting = [call for call in self.waiting if call.log_level is not None]
                if wanting:
                    return wanting[-1]
            if for_logs:
                return next(reversed(self.waiting), None)
            askable = [call for call in self.waiting if call.takes_questions]
            return askable[-1] if askable else None

    def cached(self, key: str) -> Listing | None:
        with self.lock:
            return self.cache.get(key)

    def store(self, key: str, listing: Listing, changes_before: int) -> None:
        """Cache a listing unless a list_changed arrived while it was being fetched."""
        with self.lock:
            if self.list_changes.get(key, 0) == changes_before:
                self.cache[key] = listing

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
        if call is None or not call.take_log(record):
            self.unrouted_logs.append(record)
        self._log_ring.add(record, RECORD_COST + size)

    def _log_dropped(self, record: LogRecord) -> None:
        if self.unrouted_logs and self.unrouted_logs[0] is record:
            self.unrouted_logs.popleft()

    async def _on_updated(self, params: dict[str, Any]) -> None:
        uri = str(params.get("uri", ""))
        self.updates.append((uri, time.time()))
        with self.lock:
            counts = self.update_counts
            counts[uri] = counts.pop(uri, 0) + 1  # last in the dict: the most recently updated
            self.updates_total += 1
            if len(counts) > UPDATED_URIS:  # the server names the URIs: the longest unheard of one not subscribed goes
                gone = next((old for old in counts if old not in self.subscriptions), None)
                if gone is not None:
                    del counts[gone]
            callbacks = list(self.subscriptions.get(uri, ()))
        for callback in callbacks:  # user code: in a worker thread, never on the frame path
            await anyio.to_thread.run_sync(callback, uri, abandon_on_cancel=True)

    def _list_changed_handler(self, method: str) -> Callable[[dict[str, Any]], Any]:
        def changed(params: dict[str, Any]) -> None:
            with self.lock:
                for key in LIST_CHANGED[method]:
                    self.cache.pop(key, None)
                    self.list_changes[key] = self.list_changes.get(key, 0) + 1

        return changed


def install(session: Session, name: str, *, roots: Any = None, sampling: Any = None, elicitation: Any = None) -> FeatureState:
    """The feature state of a new session, not yet started: notification handlers, and the
    server-request handlers and capabilities that `roots`, `sampling` and `elicitation` ask for.

    Handlers the caller registered already (connect's `handlers=`) are kept.
    """
    requests = ServerRequests(roots=roots, sampling=sampling, elicitation=elicitation)
    if session.rules.server_requests:  # 2026-07-28 has no server requests (nor a client tasks capability)
        requests.receive_tasks(session, taken=lambda method: session.request_handlers.get(method) is not None)
    state = FeatureState(session, name, requests)
    capabilities = dict(session.client.capabilities or {})
    for capability, value in requests.capabilities().items():
        capabilities.setdefault(capability, value)
    session.client.capabilities = capabilities
    for method, handler in requests.handlers().items():
        if session.request_handlers.get(method) is None:
            session.request_handlers.set(method, handler)
    return state


def asking_for(call: Caller) -> contextvars.Token[Caller | None]:
    """From here on in this task, questions from the server go to `call`'s cell."""
    return _asking.set(call)


class Featured(Protocol):
    """What the feature methods use of their connection."""

    name: str

    @property
    def feature_state(self) -> FeatureState: ...

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
