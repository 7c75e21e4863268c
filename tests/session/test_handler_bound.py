"""The user's handlers of server notifications and requests are bounded per connection
(session/user_handlers.py): against the official SDK server over stdio, a flood with slow
handlers drops notifications with a count and a notice, answers requests 'busy' at once (the
server never waits), and never refuses a ping; the reader never waits for a handler."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import anyio
import pytest
from support.servers import sdk_server_cmd

import mcp_notebook
from mcp_notebook.runtime import get_runtime
from mcp_notebook.session import health_view, user_handlers

WAIT = 30  # seconds: only a broken client waits this long
LIMIT = 3


class Held:
    """An async handler that holds every call until `release`, counting them; a call that
    returns signals `returned` in the loop step that ends its task (the bound's release too)."""

    def __init__(self, answer: dict[str, Any] | None = None) -> None:
        self.answer = answer
        self.entered = 0
        self.most = 0  # handlers running at once, at most
        self.returned = 0
        self.changed = threading.Condition()
        self._running = 0
        self._gate: anyio.Event | None = None

    async def handle(self, params: dict[str, Any]) -> dict[str, Any] | None:
        if self._gate is None:
            self._gate = anyio.Event()
        with self.changed:
            self.entered += 1
            self._running += 1
            self.most = max(self.most, self._running)
            self.changed.notify_all()
        await self._gate.wait()
        with self.changed:
            self._running -= 1
            self.returned += 1
            self.changed.notify_all()
        return self.answer

    def wait_for(self, what: str, count: int) -> None:
        with self.changed:
            assert self.changed.wait_for(lambda: getattr(self, what) >= count, WAIT), f"{what}: {getattr(self, what)}"

    def release(self) -> None:
        gate = self._gate
        assert gate is not None
        get_runtime().call_soon(gate.set)


@pytest.fixture
def small_bound(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(user_handlers, "LIMIT", LIMIT)
    yield


def events(conn: mcp_notebook.Connection, kind: str) -> list[str]:
    return [e.note or "" for e in conn.trace.filter(kind=kind)]


def test_a_flood_of_notifications_with_a_slow_handler_is_dropped_beyond_the_bound_with_a_count(small_bound):
    held = Held()
    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="flood") as conn:
        conn.on_notification("notifications/message", held.handle)
        # 10 steps: 20 log lines, each read and dispatched before the tool's result
        assert conn.call_tool("steps", {"count": 10, "seconds": 0}).text == "done after 10 steps"
        held.wait_for("entered", LIMIT)
        assert held.entered == LIMIT and held.most == LIMIT  # never more handler tasks than the bound
        health = conn.health
        assert health.notifications_dropped == 20 - LIMIT and health.requests_refused == 0
        [notice] = events(conn, "handlers-full")
        assert notice.startswith(f"{LIMIT} notifications of the server's wait for their handlers: notifications/message")
        assert "dropped until they catch up" in notice
        assert conn.ping() > 0 and conn.state == "ready"  # the reader never waited for the handlers
        held.release()
        held.wait_for("returned", LIMIT)
        assert conn.call_tool("steps", {"count": 1, "seconds": 0}).text == "done after 1 steps"
        held.wait_for("returned", LIMIT + 2)  # room again: both new lines were handled
        assert events(conn, "handlers-caught-up") == [f"the handlers caught up; {20 - LIMIT} notifications dropped meanwhile"]
        health = conn.health
        assert health.notifications_dropped == 20 - LIMIT
        assert "handlers     17 notifications dropped, 0 requests answered 'busy'" in health_view.text(health)


def test_server_requests_beyond_the_bound_are_answered_busy_at_once_and_pings_never(small_bound):
    held = Held({"action": "accept", "content": {"name": "Ada"}})
    handlers = {"elicitation/create": held.handle}
    with mcp_notebook.connect(
        sdk_server_cmd(), era="legacy", name="busy", elicitation=lambda params: None, handlers=handlers
    ) as conn:
        conn.on_request("ping", held.handle)  # a user's ping handler, held too
        outcomes: list[Any] = []
        asking = [threading.Thread(target=lambda: outcomes.append(conn.call_tool("ask_name"))) for _ in range(LIMIT)]
        for thread in asking:
            thread.start()
        held.wait_for("entered", LIMIT)  # every handler task is taken
        with pytest.raises(mcp_notebook.McpError, match="the client is busy: 3 earlier requests"):
            conn.call_tool("ask_name")  # answered 'busy' at once (the SDK passes it on): it ends though the others wait
        assert conn.call_tool("ping_client", {"count": 2}).text == "2"  # the built-in pong: pings are never refused
        assert held.entered == LIMIT and held.most == LIMIT
        health = conn.health
        assert health.requests_refused == 1 and health.notifications_dropped == 0 and health.pongs_sent == 2
        [notice] = events(conn, "handlers-full")
        assert notice.startswith(f"{LIMIT} requests of the server's wait for their handlers: elicitation/create")
        held.release()
        for thread in asking:
            thread.join(WAIT)
        assert [outcome.text for outcome in outcomes] == ["hello Ada"] * LIMIT
        [reply] = [e for e in conn.trace.entries() if e.direction == "out" and e.note == "refused: busy"]
        assert reply.message["error"]["code"] == -32603
