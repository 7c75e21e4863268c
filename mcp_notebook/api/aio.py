"""`AsyncConnection`: a connection's awaitable face, `conn.aio`, for top-level `await` in a notebook
or a coroutine of the caller's own loop (as httpx's `AsyncClient`, grpc's `.aio`).

The rule kept here: the same names, parameters and docstrings as `Connection`'s blocking
methods, awaited. The feature methods are each feature table's `awaiting` faces (`calls.twins`),
the same steps the blocking faces drive; the few written by hand run on the runtime's loop as
their blocking twins do. A request method of `Connection` without a twin here is listed, with
why, in the class docstring.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from ..base.errors import UsageError
from ..base.public import public
from ..runtime import get_runtime
from ..session.session import CallOptions, Session
from ..session.subscriptions import Subscription
from .batch import methods as batch
from .calls.twins import awaited
from .client_side import methods as client_side
from .connecting.options import check_timeout
from .prompts import methods as prompts
from .resources import methods as resources
from .skills import methods as skills
from .tasks import methods as tasks
from .tools import methods as tools

if TYPE_CHECKING:
    from .calls.core import Featured


@public
class AsyncConnection:
    """The awaitable face of a `Connection` (`conn.aio`): `await conn.aio.call_tool(...)`.

    Each method is the blocking method of the same name, awaited: the caller's event loop keeps
    running while the request is under way, and cancelling the await cancels the request. The
    work runs on the runtime's event-loop thread either way.

    Blocking-only, on `Connection` alone: `cancel` (it tells the server and returns at once),
    `app` (it returns the view at once; the call runs in the background, `view.result` when it
    ends), and what sends nothing: `on_request`, `remove_handler`, `on_notification`,
    `in_flight`, `keepalive`, `diagram`, the properties, `logs` and `subscriptions`.
    """

    def __init__(self, connection: Featured, session: Session, closing: Callable[[], None]) -> None:
        self._connection = connection  # the blocking face: the feature methods' steps take it
        self._session = session
        self._closing = closing  # what closing does before the session closes (Connection._closing)

    # ----- requests -----

    async def ping(self, *, timeout: float | None = None) -> float:
        """`ping`, awaited: the round-trip time in seconds (on a modern connection, a timed
        `server/discover`). Cancelling the await cancels it on the server."""
        check_timeout(timeout)
        pending = self._session.liveness(timeout)
        await pending
        return pending.rtt

    async def request(self, method: str, params: dict[str, Any] | None = None, *, timeout: float | None = None) -> Any:
        """`request`, awaited: send a raw JSON-RPC request and return its result; errors raise McpError."""
        check_timeout(timeout)
        return await self._session.call(method, params, CallOptions(timeout=timeout))

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        """`notify`, awaited: send a raw JSON-RPC notification."""
        await get_runtime().acall(_notify, self._session, method, params)

    async def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        callback: Callable[[str, dict[str, Any]], Any] | None = None,
        timeout: float | None = None,
    ) -> Subscription:
        """`listen`, awaited: open a `subscriptions/listen` stream (2026-07-28) and wait for the
        server's acknowledgment in a worker thread, the caller's loop running."""
        listen = functools.partial(
            self._connection.listen,
            tools=tools,
            prompts=prompts,
            resources=resources,
            resource_uris=resource_uris,
            callback=callback,
            timeout=timeout,
        )
        return await anyio.to_thread.run_sync(listen)

    async def discover(self, *, refresh: bool = False) -> dict[str, Any]:
        """`discover`, awaited: the server's `server/discover` result (modern era), cached for its `ttlMs`."""
        check_discovers(self._session)
        return await get_runtime().acall(discovered, self._session, refresh)

    async def wait_closed(self, timeout: float | None = None) -> bool:
        """`wait_closed`, awaited: until the connection is closed; False on timeout."""
        return await get_runtime().acall(closed_within, self._session, timeout)

    async def reconnect(self, *, reload: bool | None = None, why: str = "asked") -> Any:
        """`reconnect`, awaited: restart the server under this same connection (in a worker thread,
        the caller's loop running); the summary of what changed."""
        reconnect = functools.partial(self._connection.reconnect, reload=reload, why=why)
        return await anyio.to_thread.run_sync(reconnect)

    async def close(self) -> None:
        """`close`, awaited: close the connection and reap the server process."""
        self._closing()
        await get_runtime().acall(self._session.close)

    # ----- the client features: each table's awaitable face, under the blocking face's name -----

    list_tools = tools.LIST_TOOLS.awaiting
    tool = tools.TOOL.awaiting
    describe_tool = tools.DESCRIBE_TOOL.awaiting
    check_arguments = tools.CHECK_ARGUMENTS.awaiting
    call_tool = tools.CALL_TOOL.awaiting
    map = awaited(batch.amap)
    list_tasks = tasks.LIST_TASKS.awaiting
    get_task = tasks.GET_TASK.awaiting
    cancel_task = tasks.CANCEL_TASK.awaiting
    task_result = tasks.TASK_RESULT.awaiting
    list_resources = resources.LIST_RESOURCES.awaiting
    list_resource_templates = resources.LIST_RESOURCE_TEMPLATES.awaiting
    read_resource = resources.READ_RESOURCE.awaiting
    template = resources.TEMPLATE.awaiting
    fill_template = resources.FILL_TEMPLATE.awaiting
    read_template = resources.READ_TEMPLATE.awaiting
    subscribe = awaited(resources.asubscribe)
    unsubscribe = awaited(resources.aunsubscribe)
    list_prompts = prompts.LIST_PROMPTS.awaiting
    get_prompt = prompts.GET_PROMPT.awaiting
    complete = prompts.COMPLETE.awaiting
    list_skills = skills.LIST_SKILLS.awaiting
    get_skill = skills.GET_SKILL.awaiting
    load_skill = skills.LOAD_SKILL.awaiting
    read_skill_file = skills.READ_SKILL_FILE.awaiting
    set_log_level = client_side.SET_LOG_LEVEL.awaiting
    set_roots = awaited(client_side.aset_roots)

    def __repr__(self) -> str:
        return f"<AsyncConnection of {self._connection!r}>"


def check_discovers(session: Session) -> None:
    """`discover`'s precondition, for both faces: the modern era."""
    if not session.rules.discovers:
        raise UsageError("server/discover belongs to the modern era; this connection is legacy")


async def _notify(session: Session, method: str, params: dict[str, Any] | None) -> None:
    session.notify(method, params)


async def discovered(session: Session, refresh: bool) -> dict[str, Any]:
    return await session.eras.discover(refresh=refresh)


async def closed_within(session: Session, timeout: float | None) -> bool:
    """True once the session is closed; False when `timeout` passes first (both faces' `wait_closed`)."""
    with anyio.move_on_after(timeout):
        await session.wait_closed()
        return True
    return False
