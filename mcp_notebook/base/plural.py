"""Counts in prose: "1 pong", "2 pongs", "1 entry", "3 entries".

Every count a person reads in a sentence or a status line goes through `counted`, so that
one of something is never "1 pings" and none is "0 pings".
"""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """`count` and `noun`, the noun made plural unless the count is one (`plural`: an irregular form)."""
    return f"{count:,} {noun if count == 1 else plural or noun + 's'}"
