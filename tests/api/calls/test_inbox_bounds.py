"""What the server feeds a connection's feature state is bounded, against the official SDK
server: a flood of progress while the caller is held keeps at most INBOX_PROGRESS reports
waiting and still ends on the newest; updates of resources nobody subscribed to are counted
for a bounded number of URIs."""

from __future__ import annotations

import sys
import threading
from typing import Any

from support.servers import SERVERS_DIR, sdk_server_cmd
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.api.calls import progress
from mcp_notebook.api.resources import updates

RAW = [sys.executable, str(SERVERS_DIR / "raw_server.py")]
WAIT = 30  # seconds: only a broken client waits this long
STEPS = 50


def test_a_progress_flood_while_the_callback_is_held_waits_bounded_and_ends_on_the_newest(monkeypatch):
    monkeypatch.setattr(progress, "INBOX_PROGRESS", 5)
    last_read = threading.Event()
    reports: list[tuple[Any, ...]] = []

    async def on_progress(params: dict[str, Any]) -> None:  # runs after the call's own bookkeeping of the frame
        if params.get("progress") == STEPS:
            last_read.set()

    def callback(*report: Any) -> None:
        if not reports:  # the caller is held in its first report until every report has been read
            assert last_read.wait(WAIT)
        reports.append(report)

    with mcp_notebook.connect(sdk_server_cmd(), era="legacy", name="progress") as conn:
        conn.on_notification("notifications/progress", on_progress)
        result = conn.call_tool("steps", {"count": STEPS, "seconds": 0}, progress=callback)
        assert result.text == f"done after {STEPS} steps"
    # two looks (the one held in its first report, and the next): in each, at most the inbox's five and the newest
    assert len(reports) <= 2 * (5 + 1)
    assert [report[0] for report in reports] == sorted({report[0] for report in reports})  # in order, none twice
    assert reports[-1] == (float(STEPS), float(STEPS), f"step {STEPS}/{STEPS}")


def test_updates_of_resources_nobody_subscribed_to_are_counted_for_a_bounded_number_of_uris(monkeypatch):
    """Real peers send updates only for subscribed resources: the scripted raw server names any."""
    monkeypatch.setattr(updates, "UPDATED_URIS", 2)
    with mcp_notebook.connect(RAW, era="legacy", name="updates") as conn:
        reply = conn.request("tools/call", {"name": "updates-flood", "arguments": {"count": 4}})
        assert reply["content"][0]["text"] == '"flooded"'  # the raw server answers JSON
        # the handlers run as tasks on the loop: nothing reports their end but the count
        wait_until(lambda: conn.subscriptions.updates() == 4, "the 4 updates to be counted")
        assert list(updates.of(conn).counts) == ["note://2", "note://3"]
        assert conn.subscriptions.updates() == 4 and conn.subscriptions.updates("note://3") == 1
