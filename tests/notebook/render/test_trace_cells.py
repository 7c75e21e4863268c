"""The trace table's HTML (`render.trace`): each row stays one line (the browser test measures
it), and a long method or event text is clipped at a word's end, never mid-word by an
ellipsis, its whole text on hover."""

from __future__ import annotations

import re

import mcp_notebook
from mcp_notebook.base.text import clip_words
from mcp_notebook.notebook.render.trace import trace_html, trace_rows


def test_a_long_method_is_clipped_at_a_words_end_on_one_line():
    with mcp_notebook.demo("d", keepalive=None) as conn:
        conn.list_tools(refresh=True)
        conn.trace.event("note", note="reconnect attempt=3 reason=the-server-closed-the-stream after=2.5s next=5.0s")
        html = trace_html(conn.trace.entries())
    assert "text-overflow:ellipsis" not in html  # CSS would cut inside a word
    assert "white-space:nowrap" in html and 'title="reconnect attempt=3 reason=the-server-closed-the-stream' in html
    shown = re.findall(r'title="reconnect attempt=3 reason=[^"]*">([^<]*)<', html)
    assert shown == ["reconnect attempt=3…"], shown  # clipped after a whole word, not inside "reason=the-…"


def test_clipping_ends_at_a_words_end():
    method = "reconnect attempt=3 reason=the-server-closed-the-stream after=2.5s next=5.0s backoff=exponential"
    assert clip_words(method, 60) == "reconnect attempt=3 reason=the-server-closed-the-stream…"
    assert clip_words("notifications/resources/list_changed_with_a_long_tail", 40) == "notifications/resources/…"
    assert clip_words("x" * 80, 20) == "x" * 19 + "…"  # one word longer than half: cut, there is no other end
    assert trace_rows([]) == []
