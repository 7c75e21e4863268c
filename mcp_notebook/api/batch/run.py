"""A batch's calls in flight on the runtime's loop: at most `concurrency` at once, started in row
order, each row's outcome kept where the waiting caller reads it.

The rules kept here:
- One row's failure never stops another: a tool error (`isError`), a JSON-RPC error, arguments the
  schema refuses, a timeout or a transport failure each end that row as failed with a one-line error.
- Only a request that timed out or whose transport failed is tried again, and only as often as
  `retries` says, after an exponential backoff with jitter that never drops below `backoff` (itself
  at least MIN_BACKOFF); a server's JSON-RPC error is its answer, never retried, and neither is
  anything on a closed connection.
- A closed connection ends the rows still to come as failed at once (each call on it fails
  fast), so a batch on a dead server finishes; it never waits on it.
- `stop()` cancels the calls in flight (each tells the server, as a cancelled call does) and
  starts no more: the rows not finished are cancelled, the finished ones stay.
Each call shows nothing of its own (`Quiet`): the batch has one display, the caller's.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Any

import anyio

from ...base.errors import AuthorizationError, ConnectionClosed, RequestTimeout, TransportError
from ...base.text import clip, one_line
from ..calls.core import Featured
from ..calls.exchange import adrive
from ..display import frontend
from ..results.objects import ToolResult
from ..tools.methods import call_tool
from ..tools.validate import ToolArgumentError
from .progress import BatchStats
from .result import BatchResult, Outcome
from .rows import Rows

MIN_BACKOFF = 0.05  # seconds: the floor of every wait before a retry
MAX_BACKOFF = 30.0  # seconds: the ceiling of one wait, however many retries
ERROR_CLIP = 500  # characters of one row's error kept


@dataclass(frozen=True, slots=True)
class Plan:
    """What the caller asked: the tool, its rows, and how to call it over them."""

    tool: str
    rows: Rows
    concurrency: int
    timeout: float | None
    retries: int
    backoff: float
    validate: bool


class Quiet(frontend.Presenter):
    """A batch call's own display: none. Its log lines stay in the connection's log store, and a
    question from the server is declined (nobody watches one row of many)."""

    def __init__(self, label: str, progress: Any, connection: str) -> None:
        super().__init__(label, False, connection)

    def log(self, record: Any) -> None:
        pass

    def more_logs(self, count: int, final: bool) -> None:
        pass


class Batch:
    """One batch's state: written on the runtime's loop, read by the caller's thread."""

    def __init__(self, conn: Featured, plan: Plan) -> None:
        self.conn = conn
        self.plan = plan
        self.outcomes: list[Outcome | None] = [None] * len(plan.rows.arguments)
        self.done = self.failed = self.in_flight = 0
        self.started: float | None = None
        self.ended: float | None = None
        self._next = 0
        self._stopped = False
        self._scope: anyio.CancelScope | None = None

    # ----- the loop's side -----

    async def run(self) -> None:
        """Every row, `concurrency` at a time, until done or stopped."""
        self.started = time.perf_counter()
        try:
            async with anyio.create_task_group() as group:
                self._scope = group.cancel_scope
                if self._stopped:
                    group.cancel_scope.cancel()
                for _ in range(min(self.plan.concurrency, len(self.outcomes))):
                    group.start_soon(self._worker)
        finally:
            self.ended = time.perf_counter()

    def stop(self) -> None:
        """Loop thread: cancel the calls in flight and start no more."""
        self._stopped = True
        if self._scope is not None:
            self._scope.cancel()

    async def _worker(self) -> None:
        while self._next < len(self.outcomes):
            row = self._next
            self._next += 1
            self.in_flight += 1
            try:
                outcome = await self._row(row)
            finally:
                self.in_flight -= 1
            self.outcomes[row] = outcome
            self.done += 1
            self.failed += outcome.status == "failed"

    async def _row(self, row: int) -> Outcome:
        plan, label = self.plan, self.plan.rows.labels[row]
        attempts = 0
        while True:
            attempts += 1
            started = time.perf_counter()
            try:
                result = await self._call(row)
            except ToolArgumentError as exc:  # refused before it was sent: no attempt, no latency
                return Outcome(label, "failed", None, _error(exc), None, attempts - 1)
            except (RequestTimeout, TransportError) as exc:
                latency = time.perf_counter() - started
                if attempts > plan.retries or isinstance(exc, AuthorizationError) or self.conn._core.session.closed:
                    return Outcome(label, "failed", None, _error(exc), latency, attempts)
                await anyio.sleep(backoff(plan.backoff, attempts))
                continue
            except Exception as exc:  # noqa: BLE001 - any failure is this row's; the others go on
                return Outcome(label, "failed", None, _error(exc), time.perf_counter() - started, attempts)
            latency = time.perf_counter() - started
            if result.is_error:
                said = clip(one_line(result.text), ERROR_CLIP) or "the tool reported an error (isError) with no text"
                return Outcome(label, "failed", result, said, latency, attempts)
            return Outcome(label, "ok", result, None, latency, attempts)

    async def _call(self, row: int) -> ToolResult:
        plan, conn = self.plan, self.conn
        steps = call_tool(conn, plan.tool, plan.rows.arguments[row], timeout=plan.timeout, progress=False, validate=plan.validate)
        return await adrive(conn._core, steps, Quiet)

    # ----- the caller's side -----

    def stats(self) -> BatchStats:
        seconds = 0.0 if self.started is None else (self.ended or time.perf_counter()) - self.started
        return BatchStats(self.plan.tool, len(self.outcomes), self.done, self.failed, self.in_flight, seconds)

    def result(self) -> BatchResult:
        """The outcomes in row order; a row with none (stopped first) is cancelled."""
        labels = self.plan.rows.labels
        outcomes = [o or Outcome(labels[i], "cancelled", error="cancelled") for i, o in enumerate(self.outcomes)]
        return BatchResult(self.plan.tool, outcomes, self.stats().seconds, self.plan.rows.index_name)


def backoff(floor: float, attempt: int) -> float:
    """Seconds to wait before retry `attempt` (1, 2, ...): `floor` doubled each time, up to
    MAX_BACKOFF, with up to as much again of jitter; never less than `floor`."""
    step = min(MAX_BACKOFF, floor * 2.0 ** (attempt - 1))
    return min(MAX_BACKOFF, step + random.uniform(0, step))


def _error(exc: BaseException) -> str:
    text = one_line(str(exc)) or type(exc).__name__
    kind = "" if isinstance(exc, (ConnectionClosed, RequestTimeout)) else f"{type(exc).__name__}: "
    return clip(kind + text, ERROR_CLIP)
