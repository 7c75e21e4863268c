"""What the notebook's HTML tables share: a one-line cell, a cell clipped to a width (the whole
text on hover), and durations in milliseconds.

The rule kept here: every text lands in a cell through `esc` (`base.text`), so a server's
markup comes out as text.
"""

from __future__ import annotations

from ...base.text import esc

CELL = 'style="text-align:left;white-space:nowrap;padding:1px 0.8em 1px 0"'  # one line a row: nothing wraps


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.3f} ms"


def ago(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return f"{seconds * 1000:.0f} ms ago" if seconds < 1 else f"{seconds:.1f} s ago"


def clipped_cell(text: str, max_em: float, tag: str = "td") -> str:
    """A one-line cell at most `max_em` wide, so the table fits the notebook: what does not fit
    ends in an ellipsis, and the whole text shows on hover."""
    style = "text-align:left;white-space:nowrap;padding:1px 0.8em 1px 0;overflow:hidden;text-overflow:ellipsis"
    style += f";max-width:{max_em:g}em"
    return f'<{tag} style="{style}" title="{esc(text)}">{esc(text)}</{tag}>'
