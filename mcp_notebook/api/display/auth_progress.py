"""`AuthProgress`: the OAuth steps of one connection as they happen, for a front end to show.

The flow's events pass through it to the connection's trace (which redacts every secret);
a front end reads the steps so far (`steps()`) and listens for the next ones while it shows
an authorization (a widget's step list). The four phases a person follows are named in
`PHASES`; each phase's last note is what a front end shows, never a token or code (the
trace already redacted them).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import anyio.from_thread

from ...session.trace import Trace, TraceEntry

PHASES = ("discovery", "registration", "authorization", "token")
PHASE_OF = {
    "discovery": "discovery",
    "resource metadata": "discovery",
    "server metadata": "discovery",
    "client": "registration",
    "registration": "registration",
    "authorization": "authorization",
    "token": "token",
    "refresh": "token",
}

Listener = Callable[[str, str, str], None]  # phase, note, "done" | "working" | "failed"


class AuthProgress:
    """Passes a connection's OAuth events to its trace and tells listeners of each phase's steps."""

    def __init__(self, trace: Trace) -> None:
        self.trace = trace
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def event(self, name: str, note: str | None = None, **detail: Any) -> TraceEntry:
        entry = self.trace.event(name, note, **detail)
        phase = PHASE_OF.get(str(entry.detail.get("step", "")))
        if phase is not None:
            with self._lock:
                listeners = list(self._listeners)
            said, failed = describe(entry)
            state = "failed" if failed else ("done" if entry.kind == "auth" else "working")
            for listener in listeners:
                listener(phase, said, state)
        return entry

    def steps(self) -> dict[str, tuple[str, bool]]:
        """Each phase's latest step in the trace's OAuth events so far: (note, failed)."""
        latest: dict[str, tuple[str, bool]] = {}
        for entry in self.trace.entries():
            phase = PHASE_OF.get(str(entry.detail.get("step", ""))) if entry.kind in ("auth", "auth-http") else None
            if phase is not None:
                latest[phase] = describe(entry)
        return latest

    def listen(self, listener: Listener) -> Callable[[], None]:
        """Call `listener` at each later step (from the session's thread); the way to stop it."""
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop


def describe(entry: TraceEntry) -> tuple[str, bool]:
    """What one OAuth event says to a person, and whether it is a failure."""
    detail = entry.detail
    if entry.kind == "auth-http":
        status = detail.get("status")
        failed = not isinstance(status, int) or status >= 400
        return f"{detail.get('method', '')} {detail.get('url', '')} -> {status or entry.note or 'failed'}", failed
    return entry.note or "", False


def abandoned() -> bool:
    """In the worker thread of an authorization: whether the flow that asked was cancelled
    (the request given up, the connection closed); False outside such a thread."""
    try:
        anyio.from_thread.check_cancelled()
    except RuntimeError:  # not a worker thread of an event loop
        return False
    except BaseException:  # noqa: BLE001 - the event loop's own cancellation exception
        return True
    return False
