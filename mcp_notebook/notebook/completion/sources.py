"""Where Tab's candidates come from: a connection's tools, prompts, resources and templates,
asked for briefly, and the files under a typed path (`candidates` decides which it needs).

The rule kept here: a Tab never blocks the kernel for long and never raises. A listing the
server has not sent yet is waited for `WAIT` seconds (it keeps arriving in the background and
is cached for the next Tab), and any failure means no candidates.
"""

from __future__ import annotations

import glob
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ...api.apps.methods import model_tools
from ...api.connection import Connection

WAIT = 1.0  # seconds a Tab waits for the server


def bounded(fn: Callable[[], Iterable[Any]]) -> list[Any]:
    """`list(fn())` if it returns within WAIT seconds without raising, else [] (it finishes alone)."""
    box: list[list[Any]] = []
    done = threading.Event()

    def work() -> None:
        try:
            box.append(list(fn()))
        except Exception:  # noqa: BLE001 - no candidates is the answer to any failure
            pass
        finally:
            done.set()

    threading.Thread(target=work, name="mcp-notebook-completion", daemon=True).start()
    done.wait(WAIT)
    return box[0] if box else []


def names_of(items: Iterable[Any], key: str = "name") -> list[str]:
    return [item[key] for item in items if isinstance(item, dict) and isinstance(item.get(key), str)]


def tool_names(conn: Connection) -> list[str]:
    """The tools `%mcp tools` lists: app-only ones (MCP Apps) are the view's, not the user's."""
    return names_of(bounded(lambda: model_tools(conn.list_tools())))


def prompt_names(conn: Connection) -> list[str]:
    return names_of(bounded(conn.list_prompts))


def resource_uris(conn: Connection) -> list[str]:
    return names_of(bounded(conn.list_resources), "uri")


def templates(conn: Connection) -> list[dict[str, Any]]:
    return [t for t in bounded(conn.list_resource_templates) if isinstance(t, dict)]


def schema_of(conn: Connection, tool: str) -> dict[str, Any]:
    found = bounded(conn.list_tools)
    for item in found:
        if isinstance(item, dict) and item.get("name") == tool and isinstance(item.get("inputSchema"), dict):
            schema: dict[str, Any] = item["inputSchema"]
            return schema
    return {}


def paths(fragment: str, limit: int = 200) -> list[str]:
    """Files and directories (these with a trailing /) that start with `fragment`; `~` kept as typed."""
    base = os.path.expanduser(fragment)
    found = []
    for path in sorted(glob.glob(glob.escape(base) + "*"))[:limit]:
        found.append(fragment + path[len(base) :] + ("/" if os.path.isdir(path) else ""))
    return found
