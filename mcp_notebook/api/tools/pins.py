"""Tool definitions checked against their pin, per connection (`configs.pins` keeps the pins).

`check(conn)` lists the server's tools and compares them with the pin of the server (its
configured name, else its command line or URL): the first time, it pins them; after that, a
difference is a `tools-changed` event in the connection's trace and a warning through the front
end, and stays on the connection (`warning`, shown by the health widget) until `accept`
re-pins. A connection opened from a configuration is checked as it opens; any other the first
time its tools are asked about (`%mcp tools`, `tool_changes`).
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import Any

from ...base.errors import McpNotebookError, UsageError
from ...configs import pins
from ...configs.pins import ToolsDiff, server_key
from ..display import frontend

__all__ = ["PinStatus", "ToolsDiff", "accept_tools", "check", "server_key", "status", "tool_changes", "warning"]


@dataclass(frozen=True)
class PinStatus:
    """What the last check of a connection found: its pin key, and how its tools differ (empty: none)."""

    key: str
    diff: ToolsDiff
    first_seen: bool = False


_status: weakref.WeakKeyDictionary[Any, PinStatus] = weakref.WeakKeyDictionary()
_keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def key_of(conn: Any) -> str:
    """The pin key of a connection: its configured name, or its command line or URL."""
    return _keys.get(conn) or server_key(target=conn.health.endpoint)


def check(conn: Any, *, key: str | None = None, refresh: bool = False) -> PinStatus | None:
    """Compare the server's tools with their pin (pin them the first time); None if it has no tools."""
    if key is not None:
        _keys[conn] = key
    key = key_of(conn)
    if "tools" not in (conn.server_capabilities or {}):
        return None
    try:
        tools = list(conn.list_tools(refresh=refresh))
        record = pins.pinned(key)
        if record is None:
            pins.pin(key, tools)
    except (McpNotebookError, OSError) as exc:  # the connection stays usable; the user is told
        frontend.current().warn(f"{conn.name}: could not check its tools against their pin: {exc}")
        return None
    if record is None:
        found = PinStatus(key, ToolsDiff(), first_seen=True)
    else:
        found = PinStatus(key, pins.compare(record, tools))
        before = _status.get(conn)
        if found.diff and (before is None or before.diff != found.diff):
            conn.trace.event("tools-changed", found.diff.summary(), server=key, **found.diff.as_dict())
            frontend.current().warn(warning_text(conn.name, found.diff))
    _status[conn] = found
    return found


def status(conn: Any) -> PinStatus | None:
    return _status.get(conn)


def tool_changes(conn: Any) -> ToolsDiff:
    """How the connection's tools differ from their pin now (asking the server again)."""
    found = check(conn, refresh=True)
    return found.diff if found is not None else ToolsDiff()


def accept_tools(conn: Any) -> int:
    """Pin the connection's tools as they are now; how many were pinned."""
    key = key_of(conn)
    tools = list(conn.list_tools(refresh=True))
    try:
        pins.pin(key, tools)
    except OSError as exc:
        raise UsageError(f"{conn.name}: cannot write the pinned tools: {exc}") from None
    _status[conn] = PinStatus(key, ToolsDiff())
    return len(tools)


def warning(conn: Any) -> str | None:
    """The standing warning of a connection whose tools changed since their pin, or None."""
    found = _status.get(conn)
    return warning_text(conn.name, found.diff) if found is not None and found.diff else None


def warning_text(name: str, diff: ToolsDiff) -> str:
    return (
        f"{name}: tools changed since they were pinned: {diff.summary()}. Check them before use: "
        f"%mcp tools {name} --diff shows how; --accept pins them as they are now"
    )
