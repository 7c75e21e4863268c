"""The tool calls an MCP App makes, followed as a cell's are: each goes out with a progress
token of ours, and its progress and the log lines that arrive while it runs are shown under
the app's view (its cell), not lost to the connection's log panel.

An app's call is never where a server's question (elicitation, sampling) is shown: the
view has no form for it, so questions keep going to a waiting cell.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...base.timeouts import Deadline
from ..calls.core import Core
from ..calls.progress import Caller, LogRecord, new_token


class AppCaller(Caller):
    """One `tools/call` from an app: its progress and log lines go to `show`, one text line each."""

    takes_questions = False

    def __init__(self, tool: str, token: str, show: Callable[[str], None]) -> None:
        super().__init__("tools/call", Deadline(None), token)
        self.tool = tool
        self.show = show

    def on_progress(self, params: dict[str, Any]) -> None:
        super().on_progress(params)
        self.drain()  # nobody waits on this inbox: the line below is the report
        self.show(f"{self.tool}: {self.progress.line(20)}")

    def post(self, kind: str, payload: Any) -> None:
        if kind == "log" and isinstance(payload, LogRecord):
            self.show(f"{self.tool}: {payload.line()}")


async def followed_call(fx: Core, params: dict[str, Any], show: Callable[[str], None]) -> Any:
    """`tools/call` with `params` (name, arguments) for an app, its progress and logs shown."""
    token = new_token()
    call = AppCaller(str(params.get("name")), token, show)
    fx.begin(call)
    try:
        return await fx.session.request("tools/call", {**params, "_meta": {"progressToken": token}})
    finally:
        fx.end(call)
