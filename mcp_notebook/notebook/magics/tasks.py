"""The subcommands of work in flight: `%mcp tasks` (the server's tasks, tasks/list) and `cancel ID`
(one of our in-flight requests, notifications/cancelled).
"""

from __future__ import annotations

from argparse import Namespace

from ...api.results.objects import Listing
from .commands import arg, connection, connection_of, subcommand


@subcommand(
    "tasks", "the server's tasks (tasks/list): id, status, status message, created, last updated", connection(positional=True)
)
def _tasks(ns: Namespace) -> Listing:
    return connection_of(ns).list_tasks()


@subcommand(
    "cancel",
    "cancel one of our in-flight requests (notifications/cancelled)",
    connection(),
    arg("request_id", type=int, help="the request's JSON-RPC id"),
)
def _cancel(ns: Namespace) -> None:
    conn = connection_of(ns)
    print(f"cancelled request {ns.request_id}" if conn.cancel(ns.request_id) else f"no request {ns.request_id} in flight")
