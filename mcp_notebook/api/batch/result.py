"""What a batch (`conn.map`) returns: `BatchResult`, one `Outcome` per row, in row order.

An outcome is "ok" (the tool answered without `isError`), "failed" (a tool error, a JSON-RPC
error, a request that timed out or whose transport failed after its retries, arguments the
input schema refuses, a closed connection: `error` says which, on one line) or "cancelled" (the
batch was stopped before the row finished). The summary (counts, calls/s, latency percentiles
and the first few errors) is drawn from server text made inert: escaped in HTML, stripped of
control sequences in text.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from ...base.plural import counted
from ...base.public import public
from ...base.text import clip, esc, one_line
from ..results.objects import ToolResult

ERRORS_SHOWN = 3  # the first errors a summary quotes
ERROR_CLIP = 200  # characters of one error a summary shows


@dataclass(frozen=True, slots=True)
class Outcome:
    """One row's call: `status` ("ok", "failed" or "cancelled"), the `result` (a ToolResult, also
    for a tool error), the one-line `error`, the `latency` of its last attempt in seconds (None
    when none was sent) and how many `attempts` went out."""

    index: Hashable
    status: str
    result: ToolResult | None = None
    error: str | None = None
    latency: float | None = None
    attempts: int = 0

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@public
class BatchResult(Sequence[Outcome]):
    """The outcomes of `conn.map`, in row order: `.ok`, `.failed` and `.cancelled` views,
    `.results` (each row's ToolResult or None), `.to_pandas()`, and a summary when shown."""

    def __init__(self, tool: str, outcomes: list[Outcome], seconds: float, index_name: Hashable = None) -> None:
        self.tool = tool
        self.outcomes = outcomes
        self.seconds = seconds  # from the first request to the last outcome
        self.index_name = index_name

    @overload
    def __getitem__(self, item: int) -> Outcome: ...
    @overload
    def __getitem__(self, item: slice) -> list[Outcome]: ...
    def __getitem__(self, item: int | slice) -> Outcome | list[Outcome]:
        return self.outcomes[item]

    def __len__(self) -> int:
        return len(self.outcomes)

    def __iter__(self) -> Iterator[Outcome]:
        return iter(self.outcomes)

    @property
    def ok(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "ok"]

    @property
    def failed(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    @property
    def cancelled(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.status == "cancelled"]

    @property
    def results(self) -> list[ToolResult | None]:
        return [o.result for o in self.outcomes]

    @property
    def calls_per_second(self) -> float | None:
        finished = sum(o.status != "cancelled" for o in self.outcomes)
        return finished / self.seconds if finished and self.seconds > 0 else None

    def latency(self, quantile: float) -> float | None:
        """The latency (seconds) at `quantile` (0.5: the median) of the rows that succeeded (a timed-out
        call's latency is its timeout, not the server's)."""
        times = sorted(o.latency for o in self.outcomes if o.latency is not None and o.status == "ok")
        if not times:
            return None
        return times[min(len(times) - 1, int(quantile * len(times)))]

    def to_pandas(self) -> Any:
        """One row per input row, under its label: `ok`, `result` (the value: the tool's
        structuredContent, else its text; the `ToolResult` itself is `self[i].result`), `error`,
        `latency` (seconds), `attempts` and `status`."""
        import pandas as pd

        columns = ("ok", "result", "error", "latency", "attempts", "status")
        data = {name: [getattr(o, name) for o in self.outcomes] for name in columns}
        data["result"] = [_value(o.result) for o in self.outcomes]
        index = pd.Index([o.index for o in self.outcomes], name=self.index_name)
        return pd.DataFrame(data, index=index, columns=list(columns))

    # ----- shown -----

    def headline(self) -> str:
        """`map echo: 100 rows in 2.1 s, 98 ok, 2 failed; 47.6 calls/s, p50 20 ms, p95 41 ms`."""
        counts = [f"{len(self.ok):,} ok"] + [
            f"{n:,} {word}" for word, n in (("failed", len(self.failed)), ("cancelled", len(self.cancelled))) if n
        ]
        head = f"map {one_line(self.tool)}: {counted(len(self), 'row')} in {self.seconds:.1f} s, {', '.join(counts)}"
        rate, p50, p95 = self.calls_per_second, self.latency(0.5), self.latency(0.95)
        figures = ([f"{rate:.1f} calls/s"] if rate else []) + [
            f"{name} {_ms(value)}" for name, value in (("p50", p50), ("p95", p95)) if value is not None
        ]
        return head + (f"; {', '.join(figures)}" if figures else "")

    def first_errors(self, count: int = ERRORS_SHOWN) -> list[tuple[Hashable, str]]:
        return [(o.index, clip(one_line(o.error), ERROR_CLIP)) for o in self.failed[:count]]

    def _text(self) -> str:
        lines = [self.headline()]
        lines += [f"  row {one_line(index)}: {error}" for index, error in self.first_errors()]
        if len(self.failed) > ERRORS_SHOWN:
            lines.append(f"  … and {counted(len(self.failed) - ERRORS_SHOWN, 'more error')} (.failed lists them)")
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        items = "".join(f"<li>row {esc(index)}: <code>{esc(error)}</code></li>" for index, error in self.first_errors())
        more = len(self.failed) - ERRORS_SHOWN
        if more > 0:
            items += f"<li>… and {esc(counted(more, 'more error'))} (<code>.failed</code> lists them)</li>"
        return f'<div class="mcp-batch"><b>{esc(self.headline())}</b>' + (f"<ul>{items}</ul>" if items else "") + "</div>"

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self._text())

    def __repr__(self) -> str:
        return f"<BatchResult {self.headline()}>"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms" if seconds < 10 else f"{seconds:.1f} s"


def _value(result: ToolResult | None) -> Any:
    """What a table cell holds of a tool's result: its structuredContent, else its text."""
    if result is None:
        return None
    return result.structured if result.structured is not None else result.text
