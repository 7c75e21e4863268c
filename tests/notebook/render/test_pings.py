"""`PingTimes`, what `%mcp ping` returns: a list of floats whose display is the run: its lines, then the summary."""

from __future__ import annotations

import copy
import statistics

from IPython.lib.pretty import pretty

from mcp_notebook.notebook.render.pings import PingTimes


def test_the_times_are_a_list_and_show_as_the_summary():
    rtts = PingTimes([0.002, 0.001, 0.003], name="sdk", sent=4, word="liveness probe")
    assert rtts == [0.002, 0.001, 0.003] and rtts[1] == 0.001 and statistics.median(rtts) == 0.002
    assert repr(rtts) == "[0.002, 0.001, 0.003]"  # repr() stays the list's
    said = "--- sdk: 4 liveness probes, 3 answered, 1 lost; min/median/max = 1.000/2.000/3.000 ms"
    assert pretty(rtts) == said and pretty(copy.copy(rtts)) == said


def test_one_ping_shows_as_its_line_and_none_answered_as_the_count():
    assert pretty(PingTimes([0.0015], name="sdk", sent=1)) == "ping sdk: 1.500 ms"
    assert pretty(PingTimes([], name="sdk", sent=1)) == "--- sdk: 1 ping, 0 answered, 1 lost"
    assert pretty(PingTimes([], name="sdk", sent=2)) == "--- sdk: 2 pings, 0 answered, 2 lost"


def test_a_run_shows_its_lines_then_the_summary():
    rtts = PingTimes([0.001, 0.002], name="sdk", sent=3)
    rtts.lines += ["ping sdk: 1.000 ms", "ping sdk: timed out", "ping sdk: 2.000 ms"]
    assert pretty(rtts).splitlines() == [
        *rtts.lines,
        "--- sdk: 3 pings, 2 answered, 1 lost; min/median/max = 1.000/1.500/2.000 ms",
    ]
