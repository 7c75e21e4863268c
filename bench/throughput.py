"""Tool-call throughput: 1,000 `tools/call echo` calls at 1, 8 and 64 in flight, ours against the SDK and raw floors.

What: every client runs in a worker process of its own, holding one stdio connection to
its own `bench/echo_server.py` (a minimal stdlib server, so the client is what is
measured). The workers take turns in `--rounds` rounds (who goes first flips every round);
in each round every worker makes `--count` calls at each of the `--inflight` levels, and
the coordinator takes calls per second from each worker's own wall clock.

The clients:
- `request`: `conn.request("tools/call", ...)` from k threads (a thread pool kept between rounds).
- `call_tool`: `conn.call_tool("echo", message=...)` from k threads.
- `acall_tool`: `await conn.aio.call_tool(...)`, k coroutines under `asyncio.gather`.
- `interleaved` (1 in flight only): `call_tool` and `request` on one connection in alternating
  blocks of 20 calls; it reports the ratio of their times directly, the figure least moved by
  the machine's swings.
- `sdk`: the MCP SDK 2.3.0, `mcp.Client(mode="legacy")`, `ClientSession.call_tool` from k
  coroutines under `asyncio.gather` (`--no-sdk` leaves it out).
- `raw sequential`: write one request line, `readline` its answer, on the caller's thread (k ignored).
- `raw pipelined`: the same pipe with k requests kept in flight (a new one written as each answer comes).
`--baseline PATH` adds the mcp-notebook clients imported from another checkout (say, a
`git archive` of main), for before and after in the same run; `--baseline NAME=PATH`, given
more than once, adds several, each labelled with its NAME.

It prints, per level, each client's median calls/s over rounds and its range, and the
ratios of medians of the per-round times: call_tool / request, SDK / acall_tool (above 1:
ours is faster), the floor's share (ours / raw pipelined, in calls/s) and, for each
baseline, its time over this checkout's (above 1: this checkout is faster).

Run: `.venv/bin/python bench/throughput.py [--rounds N] [--count N] [--inflight 1,8,64] [--baseline [NAME=]PATH]
[--json PATH]`.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, str(REPO / "bench/echo_server.py")]
LEGACY_VERSION = "2025-11-25"
ARGS = {"message": "hello"}

Round = Callable[[int, int], float]  # (in flight, calls) -> seconds


def shares(count: int, inflight: int) -> list[int]:
    """`count` calls split over `inflight` callers, as evenly as they go."""
    return [count // inflight + (1 if i < count % inflight else 0) for i in range(inflight)]


# ----- the clients (each runs in a worker process) -----------------------------


def notebook_rounds(client: str, serve: Callable[[Round], None]) -> None:
    import mcp_notebook

    conn = mcp_notebook.connect(SERVER, name="bench")
    conn.keepalive(enabled=False)  # only the calls we time
    try:
        if client == "acall_tool":

            async def calls(n: int) -> None:
                for _ in range(n):
                    await conn.aio.call_tool("echo", ARGS)

            async def gathered(inflight: int, count: int) -> float:
                t0 = time.perf_counter()
                await asyncio.gather(*(calls(n) for n in shares(count, inflight)))
                return time.perf_counter() - t0

            loop = asyncio.new_event_loop()
            try:
                serve(lambda inflight, count: loop.run_until_complete(gathered(inflight, count)))
            finally:
                loop.close()
            return

        def request() -> Any:
            return conn.request("tools/call", {"name": "echo", "arguments": ARGS})

        def call_tool() -> Any:
            return conn.call_tool("echo", ARGS)

        if client == "interleaved":
            serve(lambda _inflight, count: interleaved(call_tool, request, count))
            return
        one = request if client == "request" else call_tool

        def many(n: int) -> None:
            for _ in range(n):
                one()

        with concurrent.futures.ThreadPoolExecutor(max_workers=64) as pool:

            def threaded(inflight: int, count: int) -> float:
                t0 = time.perf_counter()
                for future in [pool.submit(many, n) for n in shares(count, inflight)]:
                    future.result()
                return time.perf_counter() - t0

            serve(threaded)
    finally:
        conn.close()


def interleaved(top: Callable[[], Any], bottom: Callable[[], Any], count: int, block: int = 20) -> float:
    """The time `top()` takes over the time `bottom()` takes, `count` calls each on one connection,
    one at a time, in alternating blocks (so the machine's swings hit both alike)."""
    clock, spent = time.perf_counter, {top: 0.0, bottom: 0.0}
    for start in range(0, count, block):
        for fn in (top, bottom) if start // block % 2 else (bottom, top):
            t0 = clock()
            for _ in range(min(block, count - start)):
                fn()
            spent[fn] += clock() - t0
    return spent[top] / spent[bottom]


class RawPipe:
    """Newline-delimited JSON-RPC to the echo server over its pipes, stdlib only, on the caller's thread."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin, self.stdout = self.proc.stdin, self.proc.stdout
        self.next_id = 1
        self.dumps = json.JSONEncoder(separators=(",", ":")).encode

    def write(self, method: str, params: dict[str, Any]) -> int:
        rid, self.next_id = self.next_id, self.next_id + 1
        self.stdin.write(self.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": params}).encode() + b"\n")
        return rid

    def answer(self) -> dict[str, Any]:
        line = self.stdout.readline()
        if not line:
            raise EOFError("the echo server exited")
        message: dict[str, Any] = json.loads(line)
        if "error" in message:
            raise RuntimeError(message["error"])
        return message

    def sequential(self, _inflight: int, count: int) -> float:
        t0 = time.perf_counter()
        for _ in range(count):
            rid = self.write("tools/call", {"name": "echo", "arguments": ARGS})
            self.stdin.flush()
            while self.answer().get("id") != rid:
                pass
        return time.perf_counter() - t0

    def pipelined(self, inflight: int, count: int) -> float:
        t0 = time.perf_counter()
        sent = 0
        for _ in range(min(inflight, count)):
            self.write("tools/call", {"name": "echo", "arguments": ARGS})
            sent += 1
        self.stdin.flush()
        for _ in range(count):
            self.answer()
            if sent < count:
                self.write("tools/call", {"name": "echo", "arguments": ARGS})
                self.stdin.flush()
                sent += 1
        return time.perf_counter() - t0

    def close(self) -> None:
        self.stdin.close()
        self.proc.wait(timeout=10)
        self.stdout.close()


def raw_rounds(client: str, serve: Callable[[Round], None]) -> None:
    raw = RawPipe()
    try:
        hello = {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        raw.write("initialize", hello)
        raw.stdin.flush()
        raw.answer()
        raw.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        raw.stdin.flush()
        serve(raw.sequential if client == "raw sequential" else raw.pipelined)
    finally:
        raw.close()


def sdk_rounds(serve: Callable[[Round], None]) -> None:
    async def main() -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
        async with Client(stdio_client(params), mode="legacy") as client:
            session = client.session

            async def calls(n: int) -> None:
                for _ in range(n):
                    await session.call_tool("echo", ARGS)

            loop = asyncio.get_running_loop()

            async def gathered(inflight: int, count: int) -> float:
                t0 = time.perf_counter()
                await asyncio.gather(*(calls(n) for n in shares(count, inflight)))
                return time.perf_counter() - t0

            def serve_from_thread() -> None:
                def one(inflight: int, count: int) -> float:
                    return asyncio.run_coroutine_threadsafe(gathered(inflight, count), loop).result()

                serve(one)

            await loop.run_in_executor(None, serve_from_thread)

    asyncio.run(main())


def worker(client: str, warmup: int) -> None:
    """Serve rounds on stdin/stdout: `inflight count` in, the seconds it took out."""
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing else may write on the channel

    def serve(run: Round) -> None:
        run(8, warmup)
        out.write("ready\n")
        out.flush()
        for line in sys.stdin:
            inflight, count = map(int, line.split())
            out.write(f"{run(inflight, count)}\n")
            out.flush()

    if client == "sdk":
        sdk_rounds(serve)
    elif client.startswith("raw"):
        raw_rounds(client, serve)
    else:
        notebook_rounds(client, serve)


# ----- the coordinator --------------------------------------------------------


class Worker:
    def __init__(self, label: str, client: str, warmup: int, source: Path = REPO) -> None:
        self.label = label
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))}
        argv = [sys.executable, __file__, "--worker", client, "--warmup", str(warmup)]
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.seconds: dict[int, list[float]] = {}
        if self._read() != "ready":
            raise RuntimeError(f"the {label} worker did not start")

    def _read(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.label} worker died (exit code {self.proc.wait()})")
        return line.strip()

    def round(self, inflight: int, count: int) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{inflight} {count}\n")
        self.proc.stdin.flush()
        self.seconds.setdefault(inflight, []).append(float(self._read()))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


def ratio(top: list[float], bottom: list[float]) -> tuple[float, float, float]:
    """Median, low and high over rounds of top / bottom (round by round)."""
    per = [t / b for t, b in zip(top, bottom, strict=True)]
    return statistics.median(per), min(per), max(per)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds, clients alternating (default 7)")
    parser.add_argument("--count", type=int, default=1000, help="calls per client per level per round (default 1000)")
    parser.add_argument("--inflight", default="1,8,64", help="calls in flight, comma-separated (default 1,8,64)")
    parser.add_argument("--warmup", type=int, default=200, help="untimed calls first (default 200)")
    parser.add_argument(
        "--baseline", action="append", default=[], metavar="[NAME=]PATH", help="also time mcp-notebook from this checkout"
    )
    parser.add_argument("--no-sdk", dest="sdk", action="store_false", help="leave the MCP SDK out")
    parser.add_argument("--only", help="comma-separated clients to run (request,call_tool,acall_tool,sdk,raw)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.warmup)
        return
    levels = [int(k) for k in args.inflight.split(",")]
    if args.count < 1 or args.rounds < 1 or args.warmup < 0 or min(levels) < 1:
        parser.error("--count, --rounds and --inflight must be >= 1, --warmup >= 0")

    ours = ["request", "call_tool", "acall_tool", "interleaved"]
    specs = [(c, c, REPO) for c in ours]
    for name, path in baselines(args.baseline):
        specs += [(f"{c} ({name})", c, path) for c in ours]
    if args.sdk:
        specs.append(("sdk", "sdk", REPO))
    specs += [("raw sequential", "raw sequential", REPO), ("raw pipelined", "raw pipelined", REPO)]
    if args.only:
        wanted = args.only.split(",")
        specs = [s for s in specs if any(s[1].startswith(w) for w in wanted)]
    results = report(alternate(specs, levels, args), levels, args)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


Spec = tuple[str, str, Path]  # label, client, checkout


def baselines(given: list[str]) -> list[tuple[str, Path]]:
    """The --baseline checkouts with their labels ("baseline" for one given as a bare PATH)."""
    named = []
    for value in given:
        name, _, path = value.rpartition("=") if "=" in value else ("baseline", "", value)
        named.append((name, Path(path)))
    return named


def alternate(specs: list[Spec], levels: list[int], args: argparse.Namespace) -> dict[str, dict[int, list[float]]]:
    """Every worker's seconds per level, over the rounds, who goes first flipping every round."""
    workers: list[Worker] = []
    try:
        for label, client, source in specs:
            workers.append(Worker(label, client, args.warmup, source))
        for number in range(args.rounds):
            for w in workers if number % 2 == 0 else workers[::-1]:
                for k in levels:
                    if k == 1 or not w.label.startswith("interleaved"):  # one at a time only
                        w.round(k, args.count)
    finally:
        for w in workers:
            w.close()
    return {w.label: w.seconds for w in workers}


def report(by: dict[str, dict[int, list[float]]], levels: list[int], args: argparse.Namespace) -> dict[str, Any]:
    """Print the figures; the same as a dict."""
    results: dict[str, Any] = {"rounds": args.rounds, "count": args.count, "levels": {}}
    print(f"tools/call echo, bench/echo_server.py over stdio: {args.rounds} rounds x {args.count} calls per level")
    print("calls/s: median over rounds [range]; ratios: median over rounds of the ratio of the round's times\n")
    for k in levels:
        level: dict[str, Any] = {}
        print(f"{k} in flight")
        for label, seconds in by.items():
            if k not in seconds:
                continue
            if label.startswith("interleaved"):
                mid, low, high = statistics.median(seconds[k]), min(seconds[k]), max(seconds[k])
                level[label] = {"call_tool_over_request": mid, "range": [low, high]}
                print(f"  {label:<24} call_tool / request, one connection, blocks of 20: {mid:.2f}x  [{low:.2f}-{high:.2f}]")
                continue
            rates = [args.count / s for s in seconds[k]]
            level[label] = {"calls_per_s": statistics.median(rates), "range": [min(rates), max(rates)]}
            print(f"  {label:<24} {statistics.median(rates):>9.0f} calls/s  [{min(rates):.0f}-{max(rates):.0f}]")
        tags = [""] + [f" ({name})" for name, _ in baselines(args.baseline)]
        pairs = [(f"call_tool / request (time){t}", f"call_tool{t}", f"request{t}") for t in tags]
        pairs += [(f"sdk / acall_tool (time){t}", "sdk", f"acall_tool{t}") for t in tags]
        pairs += [(f"raw pipelined / request (time){t}", "raw pipelined", f"request{t}") for t in tags]
        pairs += [(f"request / request{t} (time)", f"request{t}", "request") for t in tags[1:]]
        pairs += [(f"acall_tool / acall_tool{t} (time)", f"acall_tool{t}", "acall_tool") for t in tags[1:]]
        for name, top, bottom in pairs:
            if top in by and bottom in by:
                mid, low, high = ratio(by[top][k], by[bottom][k])
                level[name] = [mid, low, high]
                print(f"  {name:<48} {mid:.2f}x  [{low:.2f}-{high:.2f}]")
        results["levels"][k] = level
    return results


if __name__ == "__main__":
    main()
