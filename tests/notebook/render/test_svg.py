"""The sequence diagram as plain data and as a picture: lanes, an arrow per frame, replies
joined to their requests with the latency, server pings and our pongs, events at the side;
every server-controlled label escaped in the SVG."""

from __future__ import annotations

import re
import sys

import pytest
from support.servers import SERVERS_DIR
from support.waiting import wait_until

import mcp_notebook
from mcp_notebook.api.display.diagram import CLIENT, SERVER, histogram
from mcp_notebook.notebook.render.svg import diagram_bundle, histogram_svg, spark_svg

RAW = [sys.executable, str(SERVERS_DIR / "raw_server.py")]
XSS = '<script>alert(1)</script><img src=x onerror="alert(2)">'


def test_the_diagram_joins_requests_to_replies_and_shows_pings_both_ways():
    with mcp_notebook.demo("pinged", ping_interval=0.05) as conn:
        conn.call_tool("echo", {"text": "hello"})
        conn.ping()
        wait_until(lambda: conn.health.pongs_sent >= 2, "two server pings answered")
        diagram = conn.diagram(last=None)
    steps = {s.seq: s for s in diagram.steps}
    call = next(s for s in diagram.arrows if s.label.startswith("tools/call"))
    assert (call.source, call.target) == (CLIENT, SERVER)
    reply = next(s for s in diagram.replies if s.reply_to == call.seq)
    assert (reply.source, reply.target) == (SERVER, CLIENT)
    assert reply.latency is not None and reply.latency > 0 and reply.label.startswith("result")
    server_pings = [s for s in diagram.arrows if s.flavour == "ping" and s.source == SERVER]
    pongs = [s for s in diagram.arrows if s.flavour == "pong" and s.source == CLIENT]
    assert len(server_pings) >= 2 and len(pongs) >= 2
    assert all(steps[p.reply_to].flavour == "ping" and steps[p.reply_to].source == SERVER for p in pongs)
    our_ping = next(s for s in diagram.arrows if s.flavour == "ping" and s.source == CLIENT)
    assert any(s.reply_to == our_ping.seq and s.flavour == "pong" for s in diagram.replies)
    assert any(s.kind == "state" and "ready" in s.label for s in diagram.events)
    assert [s.at for s in diagram.steps] == sorted(s.at for s in diagram.steps)

    bundle = diagram_bundle(diagram)
    assert set(bundle) == {"image/svg+xml", "text/html", "text/plain"}
    svg = bundle["image/svg+xml"]
    assert svg.count("<polygon") == len(diagram.arrows)  # an arrowhead per frame
    assert svg.count("<polyline") == sum(s.reply_to is not None for s in diagram.steps)  # a bracket per joined reply
    assert f"{reply.latency * 1000:.3f} ms" in svg
    assert ">client<" in svg and ">server<" in svg
    text = diagram.text()
    assert "tools/call" in text and "──────────▶" in text and "◀──────────" in text


def test_server_text_in_the_diagram_is_escaped():
    with mcp_notebook.connect(RAW, era="legacy", name="raw") as conn:
        with pytest.raises(mcp_notebook.McpError):
            conn.request("tools/call", {"name": XSS})
        conn.trace.event("stderr", line=XSS)
        diagram = conn.diagram()
    svg = diagram_bundle(diagram)["image/svg+xml"]
    assert not re.search(r"<\s*(script|img)", svg, re.IGNORECASE)
    assert "&lt;script&gt;" in svg


def test_histogram_bins_and_scales():
    bins = histogram([0.001, 0.002, 0.002, 0.010], bins=3)
    assert [b.count for b in bins] == [3, 0, 1] and bins[0].low == 0.001 and bins[-1].high == 0.010
    assert histogram([]) == [] and [b.count for b in histogram([0.5, 0.5])] == [2]
    svg = histogram_svg([0.001, 0.002, 0.002, 0.010], bins=3)
    assert svg.count("<rect") == 3 and "1.000 ms" in svg and "10.000 ms" in svg and "tallest bar: 3 of 4" in svg
    spark = spark_svg([0.001, 0.003, 0.002])
    assert "3.000 ms" in spark and "1.000 ms" in spark  # the scale: highest and lowest


def test_the_round_trip_pictures_say_what_they_show_titles_level():
    from mcp_notebook.notebook.render.dashboard import rtt_pictures

    html = rtt_pictures([0.001, 0.004, 0.002, 0.003, 0.002, 0.001, 0.002, 0.004])
    assert "round-trip times, last 8, oldest to newest" in html and "round-trip times, last 8, by duration" in html
    assert "align-items:flex-start" in html  # the two titles at one height, over pictures of two heights
    assert "max ·" not in html and "tallest bar: 3 of 8" in html
