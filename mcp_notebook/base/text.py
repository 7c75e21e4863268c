"""Text a server controls, made safe to show: HTML-escaped, clipped, laid out in tables.

Plain functions of strings, used by every layer that renders (results, panels, widgets):
a `<script>` in a tool name comes out as text wherever it is shown.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from typing import Any

FIELD_LIMIT = 80  # characters of a server-controlled field shown in a table cell


def esc(value: Any) -> str:
    """HTML-escape anything (quotes too), so server text is inert in any context."""
    return escape("" if value is None else str(value), quote=True)


def clip(value: Any, limit: int = FIELD_LIMIT) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def table_text(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain aligned text table."""
    widths = [max(len(str(x)) for x in column) for column in zip(head, *rows, strict=True)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(head, widths, strict=True)).rstrip()]
    lines += ["  ".join(str(x).ljust(w) for x, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    return "\n".join(lines)
