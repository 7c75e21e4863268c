"""Counts in prose: one of something is singular, any other count plural."""

from __future__ import annotations

from mcp_notebook.base.plural import counted


def test_one_is_singular_and_every_other_count_plural():
    assert [counted(n, "pong") for n in (0, 1, 2)] == ["0 pongs", "1 pong", "2 pongs"]


def test_an_irregular_plural_is_given_and_large_counts_are_grouped():
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(12_345, "entry", "entries") == "12,345 entries"
