"""What the server feeds a connection's feature state is bounded, against the official SDK
server: a flood of progress while the caller is held keeps at most INBOX_PROGRESS reports
waiting and still ends on the newest."""

from __future__ import annotations

import threading
from typing import Any

from conftest import sdk_server_cmd

import mcp_notebook
from mcp_notebook.api.calls import progress

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
    assert len(reports) <= 1 + 5 + 1  # the one that held it, the inbox's five, the newest
    assert reports[-1] == (float(STEPS), float(STEPS), f"step {STEPS}/{STEPS}")
