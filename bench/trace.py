"""Trace benchmark: what recording every frame costs in throughput and in memory.

What: one server-everything process over stdio (the SDK test server if Node or
server-everything is missing). `tools/call echo` is called `--count` times with the
trace on and `--count` times with it off (`conn.trace.enabled = False`), in alternating
rounds so warm-up and drift hit both alike; the script reports calls per second each way
and the ratio off / on. Then it records real `tools/call` frames (each with its own raw
text and parsed message, as the session records them) into a fresh trace under
tracemalloc and reports the bytes each stored frame holds, in total and for the entry
alone (raw text and message excluded).

Why: the trace is on by default and sits on the hot path of every frame; this shows what
that costs and what a trace's capacity means in memory.

Run: `.venv/bin/python bench/trace.py [--count N] [--rounds R] [--frames N] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import gc
import json
import shutil
import sys
import time
import tracemalloc
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # allow `python bench/trace.py` without PYTHONPATH
    sys.path.insert(0, str(REPO))

SERVER_JS = REPO / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
EVERYTHING = ["node", "-r", str(REPO / "tests/peers/loopback.cjs"), str(SERVER_JS), "stdio"]
SDK_SERVER = [sys.executable, str(REPO / "tests/servers/sdk_server.py")]


def server() -> tuple[str, list[str], dict[str, Any]]:
    """(label, argv, echo call params) for the fastest peer available."""
    if SERVER_JS.is_file() and shutil.which("node"):
        return "server-everything", EVERYTHING, {"name": "echo", "arguments": {"message": "hello"}}
    return "sdk_server.py", SDK_SERVER, {"name": "echo", "arguments": {"text": "hello"}}


def throughput(conn: Any, params: dict[str, Any], count: int, rounds: int) -> tuple[float, float]:
    """Calls per second with the trace on and off, alternating rounds of count/rounds calls."""
    per_round = max(1, count // rounds)
    spent = {True: 0.0, False: 0.0}
    done = {True: 0, False: 0}
    clock = time.perf_counter
    for n in range(2 * rounds):
        enabled = n % 2 == 0 if (n // 2) % 2 == 0 else n % 2 == 1  # on/off, off/on, ...: no order bias
        conn.trace.enabled = enabled
        t0 = clock()
        for _ in range(per_round):
            conn.request("tools/call", params)
        spent[enabled] += clock() - t0
        done[enabled] += per_round
    conn.trace.enabled = True
    return done[True] / spent[True], done[False] / spent[False]


def bytes_per_frame(samples: list[tuple[str, str, str, Any]], frames: int) -> tuple[float, float]:
    """Bytes held per stored frame: with its own raw text and message, and the entry alone."""
    from mcp_notebook.session.trace import Trace

    def measure(share: bool) -> float:
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        trace = Trace(frames)
        for i in range(frames):
            direction, kind, raw, method = samples[i % len(samples)]
            if not share:  # a distinct raw string and message, as real traffic has
                message = json.loads(raw)
                message["id"] = 1_000_000 + i
                raw = json.dumps(message, separators=(",", ":"))
            else:
                message = samples[0][2]
            trace.frame(direction, kind, raw, message, method=method, id=i)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - base
        tracemalloc.stop()
        assert len(trace) == frames
        return held / frames

    return measure(share=False), measure(share=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=4000, help="timed calls each way (default 4000)")
    parser.add_argument("--rounds", type=int, default=8, help="alternating rounds each way (default 8)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first (default 200)")
    parser.add_argument("--frames", type=int, default=100_000, help="frames stored for the memory figure")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()

    import mcp_notebook

    label, argv, params = server()
    conn = mcp_notebook.connect(argv, name="bench-trace", cwd=REPO)
    try:
        conn.keepalive(enabled=False)  # no pings of our own in the timed loops
        for _ in range(args.warmup):
            conn.request("tools/call", params)
        on, off = throughput(conn, params, args.count, args.rounds)
        calls = [e for e in conn.trace.frames() if e.method == "tools/call" and e.raw][-2:]
        samples = [(e.direction, e.kind, e.raw, e.method) for e in calls]
    finally:
        conn.close()
    full, entry_only = bytes_per_frame(samples, args.frames)
    mean_raw = sum(len(raw) for _, _, raw, _ in samples) / len(samples)

    print(f"tools/call echo against {label} over stdio, {args.count} calls each way in {args.rounds} rounds\n")
    print(f"trace on   {on:>10.0f} calls/s")
    print(f"trace off  {off:>10.0f} calls/s")
    print(f"on / off   {on / off:>10.3f}  (throughput kept with the trace on)")
    print(f"\nmemory per stored frame ({args.frames} tools/call frames, raw text ~{mean_raw:.0f} chars):")
    print(f"  with its raw text and parsed message  {full:>7.0f} bytes")
    print(f"  the entry alone                       {entry_only:>7.0f} bytes")
    if args.json:
        figures = {
            "server": label,
            "count": args.count,
            "rounds": args.rounds,
            "python": sys.version.split()[0],
            "calls_per_s": {"trace_on": on, "trace_off": off},
            "ratio_on_over_off": on / off,
            "bytes_per_frame": {"total": full, "entry_only": entry_only, "mean_raw_chars": mean_raw},
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
