"""`conn.map` and its awaitable twin `conn.aio.map`: a tool called once per row, the calls on the
runtime's loop (`run.Batch`), the caller waiting with the batch's one display (`progress`).

Both faces check what they were given in the caller's thread (the rows, the options, that the
tool exists: one clear line for each, before any call), then wait for the batch while updating
its display. Ctrl-C in the blocking face (a KeyboardInterrupt in the cell) cancels the calls in
flight and RETURNS what finished, the rest marked cancelled; cancelling the awaitable face's
task cancels them too and propagates, as a cancelled await must.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from concurrent.futures import wait as wait_for
from typing import Any

from ...base.errors import UsageError
from ...base.timeouts import check_timeout
from ...runtime import CANCEL_GRACE, get_runtime
from ..calls.core import Featured
from ..calls.exchange import adrive, drive
from ..display import frontend
from ..tools.methods import tool as tool_steps
from .progress import UPDATES_PER_SECOND, BatchDisplay
from .result import BatchResult
from .rows import rows_of
from .run import MAX_BACKOFF, MIN_BACKOFF, Batch, Plan

MAX_CONCURRENCY = 1024
TICK = 0.05  # seconds between the caller's looks at the batch


def map(
    self: Featured,
    tool: str,
    rows: Any,
    /,
    *,
    arguments: Callable[[Any], Mapping[str, Any]] | None = None,
    concurrency: int = 16,
    timeout: float | None = None,
    retries: int = 0,
    backoff: float = 0.5,
    validate: bool = True,
    progress: bool | None = None,
) -> BatchResult:
    """Call `tool` once per row of `rows` (dicts of arguments, or a pandas DataFrame: column name ->
    argument, an empty cell left out), `concurrency` calls in flight, started in row order; returns a
    `BatchResult` in row order (`.ok`, `.failed`, `.to_pandas()`).

    `arguments(row) -> dict` makes each row's arguments. A failing row never stops the others: a
    tool error (`isError`) or a JSON-RPC error fails that row with its message. A request that timed
    out (`timeout`: each call's, the connection's by default) or whose transport failed is tried
    again up to `retries` times, waiting `backoff` seconds doubled each time, with jitter. One
    progress display (done, failed, calls/s, ETA): a widget in a notebook, a line in terminal
    IPython, none in a script (`progress=True` asks for the line, False for none). Ctrl-C cancels the
    calls in flight and returns what finished, the rest marked cancelled.
    """
    batch = _prepared(self, tool, rows, arguments, concurrency, timeout, retries, backoff, validate)
    drive(self._core, tool_steps(self, tool))  # an unknown tool is one clear line, not a failure per row
    runtime = get_runtime()
    display = _display(progress)
    future: Future[None] = runtime.spawn(batch.run)
    try:
        shown = 0.0
        while not wait_for([future], TICK).done:
            shown = _update(display, batch, shown)
    except KeyboardInterrupt:
        runtime.call_soon(batch.stop)
        try:
            wait_for([future], CANCEL_GRACE)
        except KeyboardInterrupt:  # pressed again: leave with what there is
            pass
    return _finished(batch, display, future)


async def amap(
    self: Featured,
    tool: str,
    rows: Any,
    /,
    *,
    arguments: Callable[[Any], Mapping[str, Any]] | None = None,
    concurrency: int = 16,
    timeout: float | None = None,
    retries: int = 0,
    backoff: float = 0.5,
    validate: bool = True,
    progress: bool | None = None,
) -> BatchResult:
    """Call `tool` once per row of `rows`, `concurrency` calls in flight; the `BatchResult` in row
    order (see `Connection.map`). Cancelling the await cancels the calls in flight."""
    batch = _prepared(self, tool, rows, arguments, concurrency, timeout, retries, backoff, validate)
    await adrive(self._core, tool_steps(self, tool))
    runtime = get_runtime()
    display = _display(progress)
    waiter = asyncio.wrap_future(runtime.spawn(batch.run))
    try:
        shown = 0.0
        while not (await asyncio.wait([waiter], timeout=TICK))[0]:
            shown = _update(display, batch, shown)
    except (asyncio.CancelledError, KeyboardInterrupt) as stopped:
        runtime.call_soon(batch.stop)
        await asyncio.wait([waiter], timeout=CANCEL_GRACE)
        if isinstance(stopped, asyncio.CancelledError):
            _finished(batch, display, waiter)
            raise
    return _finished(batch, display, waiter)


def _prepared(
    conn: Featured,
    tool: str,
    rows: Any,
    arguments: Callable[[Any], Mapping[str, Any]] | None,
    concurrency: int,
    timeout: float | None,
    retries: int,
    backoff: float,
    validate: bool,
) -> Batch:
    """The batch, its options checked and its rows made (in the caller's thread)."""
    if not isinstance(tool, str) or not tool:
        raise UsageError(f"map: the tool is named by a string, not {tool!r}")
    if isinstance(concurrency, bool) or not isinstance(concurrency, int) or not 1 <= concurrency <= MAX_CONCURRENCY:
        raise UsageError(f"map: concurrency must be a whole number from 1 to {MAX_CONCURRENCY}; got {concurrency!r}")
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise UsageError(f"map: retries must be a whole number >= 0; got {retries!r}")
    if isinstance(backoff, bool) or not isinstance(backoff, (int, float)) or not MIN_BACKOFF <= backoff <= MAX_BACKOFF:
        raise UsageError(f"map: backoff must be {MIN_BACKOFF:g} to {MAX_BACKOFF:g} seconds; got {backoff!r}")
    if arguments is not None and not callable(arguments):
        raise UsageError(f"map: arguments must be a function of a row returning a dict, not {type(arguments).__name__}")
    check_timeout(timeout)
    plan = Plan(tool, rows_of(rows, arguments), concurrency, timeout, retries, float(backoff), validate)
    return Batch(conn, plan)


def _display(progress: bool | None) -> BatchDisplay | None:
    return None if progress is False else frontend.current().batch_progress(progress)


def _update(display: BatchDisplay | None, batch: Batch, shown: float) -> float:
    """The display brought up to date, at most UPDATES_PER_SECOND times a second; when it was."""
    now = time.monotonic()
    if display is None or now - shown < 1 / UPDATES_PER_SECOND:
        return shown
    display.update(batch.stats())
    return now


def _finished(batch: Batch, display: BatchDisplay | None, run: Future[None] | asyncio.Future[None]) -> BatchResult:
    """The batch's result, its display closed with the summary; a fault of the run itself (ours,
    not a row's) is raised, never passed off as cancelled rows."""
    result = batch.result()
    if display is not None:
        display.close(result.headline(), failed=bool(result.failed or result.cancelled))
    failure = run.exception() if run.done() and not run.cancelled() else None
    if failure is not None:
        raise failure
    return result
