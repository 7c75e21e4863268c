"""`conn.map` at 16 in flight against a plain loop of `conn.call_tool`, on the same connection to the
demo server, stdio and Streamable HTTP, in the same run.

What: for each transport one demo server and one connection; `--rounds` rounds, each running the
same `--count` rows both ways (who goes first flips every round), so machine noise hits both. Two
tools: `echo` (the server answers at once: what the client costs) and `slow` with `--seconds` per
call (a tool that takes time, as lookups and queries do: what overlapping calls buys). Every run is
timed from the caller with `time.perf_counter()`; the map shows no progress (`progress=False`).

It prints, per transport and tool, each way's median calls/s and `map / loop` as the median of the
per-round ratios of calls/s (and its range over rounds).

Run: `.venv/bin/python bench/map.py [--rounds N] [--count N] [--seconds S] [--concurrency K] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import mcp_notebook  # noqa: E402
from mcp_notebook import demo_server  # noqa: E402

DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]


def loop(conn: Any, tool: str, rows: list[dict[str, Any]]) -> float:
    started = time.perf_counter()
    for row in rows:
        conn.call_tool(tool, row, progress=False)
    return time.perf_counter() - started


def mapped(conn: Any, tool: str, rows: list[dict[str, Any]], concurrency: int) -> float:
    started = time.perf_counter()
    result = conn.map(tool, rows, concurrency=concurrency, progress=False)
    seconds = time.perf_counter() - started
    assert len(result.ok) == len(rows), result.headline()
    return seconds


def measure(conn: Any, tool: str, rows: list[dict[str, Any]], rounds: int, concurrency: int) -> dict[str, Any]:
    loop(conn, tool, rows[:20])  # warm: listing cached, checks compiled
    mapped(conn, tool, rows[:20], concurrency)
    loops, maps = [], []
    for n in range(rounds):
        ways = [("loop", lambda: loop(conn, tool, rows)), ("map", lambda: mapped(conn, tool, rows, concurrency))]
        for name, run in ways if n % 2 == 0 else ways[::-1]:
            (loops if name == "loop" else maps).append(len(rows) / run())
    ratios = [m / lo for m, lo in zip(maps, loops, strict=True)]
    return {
        "loop_calls_per_s": statistics.median(loops),
        "map_calls_per_s": statistics.median(maps),
        "ratio": statistics.median(ratios),
        "ratio_range": [min(ratios), max(ratios)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--count", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=0.02, help="the slow tool's time per call")
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    tools = {
        "echo": [{"text": f"row {i}"} for i in range(args.count)],
        f"slow {args.seconds * 1000:g} ms": [{"seconds": args.seconds, "steps": 1}] * args.count,
    }
    results: dict[str, Any] = {}
    process, url = demo_server.start_http()
    try:
        for transport, target in (("stdio", DEMO), ("http", url)):
            with mcp_notebook.connect(target, name=f"bench-{transport}") as conn:
                for label, rows in tools.items():
                    tool = label.split()[0]
                    found = measure(conn, tool, rows, args.rounds, args.concurrency)
                    results[f"{transport} {label}"] = found
                    low, high = found["ratio_range"]
                    print(
                        f"{transport:5} {label:12} loop {found['loop_calls_per_s']:8.1f} calls/s   "
                        f"map({args.concurrency}) {found['map_calls_per_s']:8.1f} calls/s   "
                        f"map / loop {found['ratio']:5.2f}x ({low:.2f}-{high:.2f})",
                        flush=True,
                    )
    finally:
        process.stop()
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
