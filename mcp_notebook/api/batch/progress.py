"""A batch's one progress display: what it shows (`BatchStats`: done, failed, calls/s, ETA) and
what displays it must do (`BatchDisplay`; the terminal's is `api.display.batch_line`).

Which display a batch gets is the front end's to say (`FrontEnd.batch_progress`: a widget in a
kernel, this line in terminal IPython, none in a script unless asked); the caller's thread
updates it at most UPDATES_PER_SECOND times a second while it waits, and closes it with the
batch's summary line, so a cell holds one output, never one per row.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ...base.text import one_line

UPDATES_PER_SECOND = 4.0


@dataclass(frozen=True, slots=True)
class BatchStats:
    """Where a batch stands: rows `done` of `total` (failed ones included), `failed`, `in_flight`, `seconds` since it started."""

    tool: str
    total: int
    done: int
    failed: int
    in_flight: int
    seconds: float

    @property
    def rate(self) -> float | None:
        """Rows finished per second so far."""
        return self.done / self.seconds if self.done and self.seconds > 0 else None

    @property
    def eta(self) -> float | None:
        """Seconds until the last row finishes, at the rate so far."""
        rate = self.rate
        return (self.total - self.done) / rate if rate else None

    @property
    def fraction(self) -> float:
        return self.done / self.total if self.total else 1.0

    def line(self) -> str:
        """`map echo: 40/100 done, 2 failed, 31.2 calls/s, ETA 2 s`."""
        parts = [f"{self.done:,}/{self.total:,} done"]
        if self.failed:
            parts.append(f"{self.failed:,} failed")
        rate, eta = self.rate, self.eta
        if rate is not None:
            parts.append(f"{rate:.1f} calls/s")
        if eta is not None and self.done < self.total:
            parts.append(f"ETA {_duration(eta)}")
        return f"map {one_line(self.tool)}: {', '.join(parts)}"


class BatchDisplay(Protocol):
    """What shows a batch under way: updated as it goes, closed with its summary line."""

    def update(self, stats: BatchStats) -> None: ...

    def close(self, summary: str, failed: bool) -> None: ...


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds // 60:.0f} min {seconds % 60:.0f} s"
    return f"{seconds // 3600:.0f} h {seconds % 3600 // 60:.0f} min"
