"""`LoadReport`: what a load test found, from its call records and its sessions' health; and the
live text and HTML of a load under way (the same tables, on the records so far).

The rule kept here: every number is read from the records (`records.rows`, `errors_by_code`)
and the health counters, never kept beside them; server text (error messages, tool names) is
escaped in HTML and shown as plain one-line text, whatever the records say (a `Call` made
elsewhere, a worker's, may carry a server's raw text).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..base.plural import counted
from ..base.public import public
from ..base.text import esc, one_line, table_text
from .records import Call, Health, Row, errors_by_code, rows, span

COLUMNS = ("session", "method", "tool", "start", "latency", "ok", "error")
SUMMARY = ("method", "tool", "calls", "errors", "calls/s", "p50 ms", "p95 ms", "p99 ms")


@public
@dataclass
class LoadReport:
    """A load test's result: `.calls` (one record per call), `.to_pandas()`, `.summary()`,
    `.compare(before)`; `elapsed` seconds, `sessions`, the sessions' `health` (server pings
    answered, violations, reconnects, failed sessions), `stopped` (why it ended early, or None)."""

    target: str
    workload: str
    calls: list[Call]
    elapsed: float
    sessions: int
    health: Health = field(default_factory=Health)
    where: str = "kernel"  # or "N Dask workers"
    stopped: str | None = None

    @property
    def rate(self) -> float:
        """Calls per second, from the first call's start to the last one's end."""
        seconds = span(self.calls)
        return len(self.calls) / seconds if seconds > 0 else math.nan

    @property
    def errors(self) -> int:
        return sum(not c.ok for c in self.calls)

    def rows(self) -> list[Row]:
        return rows(self.calls)

    def to_pandas(self) -> Any:
        """One row per call: session, method, tool, start (s since the load began), latency (s), ok, error."""
        import pandas as pd

        records = [{**{name: getattr(c, name) for name in COLUMNS}, "code": c.code} for c in self.calls]
        return pd.DataFrame.from_records(records, columns=[*COLUMNS, "code"])

    def summary(self) -> Any:
        """Per method and tool (and "all"): calls, errors, calls/s, p50/p95/p99 latency in ms."""
        import pandas as pd

        data = [_summary_row(row) for row in self.rows()]
        return pd.DataFrame.from_records(data, columns=list(SUMMARY))

    def compare(self, before: LoadReport) -> Any:
        """This load against an earlier one (`before`), per method and tool, as ratios now/before:
        calls/s, p50, p95, p99 and the error rate (above 1: more of it now)."""
        import pandas as pd

        then = {(r.method, r.tool): r for r in before.rows()}
        data = []
        for now in self.rows():
            old = then.get((now.method, now.tool))
            if old is None:
                continue
            data.append(
                {
                    "method": now.method,
                    "tool": now.tool,
                    "calls/s": _ratio(now.rate, old.rate),
                    "p50": _ratio(now.p50, old.p50),
                    "p95": _ratio(now.p95, old.p95),
                    "p99": _ratio(now.p99, old.p99),
                    "error rate": _ratio(now.errors / max(now.calls, 1), old.errors / max(old.calls, 1)),
                }
            )
        return pd.DataFrame.from_records(data, columns=["method", "tool", "calls/s", "p50", "p95", "p99", "error rate"])

    def text(self) -> str:
        return status_text(self.target, self.calls, self.sessions, self.health, self.where, self.stopped, done=True)

    def html(self) -> str:
        return status_html(self.target, self.calls, self.sessions, self.health, self.where, self.stopped, done=True)

    def __repr__(self) -> str:
        return self.text()

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.text())

    def _repr_html_(self) -> str:
        return self.html()


def _summary_row(row: Row) -> dict[str, Any]:
    return {
        "method": row.method,
        "tool": row.tool,
        "calls": row.calls,
        "errors": row.errors,
        "calls/s": row.rate,
        "p50 ms": row.p50 * 1000,
        "p95 ms": row.p95 * 1000,
        "p99 ms": row.p99 * 1000,
    }


def _ratio(now: float, before: float) -> float:
    if now == before == 0:
        return 1.0  # none then, none now: the same
    return now / before if before and not math.isnan(before) else math.nan


def _ms(seconds: float) -> str:
    return "-" if math.isnan(seconds) else f"{seconds * 1000:.1f}"


def _pong_ms(seconds: float) -> str:
    """A pong's latency in ms: pongs are fast, so two decimals below 1 ms (not "0.0")."""
    return f"{seconds * 1000:.2f}" if seconds < 0.001 else f"{seconds * 1000:.1f}"


def _headline(
    target: str, calls: Sequence[Call], sessions: int, health: Health, where: str, stopped: str | None, done: bool
) -> list[str]:
    seconds = span(calls)
    rate = len(calls) / seconds if seconds > 0 else 0.0
    failed = sum(not c.ok for c in calls)
    state = f"stopped ({stopped})" if stopped else ("done" if done else "running")
    lines = [
        f"load {one_line(target)}: {state}, {counted(len(calls), 'call')} in {seconds:.1f} s ({rate:,.1f} calls/s), "
        f"{counted(failed, 'error')}, {counted(sessions, 'session')} ({where})"
    ]
    pongs = health.pong_latencies
    answered = f"{counted(health.server_pings, 'server ping')} answered"
    if pongs:
        slowest = max(health.pong_max, max(pongs))
        answered += f" (median {_pong_ms(statistics.median(pongs))} ms, max {_pong_ms(slowest)} ms)"
    lines.append(
        f"health: {answered}; {counted(health.violations, 'violation')}; "
        f"{counted(health.reconnects, 'reconnect')}; {counted(health.failed_sessions, 'session')} failed"
    )
    return lines


def status_text(
    target: str,
    calls: Sequence[Call],
    sessions: int,
    health: Health,
    where: str,
    stopped: str | None = None,
    done: bool = False,
) -> str:
    """The load (under way or done) as text: a headline, the table per method and tool, the errors by code."""
    lines = _headline(target, calls, sessions, health, where, stopped, done)
    table = [
        [row.label, f"{row.calls:,}", f"{row.errors:,}", f"{row.rate:,.1f}", _ms(row.p50), _ms(row.p95), _ms(row.p99)]
        for row in rows(calls)
    ]
    if table:
        lines.append(table_text(["call", "calls", "errors", "calls/s", "p50 ms", "p95 ms", "p99 ms"], table))
    for code, count, example in errors_by_code(calls)[:5]:
        lines.append(f"  error {code}: {count:,}, e.g. {one_line(example)}")
    return "\n".join(lines)


LEFT, RIGHT = " style='text-align:left'", " style='text-align:right'"  # names left, numbers right, headers over them


def status_html(
    target: str,
    calls: Sequence[Call],
    sessions: int,
    health: Health,
    where: str,
    stopped: str | None = None,
    done: bool = False,
) -> str:
    """The same as `status_text`, as HTML (server text escaped)."""
    head = "".join(f"<div>{esc(line)}</div>" for line in _headline(target, calls, sessions, health, where, stopped, done))
    cells = "".join(
        f"<tr><td{LEFT}>{esc(one_line(row.label))}</td>"
        + "".join(
            f"<td{RIGHT}>{value}</td>"
            for value in (f"{row.calls:,}", f"{row.errors:,}", f"{row.rate:,.1f}", _ms(row.p50), _ms(row.p95), _ms(row.p99))
        )
        + "</tr>"
        for row in rows(calls)
    )
    header = f"<th{LEFT}>call</th>" + "".join(
        f"<th{RIGHT}>{name}</th>" for name in ("calls", "errors", "calls/s", "p50 ms", "p95 ms", "p99 ms")
    )
    table = f"<table class='mcp-load'><tr>{header}</tr>{cells}</table>" if cells else ""
    errors = "".join(
        f"<li>error {esc(code)}: {count:,}, e.g. {esc(one_line(example))}</li>"
        for code, count, example in errors_by_code(calls)[:5]
    )
    return f"<div class='mcp-load'>{head}{table}{f'<ul>{errors}</ul>' if errors else ''}</div>"
