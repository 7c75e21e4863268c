"""A big result is held once: its call's peak memory stays within the value it makes plus one
copy of its frame, the trace keeps a clipped copy with the full size, what it held goes
back to the system when it is dropped, and its display shows a bounded part of it.

Measured in a child process of its own (RSS is per process) against a scripted server: no
real peer sends a million content blocks on demand. The child resets its peak
(`/proc/self/clear_refs`), so the peak is the call's alone; every bound is a multiple of
the frame's bytes, none is a time. What is retained is read once the frame checker has
checked the frame (it holds it until then).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

import mcp_notebook
from mcp_notebook.api.results.blocks import SHOWN_BLOCKS, SHOWN_CHARS
from mcp_notebook.base.sizes import GIVE_BACK_AFTER
from mcp_notebook.session.trace import FRAME_CLIP

RAW = [sys.executable, str(Path(__file__).parents[2] / "servers" / "raw_server.py"), "--tools", "large"]

LINUX = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self and resets its peak there")

CHILD = """
import ctypes, gc, json, sys
import mcp_notebook

def rss(key="VmRSS"):
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) * 1024 for line in status if line.startswith(key))

def trim():
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)

raw, arguments, options = json.loads(sys.argv[1]), json.loads(sys.argv[2]), json.loads(sys.argv[3])
with mcp_notebook.connect(raw, era="legacy", name="big", **options) as conn:
    conn.keepalive(enabled=False)
    conn.call_tool("large", {**arguments, "prepare": True})  # the server encodes it ahead
    conn.violations  # the frame checker's one-time set-up (the schema) done before the start
    trim()
    start = rss()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")  # the peak from here on is the call's
    result = conn.call_tool("large", arguments, timeout=300)
    peak = rss("VmHWM") - start
    blocks, first = len(result.content), result.content[0]["text"][:20]
    trim()  # the bench's own trim: what is left is what the value takes
    value = rss() - start
    del result
    conn.violations  # the frame checker holds each frame until it has checked it (a million blocks: seconds)
    gc.collect()  # no trim: what the client gives back by itself
    retained = rss() - start
    entry = conn.trace.frames("in")[-1]
    figures = {
        "peak": peak, "value": value, "retained": retained, "blocks": blocks, "first": first,
        "frame": entry.size, "kept_raw": len(entry.raw), "trace_bytes": conn.trace.bytes,
    }
print(json.dumps(figures))
"""


def measured(arguments: dict[str, int], **options: object) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(RAW), json.dumps(arguments), json.dumps(options)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    figures: dict[str, float] = json.loads(done.stdout)
    return figures


@LINUX
def test_a_million_item_result_peaks_at_its_value_and_one_frame_and_is_given_back_when_dropped():
    figures = measured({"items": 1_000_000, "size": 0})
    frame = figures["frame"]
    assert figures["blocks"] == 1_000_000 and figures["first"] == "0" and frame > 30_000_000
    # A dict per item: the parsed value alone is about ten times the frame. On top of it the
    # call may hold one copy of the frame (its text, while it is parsed), not the bytes too.
    assert figures["value"] > 5 * frame
    assert figures["peak"] <= figures["value"] + 1.5 * frame
    assert figures["retained"] <= 0.25 * frame
    # The trace keeps a clipped copy that says the frame's full size, not a second value.
    assert figures["kept_raw"] < FRAME_CLIP + 100
    assert figures["trace_bytes"] < 4 * FRAME_CLIP + (1 << 20)


@LINUX
@pytest.mark.parametrize("size", [10_000_000, 50_000_000])
def test_a_big_text_result_peaks_under_three_frames_and_is_given_back_when_dropped(size):
    figures = measured({"items": 1, "size": size})
    frame = figures["frame"]
    assert frame > size > GIVE_BACK_AFTER and figures["first"] == "x" * 20
    assert figures["peak"] <= 2.5 * frame  # the text while it is parsed, and the value: no third copy
    assert figures["retained"] <= 0.1 * frame
    assert figures["kept_raw"] < FRAME_CLIP + 100


def test_a_long_result_displays_its_first_blocks_clipped_and_keeps_every_block():
    with mcp_notebook.connect(RAW, era="legacy", name="big") as conn:
        many = conn.call_tool("large", items=SHOWN_BLOCKS + 900, size=0)
        bundle = many._repr_mimebundle_()
        assert len(many.content) == SHOWN_BLOCKS + 900 and many.text.endswith(f"\n{SHOWN_BLOCKS + 899}")
        for shown in bundle.values():
            assert f"{SHOWN_BLOCKS - 1}<" in shown or f"\n{SHOWN_BLOCKS - 1}\n" in shown
            assert f"{SHOWN_BLOCKS}<" not in shown and f"\n{SHOWN_BLOCKS}\n" not in shown
            assert "… and 900 more content blocks (.content holds them all)" in shown
        long = conn.call_tool("large", items=1, size=3 * SHOWN_CHARS)
        assert len(long.text) == 3 * SHOWN_CHARS
        for shown in long._repr_mimebundle_().values():
            assert len(shown) < SHOWN_CHARS + 1000 and f"[clipped: {3 * SHOWN_CHARS:,} characters]" in shown
