"""`PingTimes`: what `%mcp ping` returns, the round-trip times (s) as a list that displays as
the run's summary.

The rule kept: what the magic shows is said once. The list is the value (`rtts = %mcp ping
...`, `rtts[0]`, `statistics.mean(rtts)` work on it as on any list of floats); as a cell's
value it shows the run (a line a round trip, a failure's line, then the summary), not the
floats, so a bare `%mcp ping NAME -n 3` has one output. The word for one round trip is the era's (`conn.rules.probe`: a ping, or a
liveness probe where the ping method is gone), in the lines and the summary alike.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from typing import Any

from ...base.plural import counted
from ...base.text import one_line


class PingTimes(list[float]):
    """The answered round trips' times in seconds; `name`, `sent` and `word` say of what."""

    def __init__(self, rtts: Iterable[float] = (), *, name: str = "", sent: int = 0, word: str = "ping") -> None:
        super().__init__(rtts)
        self.name = name
        self.sent = sent
        self.word = word
        self.lines: list[str] = []  # what the run said, a line a round trip or failure, in order

    @property
    def lost(self) -> int:
        return max(0, self.sent - len(self))

    def summary(self) -> str:
        """One answered round trip: its line; otherwise the count, how many came back, min/median/max."""
        if self.sent == 1 and len(self) == 1:
            return line(self.word, self.name, self[0])
        head = f"--- {one_line(self.name)}: {counted(self.sent, self.word)}, {len(self)} answered, {self.lost} lost"
        if not self:
            return head
        ms = [r * 1000 for r in self]
        return f"{head}; min/median/max = {min(ms):.3f}/{statistics.median(ms):.3f}/{max(ms):.3f} ms"

    def report(self) -> str:
        """The run as the magic shows it: its lines, then the summary (one answered ping: its line)."""
        if self.sent == 1 and len(self) == 1 and len(self.lines) <= 1:
            return self.summary()
        return "\n".join([*self.lines, self.summary()])

    def _repr_pretty_(self, p: Any, cycle: bool) -> None:
        p.text(self.report())


def line(word: str, name: str, rtt: float) -> str:
    """One answered round trip, as `%mcp ping` prints it while the run goes on."""
    return f"{word} {one_line(name)}: {rtt * 1000:.3f} ms"
