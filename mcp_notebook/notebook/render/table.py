"""What the notebook's HTML tables share: one-line cells (clipped at a word's end, or with an
ellipsis where a row must keep its width; the whole text on hover), and durations in milliseconds.

The rule kept here: every text lands in a cell through `esc` (`base.text`), so a server's
markup comes out as text.
"""

from __future__ import annotations

from ...base.text import clip_words, esc

CELL = 'style="text-align:left;white-space:nowrap;padding:1px 0.8em 1px 0"'  # one line a row: nothing wraps


def ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.3f} ms"


def ago(seconds: float | None) -> str:
    if seconds is None:
        return "never"
    return f"{seconds * 1000:.0f} ms ago" if seconds < 1 else f"{seconds:.1f} s ago"


def clipped_cell(text: str, max_em: float, tag: str = "td") -> str:
    """A one-line cell at most `max_em` wide, for a table whose rows must stay one line (the
    dashboard): what does not fit ends in an ellipsis, and the whole text shows on hover."""
    style = "text-align:left;white-space:nowrap;padding:1px 0.8em 1px 0;overflow:hidden;text-overflow:ellipsis"
    style += f";max-width:{max_em:g}em"
    return f'<{tag} style="{style}" title="{esc(text)}">{esc(text)}</{tag}>'


def word_clipped_cell(text: str, chars: int, tag: str = "td") -> str:
    """A one-line cell of at most `chars` characters, cut at a word's end (never inside a word,
    unless one word alone is longer), with the whole text on hover."""
    return f'<{tag} {CELL} title="{esc(text)}">{esc(clip_words(text, chars))}</{tag}>'
