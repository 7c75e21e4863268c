"""What the notebook's HTML tables share: a one-line cell, a narrow cell that wraps between words
(the whole text on hover), and durations in milliseconds.

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


def narrow_cell(text: str, max_em: float, tag: str = "td") -> str:
    """A cell at most `max_em` wide, so the table fits the notebook: its text wraps between words
    and after each "/" (a method's segments), a token with no such break anywhere, and the
    whole text shows on hover. Never an ellipsis cutting a word."""
    style = "text-align:left;white-space:normal;word-break:normal;overflow-wrap:anywhere;padding:1px 0.8em 1px 0"
    style += f";max-width:{max_em:g}em;vertical-align:top"
    shown = esc(text).replace("/", "/<wbr>")
    return f'<{tag} style="{style}" title="{esc(text)}">{shown}</{tag}>'
