"""Ping round-trip benchmark: mcp-notebook vs. the official MCP SDK vs. a raw JSON-RPC loop.

What: over stdio, each client starts its own fresh server-everything process; over HTTP,
both clients talk to one server-everything in streamableHttp mode on 127.0.0.1. Each
completes the legacy initialize handshake, sends `--warmup` untimed pings and then
`--count` timed pings.
Every ping is timed from the caller with `time.perf_counter()`, and the median and p95 are
reported in microseconds, together with the ratios mcp-notebook / raw and mcp-notebook / SDK.

Why: mcp-notebook runs its sessions on a background thread, so every call from a notebook
cell crosses a thread boundary. The raw stdlib loop (blocking write + readline on the caller's
thread) is the floor for this server and transport; the SDK client (`mcp`, in legacy mode,
inside its own asyncio loop) is the usual alternative. The ratios show what the thread hop
and the client machinery cost on top of the server's own latency.

Run: `.venv/bin/python bench/ping.py [--count N] [--warmup N] [--json PATH]` (or `make bench`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # allow `python bench/ping.py` without PYTHONPATH
    sys.path.insert(0, str(REPO))

SERVER_JS = REPO / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
ARGV = ["node", "-r", str(REPO / "tests/peers/loopback.cjs"), str(SERVER_JS), "stdio"]
LEGACY_VERSION = "2025-11-25"


@dataclass
class Result:
    client: str
    protocol_version: str
    samples: list[float] = field(default_factory=list, repr=False)  # seconds

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples) * 1e6

    @property
    def p95_us(self) -> float:  # nearest-rank percentile
        ordered = sorted(self.samples)
        return ordered[math.ceil(0.95 * len(ordered)) - 1] * 1e6


def bench_notebook(warmup: int, count: int, target: Any = ARGV) -> Result:
    """mcp-notebook: blocking `conn.ping()` from the caller's thread."""
    import mcp_notebook

    conn = mcp_notebook.connect(target, name="bench", **({} if isinstance(target, str) else {"cwd": REPO}))
    try:
        result = Result("mcp-notebook", conn.health.protocol_version or "?")
        for _ in range(warmup):
            conn.ping()
        clock = time.perf_counter
        for _ in range(count):
            t0 = clock()
            conn.ping()
            result.samples.append(clock() - t0)
        return result
    finally:
        conn.close()


async def _bench_sdk(warmup: int, count: int, url: str | None) -> Result:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=ARGV[0], args=ARGV[1:], cwd=REPO)
    with open(os.devnull, "w") as errlog:  # server-everything logs a banner on stderr
        # `Client(params)` would spawn with errlog=sys.stderr; passing the transport lets us mute it.
        async with Client(url or stdio_client(params, errlog=errlog), mode="legacy") as client:
            # `Client.send_ping` is marked deprecated (ping is gone in 2026-07-28) and warns on
            # every call; `ClientSession.send_ping` is the same request without the warning.
            session = client.session
            result = Result("mcp SDK (legacy)", client.protocol_version)
            for _ in range(warmup):
                await session.send_ping()
            clock = time.perf_counter
            for _ in range(count):
                t0 = clock()
                await session.send_ping()
                result.samples.append(clock() - t0)
            return result


def bench_sdk(warmup: int, count: int, url: str | None = None) -> Result:
    """Official SDK `mcp.Client(mode="legacy")`: `await session.send_ping()` in its own loop."""
    return asyncio.run(_bench_sdk(warmup, count, url))


class RawClient:
    """Newline-delimited JSON-RPC over a child's pipes, stdlib only, on the caller's thread."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.stdin: BinaryIO = self.proc.stdin
        self.stdout: BinaryIO = self.proc.stdout
        self.ids = itertools.count(1)

    def send(self, message: dict[str, Any]) -> None:
        self.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        rid = next(self.ids)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            line = self.stdout.readline()
            if not line:
                raise EOFError(f"server exited (code {self.proc.poll()}) while awaiting {method}")
            msg = json.loads(line)
            if "method" in msg:  # a server notification or request, not our response
                if "id" in msg:
                    self._answer(msg)
                continue
            if msg.get("id") == rid:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {msg['error']}")
                return msg.get("result")

    def _answer(self, msg: dict[str, Any]) -> None:
        if msg["method"] == "ping":
            self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
        else:
            error = {"code": -32601, "message": f"method not found: {msg['method']}"}
            self.send({"jsonrpc": "2.0", "id": msg["id"], "error": error})

    def close(self) -> None:
        self.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stdout.close()


def bench_raw(warmup: int, count: int) -> Result:
    """Stdlib floor: write the ping line, flush, readline until the matching response."""
    raw = RawClient(ARGV)
    try:
        init = raw.request(
            "initialize",
            {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "bench-raw", "version": "0"}},
        )
        raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        result = Result("raw stdlib loop", init["protocolVersion"])
        for _ in range(warmup):
            raw.request("ping")
        clock = time.perf_counter
        for _ in range(count):
            t0 = clock()
            raw.request("ping")
            result.samples.append(clock() - t0)
        return result
    finally:
        raw.close()


@contextlib.contextmanager
def http_server() -> Iterator[str]:
    """server-everything in streamableHttp mode on a free 127.0.0.1 port, for the HTTP rows."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    argv = [*ARGV[:-1], "streamableHttp"]
    proc = subprocess.Popen(
        argv, cwd=REPO, env={**os.environ, "PORT": str(port)}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError("server-everything (streamableHttp) did not start") from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait()


def ratios(ours: Result, other: Result) -> dict[str, float]:
    return {"median": ours.median_us / other.median_us, "p95": ours.p95_us / other.p95_us}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=2000, help="timed pings per client (default 2000)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed pings first (default 50)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.count < 1 or args.warmup < 0:
        parser.error("--count must be >= 1 and --warmup >= 0")

    results = [bench(args.warmup, args.count) for bench in (bench_notebook, bench_sdk, bench_raw)]
    ours, sdk, raw = results
    with http_server() as url:
        http_results = [bench_notebook(args.warmup, args.count, url), bench_sdk(args.warmup, args.count, url)]
    http_ours, http_sdk = http_results

    print(f"ping RTT, server-everything, {args.count} pings after {args.warmup} warm-up\n")
    print(f"{'client':<18} {'transport':<10} {'protocol':<11} {'median µs':>10} {'p95 µs':>10}")
    for transport, rows in (("stdio", results), ("http", http_results)):
        for r in rows:
            print(f"{r.client:<18} {transport:<10} {r.protocol_version:<11} {r.median_us:>10.1f} {r.p95_us:>10.1f}")
    vs_raw, vs_sdk, http_vs_sdk = ratios(ours, raw), ratios(ours, sdk), ratios(http_ours, http_sdk)
    print(f"\nstdio: mcp-notebook / raw: median {vs_raw['median']:.2f}x  p95 {vs_raw['p95']:.2f}x")
    print(f"stdio: mcp-notebook / SDK: median {vs_sdk['median']:.2f}x  p95 {vs_sdk['p95']:.2f}x")
    print(f"http:  mcp-notebook / SDK: median {http_vs_sdk['median']:.2f}x  p95 {http_vs_sdk['p95']:.2f}x")

    if args.json:
        figures = {
            "count": args.count,
            "warmup": args.warmup,
            "python": sys.version.split()[0],
            "stdio": {
                r.client: {"protocol_version": r.protocol_version, "median_us": r.median_us, "p95_us": r.p95_us} for r in results
            },
            "http": {
                r.client: {"protocol_version": r.protocol_version, "median_us": r.median_us, "p95_us": r.p95_us}
                for r in http_results
            },
            "ratios": {
                "stdio_notebook_over_raw": vs_raw,
                "stdio_notebook_over_sdk": vs_sdk,
                "http_notebook_over_sdk": http_vs_sdk,
            },
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
