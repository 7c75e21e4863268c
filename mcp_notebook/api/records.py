"""A connection's server log and resource subscriptions as two objects: `conn.logs` and
`conn.subscriptions`, each with its records (plain data, now) and its live panel.

The rule kept here: one name on `Connection` per concept. The data and the text are
`display.panels`'s, the panels the front end's (`display.frontend`); these objects only
gather them under the connection's two names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..base.public import public
from .calls.progress import LogRecord
from .client_side import logs as server_log
from .display import frontend, panels
from .resources import methods as resources

if TYPE_CHECKING:
    from .calls.core import Featured


@public
class ServerLog(list[LogRecord]):
    """The server's log messages (`notifications/message`) as they were when read, oldest first
    (the last 1000 kept): a list of `LogRecord`s, with the connection's filtered records and panel."""

    def __init__(self, connection: Featured) -> None:
        super().__init__(server_log.of(connection).logs)
        self._connection = connection

    def records(self, *, last: int | None = None, level: str | None = None, unrouted_only: bool = False) -> list[dict[str, Any]]:
        """The server's log messages, oldest first, read now, as dicts: time, wall, level, logger,
        data, and in_cell (True when the cell whose call was waiting showed it). `level` is the
        least severe level kept; `unrouted_only=True` keeps only those no cell showed."""
        return panels.log_records(self._connection, last=last, level=level, unrouted_only=unrouted_only)

    def panel(self, *, level: str | None = None, unrouted_only: bool = False, rows: int = panels.LOG_ROWS) -> Any:
        """A live view of the server's log messages, newest at the bottom (the last `rows`).

        It shows every message the server sent, not only those no cell was waiting for: the
        ones already shown in the waiting cell are greyed and marked "↳ cell", so this is the
        connection's whole server log in order. `unrouted_only=True` hides those; `level` is
        the least severe level shown. Outside Jupyter its repr is a text table.
        """
        level = panels.check_level(level)
        return frontend.current().log_panel(self._connection, level=level, unrouted_only=unrouted_only, rows=rows)


@public
class Subscriptions:
    """The connection's resource subscriptions: their records, update counts and live panel."""

    def __init__(self, connection: Featured) -> None:
        self._connection = connection

    def records(self) -> list[dict[str, Any]]:
        """Each subscribed resource (then any updated without a subscription): uri, subscribed,
        updates (how many `notifications/resources/updated` arrived), last_update (wall time)."""
        return panels.subscription_records(self._connection)

    def updates(self, uri: str | None = None) -> int:
        """How many `notifications/resources/updated` arrived (for `uri`, or in all)."""
        return resources.resource_updates(self._connection, uri)

    def panel(self, uri: str | None = None, *, read: bool = False) -> Any:
        """A live view of the connection's subscriptions (or of `uri` only): state, update count
        and last update time. `read=True` re-reads each resource after each update (in the
        background, never blocking the session) and shows its latest content.

        A one-resource panel stops when the resource is unsubscribed, and says so.
        """
        return frontend.current().subscriptions_panel(self._connection, uri, read=read)

    def __repr__(self) -> str:
        return panels.subscriptions_snapshot(self._connection)[0]
