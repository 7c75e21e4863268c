"""What the tap costs a client: round trips direct and through the tap, and the relay's memory over a long session.

What: our own client (`mcp_notebook.connect`) in worker processes, each holding one
connection, against the demo server (legacy era) and, with `--everything`, server-everything:
one worker straight to the server and two through the tap, taking turns in `--rounds` rounds
(the order rotates every round), `--count` pings and `--count` `tools/call echo` calls each
per round, timed from the caller with `time.perf_counter()`. The two tapped shapes:
- `tap`: the client is another process than the notebook holding the tap, as a tapped client
  is (Claude Code, an SDK client): over stdio it runs `python -m mcp_notebook.tap --name NAME
  -- ...` (the relay) with this process watching NAME (`mcp_notebook.tap(NAME)`, as a notebook
  would); over HTTP it talks to the reverse proxy of `mcp_notebook.tap(NAME, upstream=URL)`
  running here. The issue's bound (at most 1.3x) is about this one.
- `in-process`: the tap lives in the client's own process, as when lesson 10 taps a client
  running in the kernel: the worker opens `mcp_notebook.tap(...)` itself, so the proxy (HTTP)
  or the watcher of the relay's records (stdio) shares the process, its runtime and its GIL
  with the client.
Over stdio each worker starts its own server; over HTTP all talk to one server. `x / direct`
is the median over rounds of the ratio of the round's medians, with its range.

Memory: `--pings N` (default 100,000) pings from a stdlib client straight through the relay,
the relay's resident set size (`VmRSS` in /proc) sampled every tenth of the run, with this
process watching; bounded means the last samples stay near the first ones.

Run: `.venv/bin/python bench/tap.py [--rounds N] [--count N] [--transport stdio|http|both]
[--everything] [--pings N] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from ping import ARGV as EVERYTHING_ARGV
from ping import RawStdio, http_server

REPO = Path(__file__).resolve().parents[1]
DEMO_ARGV = [sys.executable, "-m", "mcp_notebook.demo_server", "--transport", "stdio", "--era", "legacy"]
TAP_NAME = "bench-tap"


def relayed(argv: list[str], name: str = TAP_NAME) -> list[str]:
    return [sys.executable, "-m", "mcp_notebook.tap", "--name", name, "--", *argv]


# ----- the workers (each in a process of its own) --------------------------------


def worker(target: str, echo_args: dict[str, Any], warmup: int) -> None:
    """Serve rounds on stdin/stdout: a line with a count in, {"ping": [s...], "call": [s...]} out."""
    import mcp_notebook

    out = sys.stdout
    sys.stdout = sys.stderr  # nothing else may write on the channel
    spec = json.loads(target)
    with contextlib.ExitStack() as stack:
        where = spec["url"] or spec["argv"]
        if spec.get("tap"):  # the in-process shape: this process holds the tap its client goes through
            name = spec["tap"]
            held = stack.enter_context(mcp_notebook.tap(name, upstream=spec["url"]))
            where = held.url or relayed(spec["argv"], name)
        options: dict[str, Any] = {"transport": "http"} if spec["url"] else {"cwd": REPO}
        serve(mcp_notebook.connect(where, name="bench", era="legacy", **options), echo_args, warmup, out)


def serve(conn: Any, echo_args: dict[str, Any], warmup: int, out: Any) -> None:
    conn.keepalive(enabled=False)  # only the pings we time
    try:
        ops: dict[str, Callable[[], Any]] = {"ping": conn.ping, "call": lambda: conn.request("tools/call", echo_args)}
        for op in ops.values():
            for _ in range(warmup):
                op()
        out.write(json.dumps({"protocol_version": conn.protocol_version}) + "\n")
        out.flush()
        clock = time.perf_counter
        for line in sys.stdin:
            count = int(line)
            samples: dict[str, list[float]] = {}
            for label, op in ops.items():
                times = samples[label] = []
                for _ in range(count):
                    t0 = clock()
                    op()
                    times.append(clock() - t0)
            out.write(json.dumps(samples) + "\n")
            out.flush()
    finally:
        conn.close()


class Worker:
    def __init__(
        self, label: str, argv: list[str] | None, url: str | None, echo_args: dict[str, Any], warmup: int, tap: str | None = None
    ) -> None:
        self.label = label
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
        spec = json.dumps({"argv": argv, "url": url, "tap": tap})
        command = [sys.executable, __file__, "--worker", spec, "--echo", json.dumps(echo_args), "--warmup", str(warmup)]
        self.proc = subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.medians: dict[str, list[float]] = {"ping": [], "call": []}
        self.samples: dict[str, list[float]] = {"ping": [], "call": []}
        self.info = self._read()

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
        for op, samples in self._read().items():
            self.samples[op] += samples
            self.medians[op].append(statistics.median(samples))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


SHAPES = ("tap", "in-process")


def compare(server: str, transport: str, args: argparse.Namespace) -> dict[str, Any]:
    """Direct against both tapped shapes, in rounds of rotating order; medians and ratios per operation."""
    import mcp_notebook

    echo_args = {"name": "echo", "arguments": {"text" if server == "demo" else "message": "x"}}
    inner = f"{TAP_NAME}-in"
    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            argv = DEMO_ARGV if server == "demo" else EVERYTHING_ARGV
            watching = stack.enter_context(mcp_notebook.tap(TAP_NAME))
            direct, tapped, in_process = (argv, None), (relayed(argv), None), (argv, None)
        else:
            url = stack.enter_context(demo_http() if server == "demo" else http_server())
            watching = stack.enter_context(mcp_notebook.tap(TAP_NAME, upstream=url))
            direct, tapped, in_process = (None, url), (None, watching.url), (None, url)
        workers = [
            Worker("direct", *direct, echo_args, args.warmup),
            Worker("tap", *tapped, echo_args, args.warmup),
            Worker("in-process", *in_process, echo_args, args.warmup, tap=inner),
        ]
        try:
            for number in range(args.rounds):
                shift = number % len(workers)
                order = workers[shift:] + workers[:shift]
                for w in order if number % 2 == 0 else order[::-1]:
                    w.round(args.count)
        finally:
            for w in workers:
                w.close()
        seen = watching.frames
    base = workers[0]
    figures: dict[str, Any] = {"frames_seen_by_the_tap": seen, "protocol_version": workers[1].info["protocol_version"]}
    for op in ("ping", "call"):
        row: dict[str, Any] = {"direct_median_us": statistics.median(base.samples[op]) * 1e6}
        figures[op] = row
        for w in workers[1:]:
            ratios = [t / d for t, d in zip(w.medians[op], base.medians[op], strict=True)]
            row[w.label] = {
                "median_us": statistics.median(w.samples[op]) * 1e6,
                "over_direct": statistics.median(ratios),
                "range": [min(ratios), max(ratios)],
            }
    return figures


@contextlib.contextmanager
def demo_http() -> Iterator[str]:
    from mcp_notebook import demo_server

    process, url = demo_server.start_http("legacy")
    with process:
        yield url


# ----- memory of a long relayed session ------------------------------------------


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def relay_memory(pings: int) -> dict[str, Any]:
    """The relay's RSS (KiB) every tenth of `pings` raw pings through it, this process watching."""
    import mcp_notebook

    step = max(1, pings // 10)
    with mcp_notebook.tap(TAP_NAME) as watching:
        raw = RawStdio(relayed(DEMO_ARGV))
        try:
            raw.request(
                "initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "b", "version": "0"}}
            )
            raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            samples, started = [rss_kib(raw.proc.pid)], time.perf_counter()
            for done in range(1, pings + 1):
                raw.request("ping")
                if done % step == 0:
                    samples.append(rss_kib(raw.proc.pid))
            seconds = time.perf_counter() - started
        finally:
            raw.close()
        frames = watching.frames
    return {"pings": pings, "seconds": seconds, "rss_kib": samples, "frames_seen_by_the_tap": frames}


# ----- the coordinator ------------------------------------------------------------


def _ratio(figure: dict[str, Any]) -> str:
    low, high = figure["range"]
    return f"{figure['over_direct']:.2f}x [{low:.2f}-{high:.2f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=10, help="rounds per case, direct and tap alternating (default 10)")
    parser.add_argument("--count", type=int, default=300, help="timed pings and calls per worker per round (default 300)")
    parser.add_argument("--warmup", type=int, default=50, help="untimed pings and calls first (default 50)")
    parser.add_argument("--transport", choices=("stdio", "http", "both"), default="both")
    parser.add_argument("--everything", action="store_true", help="also against server-everything")
    parser.add_argument("--pings", type=int, default=100_000, help="pings through the relay for its memory (0: skip)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--echo", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, json.loads(args.echo), args.warmup)
        return
    servers = ["demo", "everything"] if args.everything else ["demo"]
    transports = ["stdio", "http"] if args.transport == "both" else [args.transport]
    results: dict[str, Any] = {"rounds": args.rounds, "count": args.count, "cases": {}}
    print(f"round trips direct and through the tap: {args.rounds} rounds x {args.count} per worker, after {args.warmup} warm-up")
    print("tap: the client in another process than the tap (the bound's case); in-process: the tap in the client's process")
    print("x / direct: median over rounds of the ratio of the round's medians [its range]\n")
    head = f"{'direct µs':>10} {'tap µs':>8} {'tap/direct':>18} {'in-proc µs':>10} {'in-proc/direct':>18}"
    print(f"{'server':<11} {'transport':<9} {'op':<5} {head}")
    for server in servers:
        for transport in transports:
            case = results["cases"][f"{server}/{transport}"] = compare(server, transport, args)
            for op in ("ping", "call"):
                row = case[op]
                cells = [f"{row[s]['median_us']:>{w}.1f} {_ratio(row[s]):>18}" for s, w in zip(SHAPES, (8, 10), strict=True)]
                print(f"{server:<11} {transport:<9} {op:<5} {row['direct_median_us']:>10.1f} {cells[0]} {cells[1]}")
    if args.pings:
        memory = results["relay_memory"] = relay_memory(args.pings)
        rss = memory["rss_kib"]
        seen = memory["frames_seen_by_the_tap"]
        print(f"\nrelay RSS over {memory['pings']} pings ({memory['seconds']:.1f} s, the tap saw {seen} frames):")
        print("  KiB: " + " ".join(str(k) for k in rss) + f"  (last / first after start: {rss[-1] / rss[1]:.2f}x)")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
