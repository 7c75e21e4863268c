"""The trace table's HTML (`render.trace`): a long method wraps between its words and after each
"/" inside a narrow cell, never cut mid-word by an ellipsis, and an event's long method text is
clipped at a word's end."""

from __future__ import annotations

import mcp_notebook
from mcp_notebook.base.text import clip_words
from mcp_notebook.notebook.render.trace import trace_html, trace_rows


def test_a_long_method_wraps_after_its_slashes_instead_of_an_ellipsis():
    with mcp_notebook.demo("d", keepalive=None) as conn:
        conn.list_tools(refresh=True)
        html = trace_html(conn.trace.frames())
    assert "text-overflow:ellipsis" not in html and "white-space:nowrap;overflow:hidden" not in html
    assert "notifications/<wbr>initialized" in html and "tools/<wbr>list" in html
    assert "word-break:normal;overflow-wrap:anywhere" in html  # a token with no break still fits


def test_clipping_ends_at_a_words_end():
    method = "reconnect attempt=3 reason=the-server-closed-the-stream after=2.5s next=5.0s backoff=exponential"
    assert clip_words(method, 60) == "reconnect attempt=3 reason=the-server-closed-the-stream…"
    assert clip_words("notifications/resources/list_changed_with_a_long_tail", 40) == "notifications/resources/…"
    assert clip_words("x" * 80, 20) == "x" * 19 + "…"  # one word longer than half: cut, there is no other end
    assert trace_rows([]) == []
