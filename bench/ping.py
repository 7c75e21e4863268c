"""Ping round-trip benchmark: mcp-notebook against the floor (a raw stdlib loop) and the MCP SDK.

What: every client runs in a worker process of its own and holds one connection open;
the workers take turns, in `--rounds` rounds of `--count` pings each, so that machine
noise hits every client alike. Over stdio each worker starts its own server-everything;
over HTTP they all talk to one server-everything in streamableHttp mode on 127.0.0.1.
Each completes the legacy handshake (`initialize`, `notifications/initialized`) and sends
`--warmup` untimed pings first. Every ping is timed from the caller with
`time.perf_counter()`.

The clients:
- mcp-notebook: blocking `conn.ping()` from the caller's thread (the session lives on its
  background thread). `--baseline PATH` adds a second mcp-notebook row imported from
  another checkout (say, main), to compare before and after in the same run.
- raw (the floor): stdio, a blocking write of the ping line and `readline` until the
  answer; HTTP, `http.client` on one keep-alive connection with TCP_NODELAY, POSTing the
  same initialize / notifications/initialized / ping sequence (with the session id).
- mcp SDK: `mcp.Client(mode="legacy")`, `await session.send_ping()` in its own loop
  (`--no-sdk` leaves it out).

It prints, per transport, each client's median and p95 in µs, and ours / floor as the
median of the per-round ratios of medians (and its range over rounds).

Run: `.venv/bin/python bench/ping.py [--rounds N] [--count N] [--baseline PATH] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import itertools
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[1]
SERVER_JS = REPO / "tests/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
ARGV = ["node", "-r", str(REPO / "tests/peers/loopback.cjs"), str(SERVER_JS), "stdio"]
LEGACY_VERSION = "2025-11-25"
INIT_PARAMS = {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "bench-raw", "version": "0"}}

Pinger = Callable[[], Any]


# ----- the clients (each runs in a worker process) -----------------------------


@contextlib.contextmanager
def notebook_client(url: str | None) -> Iterator[Pinger]:
    import mcp_notebook

    conn = mcp_notebook.connect(url or ARGV, name="bench", **({"transport": "http"} if url else {"cwd": REPO}))
    conn.keepalive(enabled=False)  # only the pings we time
    try:
        yield conn.ping
    finally:
        conn.close()


class RawStdio:
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
                    self.send({"jsonrpc": "2.0", "id": msg["id"], "result": {}})
                continue
            if msg.get("id") == rid:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {msg['error']}")
                return msg.get("result")

    def close(self) -> None:
        self.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.stdout.close()


class NoDelayConnection(http.client.HTTPConnection):
    def connect(self) -> None:
        super().connect()
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class RawHttp:
    """Streamable HTTP with `http.client`: one keep-alive connection, TCP_NODELAY, no listening stream.

    A connection the server closed while this worker waited its turn (Node's keep-alive
    timeout is 5 s) is opened again, as any keep-alive client does."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.conn = NoDelayConnection(parts.hostname or "127.0.0.1", parts.port or 80)
        self.ids = itertools.count(1)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

    def post(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        body = json.dumps(message, separators=(",", ":")).encode()
        try:
            self.conn.request("POST", self.path, body, self.headers)
            response = self.conn.getresponse()
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            self.conn.close()
            self.conn.request("POST", self.path, body, self.headers)
            response = self.conn.getresponse()
        body = response.read()
        session_id = response.getheader("mcp-session-id")
        if session_id:
            self.headers["Mcp-Session-Id"] = session_id
        if response.status >= 400:
            raise RuntimeError(f"HTTP {response.status}: {body[:200]!r}")
        if not body:
            return []
        if (response.getheader("content-type") or "").startswith("text/event-stream"):
            return [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:") and line[5:].strip()]
        return [json.loads(body)]

    def request(self, method: str, params: dict[str, Any] | None = None) -> Any:
        rid = next(self.ids)
        for msg in self.post({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}}):
            if msg.get("id") == rid and "method" not in msg:
                return msg.get("result")
        raise RuntimeError(f"no answer to {method}")

    def close(self) -> None:
        self.conn.close()


@contextlib.contextmanager
def raw_client(url: str | None) -> Iterator[Pinger]:
    raw: RawStdio | RawHttp = RawHttp(url) if url else RawStdio(ARGV)
    try:
        raw.request("initialize", INIT_PARAMS)
        if isinstance(raw, RawHttp):
            raw.headers["MCP-Protocol-Version"] = LEGACY_VERSION
            raw.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        else:
            raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield lambda: raw.request("ping")
    finally:
        raw.close()


def sdk_rounds(url: str | None, commands: Iterator[int], reply: Callable[[Any], None]) -> None:
    """The SDK in its own loop: each command is a round of that many timed pings (0: warm-up)."""

    async def main() -> None:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=ARGV[0], args=ARGV[1:], cwd=REPO)
        with open(os.devnull, "w") as errlog:  # server-everything logs a banner on stderr
            async with Client(url or stdio_client(params, errlog=errlog), mode="legacy") as client:
                # `Client.send_ping` warns on every call (ping is gone in 2026-07-28);
                # `ClientSession.send_ping` is the same request without the warning.
                session = client.session
                reply({"protocol_version": client.protocol_version})
                loop = asyncio.get_running_loop()
                while (count := await loop.run_in_executor(None, next, commands, -1)) >= 0:
                    clock, samples = time.perf_counter, []
                    for _ in range(count):
                        t0 = clock()
                        await session.send_ping()
                        samples.append(clock() - t0)
                    reply(samples)

    asyncio.run(main())


def worker(client: str, url: str | None, warmup: int) -> None:
    """Serve rounds on stdin/stdout: a line with a count in, a JSON list of seconds out."""
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing else may write on the channel

    def reply(value: Any) -> None:
        out.write(json.dumps(value) + "\n")
        out.flush()

    commands = (int(line) for line in sys.stdin)
    if client == "sdk":
        sdk_rounds(url, itertools.chain([warmup], commands), reply)
        return
    with (notebook_client if client == "notebook" else raw_client)(url) as ping:
        for _ in range(warmup):
            ping()
        reply({"protocol_version": LEGACY_VERSION})
        clock = time.perf_counter
        for count in commands:
            samples = []
            for _ in range(count):
                t0 = clock()
                ping()
                samples.append(clock() - t0)
            reply(samples)


# ----- the coordinator --------------------------------------------------------


class Worker:
    def __init__(self, label: str, client: str, url: str | None, warmup: int, source: Path = REPO) -> None:
        self.label = label
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))}
        argv = [sys.executable, __file__, "--worker", client, "--warmup", str(warmup)] + (["--url", url] if url else [])
        self.proc = subprocess.Popen(argv, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.samples: list[float] = []
        self.round_medians: list[float] = []
        self.info = self._read()
        if client == "sdk":  # its first answer is the warm-up round
            self._read()

    def _read(self) -> Any:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.label} worker died (exit code {self.proc.wait()})")
        return json.loads(line)

    def round(self, count: int) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{count}\n")
        self.proc.stdin.flush()
        samples = self._read()
        self.samples += samples
        self.round_medians.append(statistics.median(samples))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)

    @property
    def median_us(self) -> float:
        return statistics.median(self.samples) * 1e6

    @property
    def p95_us(self) -> float:  # nearest-rank percentile
        ordered = sorted(self.samples)
        return ordered[math.ceil(0.95 * len(ordered)) - 1] * 1e6


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


def run(transport: str, url: str | None, args: argparse.Namespace) -> dict[str, Any]:
    """Alternate the workers of one transport for the rounds; their figures and the ratios."""
    specs = [("mcp-notebook", "notebook", REPO)]
    if args.baseline:
        specs.append(("baseline", "notebook", args.baseline))
    specs.append(("raw (floor)", "raw", REPO))
    if args.sdk:
        specs.append(("mcp SDK", "sdk", REPO))
    workers: list[Worker] = []
    try:
        for label, client, source in specs:
            workers.append(Worker(label, client, url, args.warmup, source))
        for number in range(args.rounds):
            order = workers if number % 2 == 0 else workers[::-1]  # who goes first changes too
            for w in order:
                w.round(args.count)
    finally:
        for w in workers:
            w.close()
    floor = next(w for w in workers if w.label == "raw (floor)")
    figures: dict[str, Any] = {"clients": {}}
    for w in workers:
        per_round = [ours / raw for ours, raw in zip(w.round_medians, floor.round_medians, strict=True)]
        figures["clients"][w.label] = {
            "protocol_version": w.info.get("protocol_version"),
            "median_us": w.median_us,
            "p95_us": w.p95_us,
            "over_floor": statistics.median(per_round),
            "over_floor_range": [min(per_round), max(per_round)],
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="rounds per transport, clients alternating (default 10)")
    parser.add_argument("--count", type=int, default=500, help="timed pings per client per round (default 500)")
    parser.add_argument("--warmup", type=int, default=100, help="untimed pings first (default 100)")
    parser.add_argument("--baseline", type=Path, metavar="PATH", help="also time mcp-notebook from this checkout")
    parser.add_argument("--no-sdk", dest="sdk", action="store_false", help="leave the MCP SDK out")
    parser.add_argument("--transport", choices=("stdio", "http", "both"), default="both")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--worker", choices=("notebook", "raw", "sdk"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.url, args.warmup)
        return
    if args.count < 1 or args.rounds < 1 or args.warmup < 0:
        parser.error("--count and --rounds must be >= 1, --warmup >= 0")

    results: dict[str, Any] = {"rounds": args.rounds, "count": args.count, "warmup": args.warmup}
    if args.transport in ("stdio", "both"):
        results["stdio"] = run("stdio", None, args)
    if args.transport in ("http", "both"):
        with http_server() as url:
            results["http"] = run("http", url, args)

    print(f"ping RTT, server-everything: {args.rounds} rounds x {args.count} pings per client, after {args.warmup} warm-up")
    print("ours / floor: median over rounds of the ratio of the round's medians [its range]\n")
    print(f"{'client':<14} {'transport':<9} {'protocol':<11} {'median µs':>10} {'p95 µs':>10} {'/ floor':>8}  range")
    for transport in ("stdio", "http"):
        for label, row in results.get(transport, {}).get("clients", {}).items():
            low, high = row["over_floor_range"]
            print(
                f"{label:<14} {transport:<9} {row['protocol_version'] or '?':<11} {row['median_us']:>10.1f} "
                f"{row['p95_us']:>10.1f} {row['over_floor']:>7.2f}x  {low:.2f}-{high:.2f}"
            )
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
