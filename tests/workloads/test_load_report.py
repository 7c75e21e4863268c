"""`LoadReport`'s text and HTML (the live view's too: the same tables): server text (a tool's
name from a cassette, an error's message) is escaped in HTML and plain one-line text, with no
control sequence, in text."""

from __future__ import annotations

from support.widgets import XSS, assert_inert

from mcp_notebook.workloads.records import Call, Health
from mcp_notebook.workloads.report import LoadReport

HOSTILE = f"\x1b]8;;http://evil\x07click\x1b]8;;\x07 {XSS}\x1b[2J\nsecond line\x07"


def hostile_report() -> LoadReport:
    calls = [
        Call(0, "tools/call", HOSTILE, 0.0, 0.01, True),
        Call(0, "tools/call", HOSTILE, 0.1, 0.02, False, f"tool error: {HOSTILE}"),
        Call(1, "tools/call", "echo", 0.2, 0.03, False, HOSTILE, -32000),
    ]
    return LoadReport(
        "demo", "echo()", calls, 1.0, 2, Health(sessions=2, server_pings=3, pong_latencies=[0.00003, 0.00004, 0.002])
    )


def test_server_text_is_inert_in_html():
    html = hostile_report()._repr_html_()
    assert_inert(html)
    assert "\x1b" not in html and "\x07" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "error -32000: 1" in html


def test_server_text_is_plain_one_line_text():
    report = hostile_report()
    for text in (repr(report), report.text()):
        assert "\x1b" not in text and "\x07" not in text
        assert "click <script>alert(1)</script>" in text
        assert "\nsecond line" not in text  # each call's text on its own line, never broken by the server's
        assert "3 server pings answered (median 0.04 ms, max 2.0 ms)" in text  # fast pongs: not "0.0 ms"
