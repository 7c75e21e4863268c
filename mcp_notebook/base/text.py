"""Text a server controls, made safe to show: HTML-escaped, stripped for terminals, clipped,
laid out in tables, filled to a notebook's width at word boundaries (`wrapped`).

Plain functions of strings, used by every layer that renders (results, panels, widgets,
magics): a `<script>` in a tool name comes out as text wherever it is shown, and an escape
sequence (a clipboard write, a screen clear, a hyperlink, a colour) never reaches a terminal:
every text rendering passes server text through `plain` or `one_line`. In HTML, a server's
colours (ANSI SGR, as loggers write them to stderr) may show as colours: `ansi_html`.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence
from html import escape
from typing import Any

FIELD_LIMIT = 80  # characters of a server-controlled field shown in a table cell
TEXT_WIDTH = 80  # columns of text output: a notebook's output area breaks longer lines anywhere, mid-word too

# ECMA-48 (the grammar terminals parse), 7-bit and 8-bit forms. No maintained library strips
# the string commands (OSC 52 clipboard writes, OSC 8 links, DCS, APC) as well as CSI: the
# small ones on PyPI match CSI only and would leave an OSC's payload behind.
_ESCAPES = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, clear screen
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f]).*?(?:\x07|\x1b\\|\x9c|\Z)"  # OSC, DCS, SOS, PM, APC, to their end
    r"|\x1b[ -/]*[0-~]?",  # any other escape (charset shifts, resets, a lone ESC)
    re.DOTALL,
)
# What is left that a terminal acts on: C0 but tab and newline, DEL, C1, and the bidi
# controls that reorder what is shown.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# Select Graphic Rendition: colours, bold, dim, italic, underline (what ansi_html keeps).
_SGR = re.compile(r"(\x1b\[[0-9;:]*m)")


def esc(value: Any) -> str:
    """HTML-escape anything (quotes too), so server text is inert in any context."""
    return escape("" if value is None else str(value), quote=True)


def plain(value: Any) -> str:
    """Text a terminal shows as it is: escape sequences removed, other control characters a "?"
    (tabs and line breaks stay)."""
    text = "" if value is None else str(value)
    if text.isprintable():
        return text  # the common case, and cheap
    return _CONTROLS.sub("?", _ESCAPES.sub("", text))


def ansi_html(value: Any) -> str:
    """Server text as HTML, its colours kept: SGR sequences become inline-styled spans
    (ansi2html), every other escape sequence is removed and control character shown as in
    `plain`, and the rest is HTML-escaped. No link is made (an OSC 8 link is dropped)."""
    text = "" if value is None else str(value)
    if text.isprintable():
        return esc(text)
    pieces = _SGR.split(text)  # odd indices are the SGR sequences themselves
    cleaned = "".join(piece if i % 2 else plain(piece) for i, piece in enumerate(pieces))
    from ansi2html import Ansi2HTMLConverter  # with the first coloured text: it imports importlib.metadata

    return str(Ansi2HTMLConverter(inline=True, linkify=False).convert(cleaned, full=False))


def one_line(value: Any) -> str:
    """`plain`, on one line: runs of whitespace (line breaks too) become one space."""
    return " ".join(plain(value).split())


def clip(value: Any, limit: int = FIELD_LIMIT) -> str:
    text = "" if value is None else str(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clip_words(value: Any, limit: int = FIELD_LIMIT) -> str:
    """`clip` at the last word's end (a space or "/") that leaves at least half the text; a word
    is cut only when it alone runs past half of `limit`."""
    text = "" if value is None else str(value)
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    end = max(head.rfind(" "), head.rfind("/") + 1)
    return (head[:end].rstrip() if end >= limit // 2 else head) + "…"


def table_text(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A plain aligned text table; every cell on one line, with no control sequence."""
    cells = [[one_line(x) for x in row] for row in rows]
    widths = [max(len(x) for x in column) for column in zip(head, *cells, strict=True)]
    lines = ["  ".join(str(x).ljust(w) for x, w in zip(head, widths, strict=True)).rstrip()]
    lines += ["  ".join(x.ljust(w) for x, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


def wrapped(text: str, indent: str = "", first: str | None = None, width: int = TEXT_WIDTH) -> str:
    """`text` filled to `width` columns at word boundaries only (a long URL or name stays whole),
    its lines after `indent` (the first after `first`, if given)."""
    return textwrap.fill(
        text,
        width,
        initial_indent=indent if first is None else first,
        subsequent_indent=indent,
        break_long_words=False,
        break_on_hyphens=False,
    )


_INLINE_CODE = re.compile(r"`([^`\n]+)`")  # Markdown's inline code, as descriptions write names


def code_html(value: Any) -> str:
    """`esc`, with Markdown's `inline code` shown as <code> (its backticks gone)."""
    return _INLINE_CODE.sub(r"<code>\1</code>", esc(value))


def code_text(value: Any) -> str:
    """Text with Markdown's `inline code` as the plain words (its backticks gone)."""
    return _INLINE_CODE.sub(r"\1", "" if value is None else str(value))
