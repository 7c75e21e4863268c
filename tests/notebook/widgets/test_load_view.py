"""The load's live widget (`notebook.widgets.load`): its table (HTML) and its panel's repr (text)
follow the records as they arrive, with server text escaped in the one and plain in the other."""

from __future__ import annotations

from support.widgets import XSS, assert_inert

from mcp_notebook.notebook.widgets.load import LoadView
from mcp_notebook.workloads.records import Call, Health, Tally
from mcp_notebook.workloads.run import Live

HOSTILE = f"\x1b]8;;http://evil\x07click\x1b]8;;\x07 {XSS}\x1b[2J\nsecond line"


def test_the_view_shows_the_records_so_far_inert():
    tally = Tally()
    live = Live("demo", 2, tally, "kernel")
    view = LoadView(live)
    assert "0 calls" in view.table.value and "running" in repr(view.widget)
    before = live.key()
    tally.add([Call(0, "tools/call", HOSTILE, 0.0, 0.01, False, f"tool error: {HOSTILE}")])
    tally.note(Health(sessions=2, server_pings=1, pong_latencies=[0.002]))
    assert live.key() != before  # the pump redraws on new records and on the health growing
    view.render()
    html, text = view.table.value, repr(view.widget)
    assert_inert(html)
    assert "&lt;script&gt;" in html and "1 server ping answered" in html
    assert "\x1b" not in text and "\x07" not in text and "click <script>alert(1)</script>" in text
    assert "\nsecond line" not in text
