"""Tap records from sessions: what a watcher would have seen of a real session our own client
held (its trace turned into records: out -> CLIENT, in -> SERVER), and a scripted session for
the faults no real peer produces, fed record by record with a clock the test moves.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_notebook.session.trace import Trace
from mcp_notebook.taps.observing.observer import SessionObserver
from mcp_notebook.taps.wire import records as rec


def records_of(trace: Trace, *, transport: str = "stdio") -> list[rec.Record]:
    """The records a watcher between our client and its server would have made: HELLO, every
    frame in its exact text with its timestamps, stderr lines, CLOSED."""
    entries = trace.entries()
    first = entries[0] if entries else None
    made = [rec.Record(1, rec.EVENT, first.wall if first else 0.0, first.monotonic if first else 0.0, name=rec.HELLO,
                       detail={"session": 1, "name": "captured", "transport": transport})]  # fmt: skip
    for entry in entries:
        seq = len(made) + 1
        if entry.is_frame:
            assert entry.raw is not None and entry.size == len(entry.raw.encode()), "a frame the trace clipped"
            side = rec.CLIENT if entry.direction == "out" else rec.SERVER
            made.append(rec.Record(seq, side, entry.wall, entry.monotonic, entry.raw.encode()))
        elif entry.kind == "stderr":
            made.append(rec.Record(seq, rec.STDERR, entry.wall, entry.monotonic, str(entry.detail.get("line", "")).encode()))
    last = entries[-1] if entries else first
    wall, monotonic = (last.wall, last.monotonic) if last else (0.0, 0.0)
    made.append(rec.Record(len(made) + 1, rec.EVENT, wall, monotonic, name=rec.CLOSED))
    return made


class Script:
    """A scripted tapped session: each call feeds one record to `observer`, `after` seconds
    (of the script's own clock, `now`) after the one before."""

    def __init__(self, observer: SessionObserver, start: float = 1000.0) -> None:
        self.observer = observer
        self.now = start
        self.seq = 0

    def _feed(self, side: str, data: bytes = b"", after: float = 0.001, **fields: Any) -> None:
        self.now += after
        self.seq += 1
        self.observer.feed(rec.Record(self.seq, side, 1_700_000_000.0 + self.now, self.now, data, **fields))

    def client(self, message: Any, after: float = 0.001, **fields: Any) -> None:
        self._feed(rec.CLIENT, _bytes(message), after, **fields)

    def server(self, message: Any, after: float = 0.001, **fields: Any) -> None:
        self._feed(rec.SERVER, _bytes(message), after, **fields)

    def stderr(self, line: str) -> None:
        self._feed(rec.STDERR, line.encode())

    def event(self, event: str, after: float = 0.001, **detail: Any) -> None:
        self._feed(rec.EVENT, after=after, name=event, detail=detail)

    def handshake(
        self,
        version: str = "2025-11-25",
        server_capabilities: dict[str, Any] | None = None,
        client_capabilities: dict[str, Any] | None = None,
        server_name: str = "scripted",
    ) -> None:
        """HELLO and a legacy handshake (ids 0: a falsy id is an id)."""
        self.event(rec.HELLO, session=1, name="scripted", transport=self.observer.transport)
        params = {
            "protocolVersion": version,
            "capabilities": client_capabilities if client_capabilities is not None else {"roots": {}},
            "clientInfo": {"name": "scripted-client", "version": "1.0"},
        }
        self.client({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        result = {
            "protocolVersion": version,
            "capabilities": server_capabilities if server_capabilities is not None else {"tools": {}},
            "serverInfo": {"name": server_name, "version": "2.0"},
        }
        self.server({"jsonrpc": "2.0", "id": 0, "result": result})
        self.client({"jsonrpc": "2.0", "method": "notifications/initialized"})


def _bytes(message: Any) -> bytes:
    return message if isinstance(message, bytes) else json.dumps(message, separators=(",", ":")).encode()
