"""A waiting call's deadline: an idle timeout that progress resets, under a maximum total that
always holds; the time left is the nearer of the two, None with neither."""

from __future__ import annotations

import pytest

from mcp_notebook.base.timeouts import Deadline


def test_with_neither_limit_there_is_no_time_left_to_count():
    assert Deadline(None).remaining() is None


def test_the_time_left_is_the_nearer_of_the_idle_timeout_and_the_maximum_total():
    deadline = Deadline(10.0, 25.0)
    start = deadline.started
    assert deadline.remaining(start + 4) == pytest.approx(6.0)  # idle first
    deadline.touched = start + 12  # progress at 12 s: idle again until 22 s
    assert deadline.remaining(start + 20) == pytest.approx(2.0)
    deadline.touched = start + 20
    assert deadline.remaining(start + 21) == pytest.approx(4.0)  # the total (25 s) is now the nearer


def test_each_limit_alone_counts_from_its_own_start():
    idle = Deadline(5.0)
    idle.touched = idle.started + 3
    assert idle.remaining(idle.started + 7) == pytest.approx(1.0)
    total = Deadline(None, 5.0)
    total.touched = total.started + 3  # progress never extends a maximum total
    assert total.remaining(total.started + 7) == pytest.approx(-2.0)


def test_progress_resets_the_idle_timeout_only_when_the_call_asked_for_it():
    resetting, fixed = Deadline(5.0), Deadline(5.0, reset_on_progress=False)
    for deadline in (resetting, fixed):
        deadline.touched = deadline.started - 100  # long ago
        deadline.touch()
    assert resetting.touched > resetting.started
    assert fixed.touched == fixed.started - 100
