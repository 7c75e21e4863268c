"""`mcp_notebook.load(target, workload, sessions=...)`: a load test of a server, shown live while
the cell blocks, returned as a `LoadReport`.

With neither `cluster=` nor `processes=` the engine runs in this process (`engine.drive`);
with either, the sessions are split over a Dask cluster's workers (`cluster.run_on`). Either
way the records land in one `Tally`, which the front end's live view reads (`Live`), and
Ctrl-C stops the load, closes every session and returns what was recorded so far.

The rule kept here: bad input is one line (`UsageError`) before any session opens; what only a
live server can say (it is dead, it lacks the workload's tool, a cassette is of another server)
is one line from the first session, before any load.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from ..api.connecting.options import option_names
from ..api.display import frontend
from ..base.errors import UsageError
from .engine import Engine, Plan, drive
from .records import Tally
from .report import LoadReport, status_html, status_text
from .workload import as_workload

NOT_CONNECT_OPTIONS = frozenset({"name", "config", "config_file", "consent", "reload"})


class Live:
    """A load under way, as the live view reads it (from the render pump's thread): `key()` changes
    when there is something new to draw, `text()` and `html()` are the tables so far."""

    def __init__(self, target: str, sessions: int, tally: Tally, where: str) -> None:
        self.target, self.sessions, self.tally, self.where = target, sessions, tally, where
        self.began = time.monotonic()
        self.ended: float | None = None
        self.stopped: str | None = None

    @property
    def done(self) -> bool:
        return self.ended is not None

    def elapsed(self) -> float:
        return (self.ended or time.monotonic()) - self.began

    def key(self) -> Any:
        return len(self.tally), self.tally.sessions_open, self.tally.notes, self.done

    def text(self) -> str:
        return status_text(self.target, self.tally.calls(), self._open(), self.tally.health, self.where, self.stopped, self.done)

    def html(self) -> str:
        return status_html(self.target, self.tally.calls(), self._open(), self.tally.health, self.where, self.stopped, self.done)

    def _open(self) -> int:
        return self.sessions if self.done else self.tally.sessions_open


def load(
    target: str | Sequence[str],
    workload: Any,
    *,
    sessions: int = 1,
    duration: float | None = None,
    calls: int | None = None,
    rate: float | None = None,
    ramp: float | None = None,
    cluster: Any = None,
    processes: int | None = None,
    live: bool = True,
    **connect_options: Any,
) -> Any:
    """Load-test the server `target` (a command or a URL, as `connect()` takes) with `sessions`
    sessions at once, each repeating `workload` until `duration` seconds have passed or `calls`
    calls (in all) were made, at `rate` calls/s overall (None: as fast as it answers), the
    sessions opened over `ramp` seconds. Returns a `LoadReport`.

    `workload` is a tool call `{"tool": NAME, "arguments": {...}}` (or a list of them, in turn),
    a cassette's path (its client's requests sent again, fresh ids), or a function `f(conn)`,
    sync or async, called again and again (each call of it one record). Over stdio each session
    is a server process of its own; over HTTP each is a session of the one server (a modern-era
    session: stateless requests). `connect_options` are `connect()`'s (`era`, `headers`,
    `timeout`, ...).

    While it runs, a live view shows calls/s, p50/p95/p99 per method and tool, errors by code,
    the server's pings answered and the violations. Ctrl-C stops it, closes every session and
    returns the report so far. `cluster=` (a `distributed.Client` or a scheduler's address)
    splits the sessions over a Dask cluster's workers; `processes=N` starts a local cluster of
    N worker processes for this load (both need `pip install 'mcp-notebook[scale]'`).
    """
    plan = _plan(sessions, duration, calls, rate, ramp)
    options = _connect_options(connect_options)
    if cluster is not None and processes is not None:
        raise UsageError("load: give cluster= or processes=, not both")
    if processes is not None and (not isinstance(processes, int) or processes < 1):
        raise UsageError(f"load: processes= is a number of worker processes (1 or more), not {processes!r}")
    chosen = as_workload(workload)
    shown = target if isinstance(target, str) else " ".join(map(str, target))
    tally = Tally()
    where = "kernel" if cluster is None and processes is None else "Dask"
    watching = Live(shown, plan.sessions, tally, where)
    view = frontend.current().load_view(watching) if live else None
    try:
        if cluster is None and processes is None:
            engine = Engine(target, chosen, plan, options, tally)
            interrupted = drive(engine)
            watching.stopped = "Ctrl-C" if interrupted is not None else None
        else:
            from .cluster import run_on

            watching.where, watching.stopped = run_on(cluster, processes, target, chosen, plan, options, tally)
    finally:
        watching.ended = time.monotonic()
        if view is not None:
            view.done()
    return LoadReport(
        shown, chosen.label, tally.calls(), watching.elapsed(), plan.sessions, tally.health, watching.where, watching.stopped
    )


def _plan(sessions: int, duration: float | None, calls: int | None, rate: float | None, ramp: float | None) -> Plan:
    if not isinstance(sessions, int) or isinstance(sessions, bool) or sessions < 1:
        raise UsageError(f"load: sessions= is a number of sessions (1 or more), not {sessions!r}")
    if duration is None and calls is None:
        raise UsageError("load: say when to stop: duration= (seconds) or calls= (in all), or both")
    if duration is not None and not duration > 0:
        raise UsageError(f"load: duration= is seconds, more than 0, not {duration!r}")
    if calls is not None and (not isinstance(calls, int) or isinstance(calls, bool) or calls < 1):
        raise UsageError(f"load: calls= is a number of calls in all (1 or more), not {calls!r}")
    if rate is not None and not rate > 0:
        raise UsageError(f"load: rate= is calls per second, more than 0, not {rate!r}")
    if ramp is not None and not ramp >= 0:
        raise UsageError(f"load: ramp= is seconds, 0 or more, not {ramp!r}")
    return Plan(sessions, 0, duration, calls, rate, ramp)


def _connect_options(given: dict[str, Any]) -> dict[str, Any]:
    known = set(option_names()) - NOT_CONNECT_OPTIONS
    unknown = sorted(set(given) - known)
    if unknown:
        raise UsageError(f"load() got an unexpected option {unknown[0]!r} (it takes connect()'s: {', '.join(sorted(known))})")
    return {"apps": False, **given}
