"""Validation benchmark: what checking every server frame against the spec costs.

What: one server-everything process over stdio (the SDK test server if Node or
server-everything is missing). `tools/call echo` is called `--count` times with frame
checking on and `--count` times with it off (`conn._session.checker.enabled`), in
alternating rounds so warm-up and drift hit both alike; a round with checking on ends only
once the checker has caught up (`checker.settled()`), so its work is inside the timing.
It reports calls per second each way and the ratio on / off. Then the demo server pings us
every 10 ms while we call its `echo` with 100 kB of text, checking on and off in alternating
rounds: the pong latency (our reading thread, from the ping read to the pong written) each
way. Then it times the rules on one 10 MB `tools/call` result (a text block of that size and, separately, 100,000 small
blocks), against `json.loads` of the same frame, the floor every frame pays anyway.

Why: checking runs on a worker thread, off the ping path, but it still takes the GIL;
this shows what it costs a busy connection, and that a large result is checked once, in
about the time it takes to parse.

Run: `.venv/bin/python bench/validation.py [--count N] [--rounds R] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # allow `python bench/validation.py` without PYTHONPATH
    sys.path.insert(0, str(REPO))

SERVER_JS = REPO / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
EVERYTHING = ["node", "-r", str(REPO / "tests/peers/loopback.cjs"), str(SERVER_JS), "stdio"]
SDK_SERVER = [sys.executable, str(REPO / "tests/servers/sdk_server.py")]


def server() -> tuple[str, list[str], dict[str, Any]]:
    """(label, argv, echo call params) for the fastest peer available."""
    if SERVER_JS.is_file() and shutil.which("node"):
        return "server-everything", EVERYTHING, {"name": "echo", "arguments": {"message": "hello"}}
    return "sdk_server.py", SDK_SERVER, {"name": "echo", "arguments": {"text": "hello"}}


def throughput(conn: Any, params: dict[str, Any], count: int, rounds: int) -> tuple[float, float, list[float]]:
    """Calls per second with checking on and off, alternating rounds; and each pair's ratio."""
    checker = conn._session.checker
    per_round = max(1, count // rounds)
    spent = {True: 0.0, False: 0.0}
    ratios: list[float] = []
    clock = time.perf_counter
    for n in range(rounds):
        pair: dict[bool, float] = {}
        for enabled in (True, False) if n % 2 == 0 else (False, True):  # on/off, off/on, ...: no order bias
            checker.enabled = enabled
            t0 = clock()
            for _ in range(per_round):
                conn.request("tools/call", params)
            checker.settled()
            pair[enabled] = clock() - t0
            spent[enabled] += pair[enabled]
        ratios.append(pair[False] / pair[True])
    checker.enabled = True
    done = per_round * rounds
    return done / spent[True], done / spent[False], ratios


def pong_latency(rounds: int, calls: int) -> tuple[list[float], list[float]]:
    """Pong latencies (seconds) with checking on and off, while 100 kB echo calls keep the checker busy."""
    import mcp_notebook

    latencies: dict[bool, list[float]] = {True: [], False: []}
    with mcp_notebook.demo("bench-pongs", load_magics=False, ping_interval=0.01, keepalive=None) as conn:
        counters, checker = conn._session.counters, conn._session.checker
        text = "x" * 100_000
        for n in range(rounds):
            for enabled in (True, False) if n % 2 == 0 else (False, True):
                checker.enabled = enabled
                before = counters.pongs_sent
                for _ in range(calls):
                    conn.call_tool("echo", {"text": text})
                checker.settled()
                new = counters.pongs_sent - before
                latencies[enabled] += list(counters.pong_latencies)[-new:] if new else []
        checker.enabled = True
    return latencies[True], latencies[False]


def large_result(version: str, shape: str, size: int) -> tuple[float, float]:
    """Seconds to check one `size`-byte CallToolResult frame, and to json.loads it."""
    from mcp_notebook.protocol import jsonrpc as rpc
    from mcp_notebook.protocol.frame_rules import FrameRules, Seen

    if shape == "one block":
        content = [{"type": "text", "text": "x" * size}]
    else:
        block = {"type": "text", "text": "y" * max(1, size // 100_000 - 30)}
        content = [dict(block) for _ in range(100_000)]
    raw = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"content": content}})
    t0 = time.perf_counter()
    message = json.loads(raw)
    parsed = time.perf_counter() - t0
    rules = FrameRules()
    rules.check(Seen(1, rpc.RESPONSE, {"jsonrpc": "2.0", "id": 1, "result": {"content": []}}, version, "tools/call"))
    t0 = time.perf_counter()
    found = rules.check(Seen(2, rpc.RESPONSE, message, version, "tools/call", {"name": "big"}))
    checked = time.perf_counter() - t0
    assert not found, found
    return checked, parsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=3000, help="timed calls each way (default 3000)")
    parser.add_argument("--rounds", type=int, default=10, help="alternating rounds each way (default 10)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first (default 200)")
    parser.add_argument("--size", type=int, default=10_000_000, help="bytes of the large result (default 10 MB)")
    parser.add_argument("--pong-rounds", type=int, default=10, help="alternating rounds of the pong figure (default 10)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()

    import mcp_notebook

    label, argv, params = server()
    conn = mcp_notebook.connect(argv, name="bench-validation", cwd=REPO, era="legacy")
    try:
        conn.keepalive(enabled=False)  # no pings of our own in the timed loops
        for _ in range(args.warmup):
            conn.request("tools/call", params)
        conn._session.checker.settled()  # the validators are compiled during the warm-up, not timed
        on, off, ratios = throughput(conn, params, args.count, args.rounds)
        version = conn.protocol_version or "2025-11-25"
        assert conn.violations == [], conn.violations
    finally:
        conn.close()
    figures: dict[str, Any] = {"server": label, "version": version, "on": on, "off": off, "ratio": on / off}
    figures["round_ratios"] = {"median": statistics.median(ratios), "min": min(ratios), "max": max(ratios)}
    print(f"tools/call echo against {label} over stdio ({version}), {args.count} calls each way in {args.rounds} rounds\n")
    print(f"checking on   {on:>9.0f} calls/s")
    print(f"checking off  {off:>9.0f} calls/s")
    print(
        f"on / off      {on / off:>9.3f}  (throughput kept with every frame checked; per round: median "
        f"{statistics.median(ratios):.3f}, {min(ratios):.3f}..{max(ratios):.3f})"
    )
    on_pongs, off_pongs = pong_latency(args.pong_rounds, 20)
    figures["pong_latency_ms"] = {}
    print("\npong latency while 100 kB echo calls run (demo server pinging every 10 ms):")
    for label_, found in (("checking on", on_pongs), ("checking off", off_pongs)):
        median, p95 = statistics.median(found) * 1000, sorted(found)[int(0.95 * (len(found) - 1))] * 1000
        figures["pong_latency_ms"][label_] = {"pongs": len(found), "median": median, "p95": p95}
        print(f"  {label_:<13} {len(found):>5} pongs, median {median:.3f} ms, p95 {p95:.3f} ms")
    print(f"\none {args.size / 1e6:g} MB tools/call result, checked once (against json.loads of the same frame):")
    for shape in ("one block", "100,000 blocks"):
        checked, parsed = large_result(version, shape, args.size)
        figures[shape] = {"check_s": checked, "parse_s": parsed, "ratio": checked / parsed}
        print(f"  {shape:<15} check {checked * 1000:>8.1f} ms, json.loads {parsed * 1000:>8.1f} ms, ratio {checked / parsed:.2f}")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
