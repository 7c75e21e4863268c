"""`base.text`: server text made safe for a terminal; errors shown without control sequences."""

from __future__ import annotations

import pytest

from mcp_notebook import McpError
from mcp_notebook.base.text import ansi_html, one_line, plain, table_text


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("copy \x1b]52;c;cHduZWQ=\x07me", "copy me"),  # OSC 52: a clipboard write, ended by BEL
        ("copy \x1b]52;c;cHduZWQ=\x1b\\me", "copy me"),  # ... ended by ST
        ("\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "click"),  # OSC 8: a hyperlink
        ("\x1b[2J\x1b[3J\x1b[Hclear", "clear"),  # clear screen and scrollback, cursor home
        ("\x1b[1;31mred\x1b[0m", "red"),  # CSI colours
        ("\x9b31mred", "red"),  # 8-bit CSI
        ("\x1bPq#0;2;0;0;0\x1b\\sixel", "sixel"),  # DCS
        ("\x1b_apc\x1b\\after", "after"),  # APC
        ("a\x1b(0b\x1bcc", "abc"),  # charset shift, full reset
        ("unterminated \x1b]52;c;AAAA", "unterminated "),  # an OSC never ended eats the rest, not the terminal
        ("line\rover\bwrite\x00", "line?over?write?"),  # other controls are visible, not acted on
        ("right\u202eto left", "right?to left"),  # bidi override
        ("tabs\tand\nlines", "tabs\tand\nlines"),
        ("plain ünïcödé ✓ — “quotes”", "plain ünïcödé ✓ — “quotes”"),
    ],
)
def test_plain_leaves_nothing_a_terminal_acts_on(text, shown):
    assert plain(text) == shown


def test_one_line_and_tables():
    assert one_line("a\n\x1b[31mb\x1b[0m\t c") == "a b c"
    table = table_text(["name", "note"], [["x\x1b[2J", "two\nlines"]])
    assert table.splitlines()[1].split() == ["x", "two", "lines"] and "\x1b" not in table


def test_errors_never_show_control_sequences():
    error = McpError(-1, "bad \x1b]52;c;AAAA\x07thing", method="tools/call")
    assert str(error) == "tools/call: bad thing (code -1)"
    assert error.message == "bad \x1b]52;c;AAAA\x07thing"  # the data keeps what the server said


def test_ansi_html_keeps_colours_and_nothing_else():
    shown = ansi_html("\x1b[1;31merror\x1b[0m <b>&\x1b]8;;javascript:alert(1)\x1b\\link\x1b]8;;\x1b\\\x1b[2J\x07")
    assert shown.startswith('<span style="font-weight: bold; color: #aa0000">error</span>')
    assert "&lt;b&gt;&amp;link?" in shown  # escaped; the link's text kept, the link and the screen clear gone
    assert "\x1b" not in shown and "href" not in shown and "javascript" not in shown
    assert ansi_html("<i>plain</i>") == "&lt;i&gt;plain&lt;/i&gt;"
