"""The server's log, as one connection keeps it: the newest records in a ring bounded by count
and by size (each record's data already clipped by the core), and those no waiting cell showed.

The core routes each `notifications/message` to the waiting cell (`api.calls.core`) and then
hands the record here (`keep`), on the session thread; readers (`conn.logs`, the log panels)
take copies. `unrouted` is a subsequence of `logs`: a record dropped from the ring leaves both.
"""

from __future__ import annotations

from collections import deque

from ...base.sizes import Ring
from ..calls.core import Featured
from ..calls.progress import LogRecord

LOG_HISTORY = 1000
LOG_BYTES = 16 * 1024 * 1024  # about the most the kept log messages hold
RECORD_COST = 300  # what a kept log record costs besides its data


class KeptLog:
    """The log records one connection keeps (see the module docstring)."""

    def __init__(self) -> None:
        self._ring: Ring[LogRecord] = Ring(LOG_HISTORY, LOG_BYTES, on_drop=self._dropped)
        self.logs = self._ring.items  # oldest first
        self.unrouted: deque[LogRecord] = deque()  # those no cell showed

    def keep(self, record: LogRecord, size: int, shown: bool) -> None:
        """Session thread: keep `record` (its data `size` long); `shown`: a waiting cell showed it."""
        if not shown:
            self.unrouted.append(record)
        self._ring.add(record, RECORD_COST + size)

    def _dropped(self, record: LogRecord) -> None:
        if self.unrouted and self.unrouted[0] is record:
            self.unrouted.popleft()


def of(conn: Featured) -> KeptLog:
    """The server log `conn` keeps (the live store: copy before iterating off the session thread)."""
    return conn._core.get(KeptLog)
