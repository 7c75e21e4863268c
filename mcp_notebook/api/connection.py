"""`Connection`: one live connection to an MCP server, usable from any cell or thread.

The methods here block; their awaitable twins, same names, are on `conn.aio` (`api.aio`'s
`AsyncConnection`), for top-level `await` in a notebook; both run the work on the runtime's
event-loop thread. The names kept here are what a user needs (<= 60, tests/test_public_api.py):
the session underneath is reached inside `api` through `session_of`, never as a public
attribute. The old spellings (`aping`, `log_panel`, ...) still work for one release through
`__getattr__`, with a DeprecationWarning naming the new one. Opening connections and the
registry of open ones are `api.connecting.connect`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..base.errors import ConnectionClosed, UsageError
from ..base.public import public
from ..base.timeouts import check_timeout
from ..protocol.frame_rules import Violation
from ..runtime import get_runtime
from ..session import health_view
from ..session.era import Era
from ..session.handlers import Handler
from ..session.health import Health
from ..session.session import CallOptions, Session
from ..session.subscriptions import Subscription
from ..session.trace import Trace
from .aio import AsyncConnection, check_discovers, closed_within, discovered
from .apps import host as app_host
from .apps import methods as apps
from .batch import methods as batch
from .calls.core import Core
from .client_side import methods as client_side
from .display.diagram import DIAGRAM_ROWS, Diagram
from .display.diagram import build as build_diagram
from .health import violations as health_violations
from .health.monitor import Monitor
from .prompts import methods as prompts
from .records import ServerLog, Subscriptions
from .renamed import old_name
from .resources import methods as resources
from .skills import methods as skills
from .tasks import methods as tasks
from .tools import methods as tools


@public
class Connection:
    """A live connection to one MCP server, usable from any cell or thread.

    Composed of its session (on the runtime's loop), its calls' core (`api.calls.core`: the
    calls in progress, list caches, and each feature's own state) and its health monitor. The feature methods come from each
    feature's table (`api.tools.methods`, `api.tasks.methods`, `api.resources.methods`,
    `api.prompts.methods`, `api.skills.methods`, `api.client_side.methods`; `map`, a tool
    over rows, is `api.batch.methods`'): one steps
    function per name, given its blocking face here and its awaitable twin on `conn.aio`
    (`api.calls.twins`). Every request method has its twin there, but those `AsyncConnection`'s
    docstring lists as blocking-only.
    """

    def __init__(
        self,
        name: str,
        session: Session,
        core: Core,
        on_close: Callable[[Connection], None] = lambda conn: None,
        reopen: Callable[..., Any] | None = None,
    ) -> None:
        self.name = name
        self._session = session
        self._core = core  # what the feature methods share; each feature's state hangs on it
        self._on_close = on_close
        self._reopen = reopen  # restarts the server under this connection (`api.connecting.restart`)
        self._handlers: dict[tuple[str, str], Handler | None] = {}  # the user's, set again on a restarted session
        self._aio = AsyncConnection(self, session, self._closing)
        self.monitor = Monitor(name, session)  # keepalive, ready/degraded/stale, health history
        self.monitor.start()

    # ----- what we know about the server -----

    @property
    def aio(self) -> AsyncConnection:
        """This connection's awaitable face: `await conn.aio.call_tool(...)`, every request method by
        the same name as here."""
        return self._aio

    @property
    def state(self) -> str:
        return self._session.counters.state

    @property
    def era(self) -> str:
        return self._session.era

    @property
    def rules(self) -> Era:
        """What this connection's era has (pings, server requests, tasks, ...), as one object."""
        return self._session.rules

    @property
    def protocol_version(self) -> str | None:
        return self._session.protocol_version

    @property
    def server_info(self) -> dict[str, Any] | None:
        return self._session.server.info

    @property
    def server_capabilities(self) -> dict[str, Any]:
        return self._session.server.capabilities

    @property
    def instructions(self) -> str | None:
        return self._session.server.instructions

    @property
    def trace(self) -> Trace:
        return self._session.trace

    def diagram(self, last: int | None = DIAGRAM_ROWS, *, events: bool = True, **filters: Any) -> Diagram:
        """A sequence diagram of the newest `last` trace entries matching `filters` (as `trace.filter`)."""
        return build_diagram(self.name, self.trace, last=last, events=events, **filters)

    @property
    def closed(self) -> bool:
        return self._session.closed

    @property
    def health(self) -> Health:
        """A snapshot of the connection's health, taken now."""
        return self.monitor.health()

    def keepalive(self, **settings: Any) -> Any:
        """Set this connection's keepalive: enabled=, interval=, timeout=, misses=, reset=True."""
        return self.monitor.configure(**settings)

    @property
    def stderr(self) -> list[str]:
        """The server's recent stderr lines (bounded)."""
        return list(self._session.stderr_lines())

    # ----- requests -----

    def ping(self, *, timeout: float | None = None) -> float:
        """Ping the server; returns the round-trip time in seconds.

        On a modern (2026-07-28) connection, where ping was removed, this sends no ping:
        it checks the transport and times a fresh `server/discover` instead. Ctrl-C or the
        timeout cancels it on the server before this returns, so the session stays usable.
        """
        check_timeout(timeout)
        pending = self._session.liveness(timeout)
        pending.result()
        return pending.rtt

    def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """Send a raw JSON-RPC request and return its result; errors raise McpError.

        Modern requests carry their `_meta` and may take several rounds (input_required);
        Ctrl-C or the timeout cancels the request on the server before this returns.
        """
        check_timeout(timeout)
        return self._session.call(method, params, CallOptions(timeout=timeout)).result()

    def in_flight(self) -> list[dict[str, Any]]:
        """Our requests awaiting their answers, oldest first: each one's `id` (for `cancel(id)`),
        `method` and `seconds` since it was sent."""
        now = time.perf_counter()
        return [
            {"id": r.id, "method": r.method, "seconds": round(now - r.sent_at, 3) if r.sent_at else 0.0}
            for r in self._session.on_the_wire()
        ]

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        callback: Callable[[str, dict[str, Any]], Any] | None = None,
        timeout: float | None = None,
    ) -> Subscription:
        """Open a `subscriptions/listen` stream (2026-07-28) and wait for the server's acknowledgment.

        `callback(method, params)` runs for each notification (in a worker thread); they
        are also kept on `subscription.received`. An abrupt drop re-listens by itself;
        `subscription.close()` ends it. On legacy connections use resources/subscribe.
        """
        check_timeout(timeout)
        if not self._session.rules.listens:
            raise UsageError("subscriptions/listen belongs to the modern era (2026-07-28); this connection is legacy")
        wanted: dict[str, Any] = {}
        for key, on in (("toolsListChanged", tools), ("promptsListChanged", prompts), ("resourcesListChanged", resources)):
            if on:
                wanted[key] = True
        if resource_uris:
            wanted["resourceSubscriptions"] = list(resource_uris)
        if not wanted:
            raise UsageError("listen to something: tools=True, prompts=True, resources=True or resource_uris=[...]")
        runtime, session = get_runtime(), self._session
        subscription = Subscription(session, wanted, callback)
        subscription.closer = lambda: runtime.call_sync(subscription.cancel)
        runtime.call_sync(_start_listening, session, subscription)
        limit = session.limit(timeout)
        if not subscription.wait_acknowledged(limit) or subscription.ended:
            subscription.close()
            raise ConnectionClosed(
                f"subscriptions/listen was not acknowledged: {subscription.ended or f'no answer within {limit:g} s'}"
            )
        return subscription

    def discover(self, *, refresh: bool = False) -> dict[str, Any]:
        """The server's `server/discover` result (modern era), cached for its `ttlMs`."""
        check_discovers(self._session)
        return get_runtime().call(discovered, self._session, refresh)

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a raw JSON-RPC notification."""
        get_runtime().call_sync(self._session.notify, method, params)

    def on_request(self, method: str, handler: Handler | None = None) -> Any:
        """Answer server requests for `method` with `handler(params) -> dict`.

        A handler for `ping` replaces the built-in pong. Sync handlers run in a worker
        thread, async ones on the session loop. Usable as a decorator.
        """
        if handler is None:

            def decorate(fn: Handler) -> Handler:
                self._set_handler("request", method, fn)
                return fn

            return decorate
        self._set_handler("request", method, handler)
        return handler

    def remove_handler(self, method: str) -> None:
        """Forget the handler for server requests `method` (a `ping` falls back to the built-in pong)."""
        self._set_handler("request", method, None)

    def on_notification(self, method: str, handler: Handler | None) -> None:
        """Call `handler(params)` for every server notification `method` (None removes it)."""
        self._set_handler("notification", method, handler)

    def _set_handler(self, kind: str, method: str, handler: Handler | None) -> None:
        self._handlers[kind, method] = handler
        table = self._session.request_handlers if kind == "request" else self._session.notification_handlers
        table.set(method, handler)

    # ----- the client features: each table's blocking face (the awaitable twins: `conn.aio`) -----

    list_tools = tools.LIST_TOOLS.blocking
    tool = tools.TOOL.blocking
    describe_tool = tools.DESCRIBE_TOOL.blocking
    check_arguments = tools.CHECK_ARGUMENTS.blocking
    call_tool = tools.CALL_TOOL.blocking
    map = batch.map
    cancel = tools.cancel
    list_tasks = tasks.LIST_TASKS.blocking
    get_task = tasks.GET_TASK.blocking
    cancel_task = tasks.CANCEL_TASK.blocking
    task_result = tasks.TASK_RESULT.blocking
    list_resources = resources.LIST_RESOURCES.blocking
    list_resource_templates = resources.LIST_RESOURCE_TEMPLATES.blocking
    read_resource = resources.READ_RESOURCE.blocking
    template = resources.TEMPLATE.blocking
    fill_template = resources.FILL_TEMPLATE.blocking
    read_template = resources.READ_TEMPLATE.blocking
    subscribe = resources.subscribe
    unsubscribe = resources.unsubscribe
    list_prompts = prompts.LIST_PROMPTS.blocking
    get_prompt = prompts.GET_PROMPT.blocking
    complete = prompts.COMPLETE.blocking
    list_skills = skills.LIST_SKILLS.blocking
    get_skill = skills.GET_SKILL.blocking
    load_skill = skills.LOAD_SKILL.blocking
    read_skill_file = skills.READ_SKILL_FILE.blocking
    set_log_level = client_side.SET_LOG_LEVEL.blocking
    log_level = property(client_side.log_level)
    roots = property(client_side.roots)
    set_roots = client_side.set_roots
    app = apps.app

    @property
    def violations(self) -> list[Violation]:
        """Every rule the server's frames broke, oldest first (the newest 1000 kept): each a
        `Violation` with `index` (its trace entry's seq), `direction`, `method`, `where` (a JSON
        pointer into the frame), `rule`, `message` and `url` (the spec section, where one applies)."""
        return health_violations.violations(self._session)

    # ----- the server's log and subscriptions: records, and live panels -----

    @property
    def logs(self) -> ServerLog:
        """The server's log messages (`notifications/message`), oldest first, the last 1000 kept:
        a list of records, with `.records(...)` (as dicts, filtered) and `.panel(...)` (a live view)."""
        return ServerLog(self)

    @property
    def subscriptions(self) -> Subscriptions:
        """The resource subscriptions: `.records()`, `.updates(uri)` (how many updates arrived)
        and `.panel(uri, read=...)` (a live view)."""
        return Subscriptions(self)

    # ----- restarting -----

    def reconnect(self, *, reload: bool | None = None, why: str = "asked") -> Any:
        """Restart the server under this same connection: a new process with the same command and
        env (stdio), or a new session with the same options (HTTP). The trace, the health monitor and
        the live widgets carry on (a "reconnect" event marks the restart; `health.restarts` counts
        them); the tools are listed again, and the summary returned says what changed.
        `reload=True` then restarts it whenever the server's files change, False stops that."""
        if self._reopen is None:
            raise UsageError(f"{self.name}: this connection cannot be reconnected (it was not opened by connect())")
        return self._reopen(self, why=why, reload=reload)

    def _adopt(self, session: Session, core: Core) -> None:
        """Carry on over a restarted server's session (`api.connecting.restart`): the user's handlers
        are set on it, both faces and the monitor follow it."""
        for (kind, method), handler in self._handlers.items():
            (session.request_handlers if kind == "request" else session.notification_handlers).set(method, handler)
        self._session, self._core = session, core
        self._aio._session = session
        self.monitor.adopt(session)

    # ----- closing -----

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Wait until the connection is closed (the server exited, or close() ran); False on timeout."""
        return get_runtime().call(closed_within, self._session, timeout)

    def close(self) -> None:
        """Close the connection and reap the server process."""
        self._closing()
        get_runtime().call(self._session.close)

    def _closing(self) -> None:
        """What closing does before the session closes: forget the name, close the app views."""
        self._on_close(self)
        app_host.of(self).close_views("the connection closed")

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    if not TYPE_CHECKING:  # type checkers see only the names kept: a removed one is an error there

        def __getattr__(self, name: str) -> Any:
            if name.startswith("_"):  # internals (and copy/pickle probes) are never old public names
                raise AttributeError(f"'Connection' object has no attribute {name!r}")
            return old_name(self, name)

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        """IPython shows a connection as its one status line (server, transport, era; or how it ended)."""
        p.text(health_view.status_line(self.health))

    def __repr__(self) -> str:
        version = self.protocol_version or "?"
        return f"<Connection {self.name!r} {self.state} {self.era} {version} {self._session.describe()!r}>"


def _start_listening(session: Session, subscription: Subscription) -> None:
    session.subscriptions.add(subscription)
    session.spawn(subscription.run)


def session_of(conn: Connection) -> Session:
    """The session underneath a connection: for `api`'s own modules, front ends' live panels and
    tests (internals, not a public name of `Connection`)."""
    return conn._session
