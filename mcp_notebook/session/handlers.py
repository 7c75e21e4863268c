"""User handlers for server requests and notifications, and how they are run.

Handlers are user code: sync ones run in a worker thread and async ones as their own
task, never on the path that reads frames, so a slow handler cannot delay a pong; how many
run at once for one connection is bounded in `user_handlers`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.to_thread

from ..base.errors import McpError
from ..protocol import jsonrpc as rpc

Handler = Callable[[dict[str, Any]], Any] | Callable[[dict[str, Any]], Awaitable[Any]]
RELATED_TASK = "io.modelcontextprotocol/related-task"  # _meta key tying a message to a task (2025-11-25)


class Handlers:
    """A registry of handlers by method name."""

    def __init__(self) -> None:
        self._table: dict[str, Handler] = {}
        self._inline: dict[str, Callable[[dict[str, Any]], None]] = {}

    def set(self, method: str, handler: Handler | None) -> None:
        """Register `handler` for `method`; None removes it."""
        if handler is None:
            self._table.pop(method, None)
        elif not callable(handler):
            raise TypeError(f"the handler for {method!r} is not callable")
        else:
            self._table[method] = handler

    def get(self, method: str) -> Handler | None:
        return self._table.get(method)

    def set_inline(self, method: str, handler: Callable[[dict[str, Any]], None]) -> None:
        """Our own bookkeeping for `method`: run on the session thread as the frame is read.

        It must be quick and never block; in exchange it sees a notification before any
        response read after it (so progress that precedes a result is counted before it).
        """
        self._inline[method] = handler

    def inline(self, method: str) -> Callable[[dict[str, Any]], None] | None:
        return self._inline.get(method)


async def call_handler(handler: Handler, params: dict[str, Any]) -> Any:
    """Run a handler off the event loop's frame path and return what it returned."""
    if inspect.iscoroutinefunction(handler):
        return await handler(params)
    return await anyio.to_thread.run_sync(handler, params, abandon_on_cancel=True)


async def reply_from_handler(handler: Handler, request: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
    """The JSON-RPC reply a handler gives a server request, and a note when it failed."""
    request_id = request["id"]
    try:
        value = await call_handler(handler, request.get("params") or {})
        if value is None:
            value = {}
        if not isinstance(value, dict):
            raise TypeError(f"a handler must return a dict, not {type(value).__name__}")
        related = _related_task(request.get("params"))
        if related is not None:  # a task's question: its answer says so too (the tasks spec's MUST)
            meta = value.get("_meta")
            value = {**value, "_meta": {**(meta if isinstance(meta, dict) else {}), RELATED_TASK: related}}
        return rpc.result(request_id, value), None
    except McpError as exc:
        return rpc.error(request_id, exc.code, exc.message, exc.data), None
    except Exception as exc:  # noqa: BLE001 - a user handler's bug becomes the server's error reply
        problem = f"{type(exc).__name__}: {exc}"
        return rpc.error(request_id, rpc.INTERNAL_ERROR, problem), problem


def _related_task(params: Any) -> dict[str, Any] | None:
    """The `io.modelcontextprotocol/related-task` of a request's params, if it has one."""
    meta = params.get("_meta") if isinstance(params, dict) else None
    related = meta.get(RELATED_TASK) if isinstance(meta, dict) else None
    return related if isinstance(related, dict) else None
