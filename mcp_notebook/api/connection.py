"""`Connection`: one live connection to an MCP server, usable from any cell or thread.

Every blocking method has an awaitable twin (`ping` / `aping`, ...) for top-level
`await` in a notebook; both run the work on the runtime's event-loop thread. Opening
connections and the registry of open ones are `api.connecting.connect`'s.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import anyio

from ..base.errors import ConnectionClosed, UsageError
from ..base.public import public
from ..base.timeouts import check_timeout
from ..runtime import get_runtime
from ..session.era import Era
from ..session.handlers import Handler
from ..session.health import Health
from ..session.session import CallOptions, Session
from ..session.subscriptions import Subscription
from ..session.trace import Trace
from .apps import host as app_host
from .apps import methods as apps
from .calls.core import Core
from .client_side import methods as client_side
from .display import frontend, panels
from .display.diagram import DIAGRAM_ROWS, Diagram
from .display.diagram import build as build_diagram
from .health import violations as health_violations
from .health.monitor import Monitor
from .prompts import methods as prompts
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
    `api.prompts.methods`, `api.skills.methods`, `api.client_side.methods`): one steps
    function per name, given its blocking face and its awaitable twin (`api.calls.twins`).
    """

    def __init__(
        self,
        name: str,
        session: Session,
        core: Core,
        on_close: Callable[[Connection], None] = lambda conn: None,
    ) -> None:
        self.name = name
        self._session = session
        self._core = core  # what the feature methods share; each feature's state hangs on it
        self._on_close = on_close
        self.monitor = Monitor(name, session)  # keepalive, ready/degraded/stale, health history
        self.monitor.start()

    # ----- what we know about the server -----

    @property
    def session(self) -> Session:
        """The session underneath (internals: for tests and the curious, not a stable API)."""
        return self._session

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

    @property
    def health_history(self) -> list[Health]:
        """Recent health snapshots, oldest first (one a second by default, and one per state change)."""
        return list(self.monitor.history)

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

    async def aping(self, *, timeout: float | None = None) -> float:
        check_timeout(timeout)
        pending = self._session.liveness(timeout)
        await pending
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
        if not self._session.rules.discovers:
            raise UsageError("server/discover belongs to the modern era; this connection is legacy")
        return get_runtime().call(_discover, self._session, refresh)

    async def arequest(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        check_timeout(timeout)
        return await self._session.call(method, params, CallOptions(timeout=timeout))

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """Send a raw JSON-RPC notification."""
        get_runtime().call_sync(self._session.notify, method, params)

    async def anotify(self, method: str, params: dict[str, Any] | None = None) -> None:
        await get_runtime().acall(_notify, self._session, method, params)

    def on_request(self, method: str, handler: Handler | None = None) -> Any:
        """Answer server requests for `method` with `handler(params) -> dict`.

        A handler for `ping` replaces the built-in pong. Sync handlers run in a worker
        thread, async ones on the session loop. Usable as a decorator.
        """
        if handler is None:

            def decorate(fn: Handler) -> Handler:
                self._session.request_handlers.set(method, fn)
                return fn

            return decorate
        self._session.request_handlers.set(method, handler)
        return handler

    def remove_handler(self, method: str) -> None:
        """Forget the handler for server requests `method` (a `ping` falls back to the built-in pong)."""
        self._session.request_handlers.set(method, None)

    def on_notification(self, method: str, handler: Handler | None) -> None:
        """Call `handler(params)` for every server notification `method` (None removes it)."""
        self._session.notification_handlers.set(method, handler)

    # ----- the client features: each name's blocking face and awaitable twin, from its feature's table -----

    list_tools, alist_tools = tools.LIST_TOOLS
    tool, atool = tools.TOOL
    describe_tool, adescribe_tool = tools.DESCRIBE_TOOL
    check_arguments, acheck_arguments = tools.CHECK_ARGUMENTS
    call_tool, acall_tool = tools.CALL_TOOL
    cancel = tools.cancel
    list_tasks, alist_tasks = tasks.LIST_TASKS
    get_task, aget_task = tasks.GET_TASK
    cancel_task, acancel_task = tasks.CANCEL_TASK
    task_result, atask_result = tasks.TASK_RESULT
    list_resources, alist_resources = resources.LIST_RESOURCES
    list_resource_templates, alist_resource_templates = resources.LIST_RESOURCE_TEMPLATES
    read_resource, aread_resource = resources.READ_RESOURCE
    template, atemplate = resources.TEMPLATE
    fill_template, afill_template = resources.FILL_TEMPLATE
    read_template, aread_template = resources.READ_TEMPLATE
    subscribe, asubscribe = resources.subscribe, resources.asubscribe
    unsubscribe, aunsubscribe = resources.unsubscribe, resources.aunsubscribe
    resource_updates = resources.resource_updates
    list_prompts, alist_prompts = prompts.LIST_PROMPTS
    get_prompt, aget_prompt = prompts.GET_PROMPT
    complete, acomplete = prompts.COMPLETE
    list_skills, alist_skills = skills.LIST_SKILLS
    get_skill, aget_skill = skills.GET_SKILL
    load_skill, aload_skill = skills.LOAD_SKILL
    read_skill_file, aread_skill_file = skills.READ_SKILL_FILE
    set_log_level, aset_log_level = client_side.SET_LOG_LEVEL
    log_level = property(client_side.log_level)
    logs = property(client_side.logs)
    roots = property(client_side.roots)
    set_roots, aset_roots = client_side.set_roots, client_side.aset_roots
    app = apps.app
    violations = property(health_violations.violations)

    # ----- the server's log and subscriptions: records, and live panels -----

    def log_records(
        self, *, last: int | None = None, level: str | None = None, unrouted_only: bool = False
    ) -> list[dict[str, Any]]:
        """The server's log messages (the last 1000 kept), oldest first, as dicts: time, wall, level,
        logger, data, and in_cell (True when the cell whose call was waiting showed it)."""
        return panels.log_records(self, last=last, level=level, unrouted_only=unrouted_only)

    def log_panel(self, *, level: str | None = None, unrouted_only: bool = False, rows: int = panels.LOG_ROWS) -> Any:
        """A live view of the server's log messages, newest at the bottom (the last `rows`).

        It shows every message the server sent, not only those no cell was waiting for: the
        ones already shown in the waiting cell are greyed and marked "↳ cell", so this is the
        connection's whole server log in order. `unrouted_only=True` hides those; `level` is
        the least severe level shown. Outside Jupyter its repr is a text table.
        """
        return frontend.current().log_panel(self, level=panels.check_level(level), unrouted_only=unrouted_only, rows=rows)

    def subscription_records(self) -> list[dict[str, Any]]:
        """Each subscribed resource (then any updated without a subscription): uri, subscribed,
        updates (how many `notifications/resources/updated` arrived), last_update (wall time)."""
        return panels.subscription_records(self)

    def subscriptions_panel(self, uri: str | None = None, *, read: bool = False) -> Any:
        """A live view of the connection's subscriptions (or of `uri` only): state, update count
        and last update time. `read=True` re-reads each resource after each update (in the
        background, never blocking the session) and shows its latest content.

        A one-resource panel stops when the resource is unsubscribed, and says so.
        """
        return frontend.current().subscriptions_panel(self, uri, read=read)

    # ----- closing -----

    def wait_closed(self, timeout: float | None = None) -> bool:
        """Wait until the connection is closed (the server exited, or close() ran); False on timeout."""
        return get_runtime().call(_wait_closed, self._session, timeout)

    def close(self) -> None:
        """Close the connection and reap the server process."""
        self._on_close(self)
        app_host.of(self).close_views("the connection closed")
        get_runtime().call(self._session.close)

    async def aclose(self) -> None:
        self._on_close(self)
        app_host.of(self).close_views("the connection closed")
        await get_runtime().acall(self._session.close)

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        version = self.protocol_version or "?"
        return f"<Connection {self.name!r} {self.state} {self.era} {version} {self._session.describe()!r}>"


async def _wait_closed(session: Session, timeout: float | None) -> bool:
    with anyio.move_on_after(timeout):
        await session.wait_closed()
        return True
    return False


async def _notify(session: Session, method: str, params: dict[str, Any] | None) -> None:
    session.notify(method, params)


def _start_listening(session: Session, subscription: Subscription) -> None:
    session.subscriptions.add(subscription)
    session.spawn(subscription.run)


async def _discover(session: Session, refresh: bool) -> dict[str, Any]:
    return await session.eras.discover(refresh=refresh)
