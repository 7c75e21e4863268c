"""Keeping what a server sends within bounds: rings bounded by count and by size, bounded
copies of JSON values, durations kept to a range (and the floor under every wait a server
sets before it is asked again), and freed memory given back.

Stores that keep server messages for later (the trace, the server-log store) are `Ring`s,
and keep a copy made by `bounded` when a message is huge: long strings end in a note of
their length, long lists and objects in a note of what was left out. Sizes are characters,
a fair measure of what a parsed JSON value holds (`utf8_size` gives a text's bytes without
copying it whole). What a big frame held goes back to the system once it is let go of:
`give_back_memory` after the frame, and `given_back_when_dropped` for the value a caller
keeps. Nothing here locks: a ring's owner does.
"""

from __future__ import annotations

import functools
import math
import re
import sys
from collections import deque
from collections.abc import Callable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

SCALAR_COST = 8  # a number, a boolean or null, and the separators around a value
GIVE_BACK_AFTER = 256 * 1024  # bytes: a frame this big is followed by `give_back_memory` once it is let go of
RETRY_FLOOR = 0.5  # seconds: the least wait before a server is asked again (a stream reopened, a token polled), whatever it says


_DECIMAL = re.compile(r"\s*\d{1,15}(?:\.\d{1,9})?\s*")


def seconds_within(value: Any, least: float, most: float) -> float | None:
    """A number of seconds a server gave (a JSON number, or a decimal in a string, as some
    token endpoints write it) clamped to [least, most]; None when it is no number at all
    (text, true/false, null, NaN). Never raises: a huge or infinite value is `most`."""
    if isinstance(value, str) and _DECIMAL.fullmatch(value):
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and math.isnan(value)):
        return None
    if value < least:  # an int of any size compares with a float exactly: no float() of it overflows
        return float(least)
    return float(most) if value > most else float(value)


def clipped_text(text: str, limit: int) -> str:
    """`text`, or its first `limit` characters and a note of its length (in ASCII: one character
    past Latin-1 would make Python store the whole copy at two or four bytes a character)."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [clipped: {len(text):,} characters]"


def bounded(value: Any, budget: int) -> tuple[Any, int]:
    """A copy of a JSON-like value that holds about `budget` characters at most, and its size.

    Within budget the parts are kept as they are (strings are not copied); past it, a string
    is clipped and a list or object ends with a note of how many items it left out.
    """
    remaining = [budget]
    copy = _bounded(value, remaining)
    return copy, budget - remaining[0]


def _bounded(value: Any, remaining: list[int]) -> Any:
    if isinstance(value, str):
        room = max(remaining[0], 0)
        remaining[0] -= min(len(value), room) + SCALAR_COST
        return clipped_text(value, room)
    if isinstance(value, dict):
        kept: dict[Any, Any] = {}
        for number, (key, item) in enumerate(value.items()):
            if remaining[0] <= 0:
                kept["..."] = f"{len(value) - number:,} more keys"
                break
            remaining[0] -= len(str(key)) + SCALAR_COST
            kept[key] = _bounded(item, remaining)
        return kept
    if isinstance(value, (list, tuple)):
        items: list[Any] = []
        for number, item in enumerate(value):
            if remaining[0] <= 0:
                items.append(f"... {len(value) - number:,} more items")
                break
            items.append(_bounded(item, remaining))
        return items
    remaining[0] -= SCALAR_COST
    return value


UTF8_SLICE = 1 << 20  # characters encoded at a time to count a text's UTF-8 bytes


def utf8_size(text: str) -> int:
    """The bytes `text` takes in UTF-8, counted a slice at a time: never a copy of a huge text whole."""
    if text.isascii():
        return len(text)
    return sum(len(text[at : at + UTF8_SLICE].encode("utf-8", "surrogatepass")) for at in range(0, len(text), UTF8_SLICE))


class _GivenBack(dict):  # type: ignore[type-arg]
    """A dict that, as it goes, lets go of what it holds, then hands the freed memory back."""

    __slots__ = ()

    def __del__(self) -> None:
        self.clear()  # before the trim: a dict's own items are freed only after its finalizer
        give_back_memory()


def given_back_when_dropped(value: dict[str, Any]) -> dict[str, Any]:
    """`value` (what a big frame held) as a dict that, when the last reference to it goes,
    hands the memory it held back to the system: glibc would keep the pages of its big
    strings and lists (allocated from its heap once a big frame has raised its threshold)."""
    return _GivenBack(value)


class Ring(Generic[T]):
    """Items oldest first: at most `count` of them, and at most about `size` in all (each item's
    cost is given as it is added); the oldest go first, counted in `dropped`, and each goes
    through `on_drop` if given. The newest item is kept whatever its cost."""

    def __init__(self, count: int, size: int, on_drop: Callable[[T], None] | None = None) -> None:
        self.items: deque[T] = deque()
        self._costs: deque[int] = deque()
        self.count = count
        self.size = size
        self.used = 0
        self.dropped = 0
        self._on_drop = on_drop

    def add(self, item: T, cost: int) -> None:
        self.items.append(item)
        self._costs.append(cost)
        self.used += cost
        if len(self.items) > self.count or self.used > self.size:
            self._drop_oldest()

    def _drop_oldest(self) -> None:
        while len(self.items) > self.count or (self.used > self.size and len(self.items) > 1):
            dropped = self.items.popleft()
            self.used -= self._costs.popleft()
            self.dropped += 1
            if self._on_drop is not None:
                self._on_drop(dropped)

    def clear(self) -> None:
        """Forget every item (and the count of dropped ones): their memory goes with them."""
        self.items.clear()
        self._costs.clear()
        self.used = self.dropped = 0

    def __len__(self) -> int:
        return len(self.items)


def give_back_memory() -> None:
    """Return freed memory to the operating system, where the C allocator would keep it.

    glibc keeps the pages of freed large strings (a flood of big frames leaves many) in its
    heap, so the process would stay as large as at its peak; `malloc_trim` hands them back.
    Elsewhere this does nothing.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # on the first close, not at start-up

    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return None
