"""Load tests: calls/s at 1, 8 and 64 sessions over stdio and Streamable HTTP against the demo
server, ours in the kernel and on a 2-worker Dask LocalCluster, against mcp-quality's load test,
in the same run.

What: the workload is `tools/call echo` on `python -m mcp_notebook.demo_server` (legacy era);
over stdio each session is a server process of its own, over HTTP every session talks to one
demo server on 127.0.0.1. For each transport and session count, the loaders take turns:
- `kernel`: `mcp_notebook.load(..., sessions=N, duration=D)` in this process;
- `dask`: the same on a LocalCluster of 2 worker processes (started once for the run, its
  startup not timed; each load's session opening on the workers is, as the kernel's is not);
- `mcp-quality`: mcp-quality 0.7.0's own load driver (`mcp_quality.perf.load.run_load`, what
  `mcp-quality run --performance --concurrency N` runs) on its own client factory: N calls at
  once per stage, each opening a connection (over stdio: a server process), calling, closing;
  `--quality-stages` stages (one over stdio, where each call costs a process).
Calls/s for ours is the report's (calls over the span from the first call's start to the
last one's end); for mcp-quality it is its calls over its run's wall time (connects included:
that is its model of a call). The ratios are ours over mcp-quality, and dask over kernel.

The machine is small and shared (2 cores): 64 stdio sessions are 64 processes on 2 cores, so
the default duration is short; read the ratios, not the absolute figures.

Run: `.venv/bin/python bench/load.py [--sessions 1,8,64] [--duration 2] [--transports stdio,http]
[--no-dask] [--no-quality] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any

import mcp_notebook
from mcp_notebook.demo_server import start_http

DEMO = [sys.executable, "-m", "mcp_notebook.demo_server"]
ECHO = {"tool": "echo", "arguments": {"text": "load"}}


def ours(target: Any, sessions: int, duration: float, cluster: Any = None) -> float:
    report = mcp_notebook.load(target, ECHO, sessions=sessions, duration=duration, cluster=cluster, live=False, era="legacy")
    if report.errors:
        print(f"  ({report.errors} errors: {report.calls[-1].error})", file=sys.stderr)
    return report.rate


def quality(target: str, transport: str, sessions: int, stages: int) -> float:
    from mcp_quality.config import ProbeConfig
    from mcp_quality.connect.transport import connect
    from mcp_quality.perf.load import ConcurrencyCurve, run_load

    config = ProbeConfig(target=target, transport=transport)

    async def factory() -> Any:
        client, _surface = await connect(config)
        return client

    curve = ConcurrencyCurve(ramp_to=sessions, ramp_steps=1, hold_iterations=stages - 1)
    began = time.perf_counter()
    result = asyncio.run(run_load(factory, ECHO["tool"], dict(ECHO["arguments"]), curve))
    seconds = time.perf_counter() - began
    if result.errors:
        print(f"  (mcp-quality: {result.errors} of {result.total} calls failed)", file=sys.stderr)
    return result.total / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", default="1,8,64")
    parser.add_argument("--duration", type=float, default=2.0, help="seconds each of our loads runs (default 2)")
    parser.add_argument("--transports", default="stdio,http")
    parser.add_argument("--quality-stages", type=int, default=3, help="mcp-quality's stages over HTTP (stdio: 1)")
    parser.add_argument("--no-dask", action="store_true")
    parser.add_argument("--no-quality", action="store_true")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    levels = [int(n) for n in args.sessions.split(",")]
    client = None
    if not args.no_dask:
        import distributed

        cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=":0")
        client = distributed.Client(cluster)
    results: list[dict[str, Any]] = []
    try:
        for transport in args.transports.split(","):
            server = None
            if transport == "http":
                server, target = start_http()
                quality_target, quality_transport = target, "streamable-http"
            else:
                target, quality_target, quality_transport = DEMO, " ".join(DEMO), "stdio"
            try:
                for n in levels:
                    row: dict[str, Any] = {"transport": transport, "sessions": n}
                    row["kernel"] = ours(target, n, args.duration)
                    if client is not None:
                        row["dask"] = ours(target, n, args.duration, client)
                    if not args.no_quality:
                        stages = args.quality_stages if transport == "http" else 1
                        row["mcp-quality"] = quality(quality_target, quality_transport, n, stages)
                    results.append(row)
                    print(_line(row), flush=True)
            finally:
                if server is not None:
                    server.stop()
    finally:
        if client is not None:
            client.close()
            cluster.close()
    if args.json:
        with open(args.json, "w") as out:
            json.dump(results, out, indent=2)


def _line(row: dict[str, Any]) -> str:
    parts = [f"{row['transport']:5} {row['sessions']:3} sessions:", f"kernel {row['kernel']:8,.0f}/s"]
    if "dask" in row:
        parts.append(f"dask {row['dask']:8,.0f}/s (dask/kernel {row['dask'] / row['kernel']:.2f})")
    if "mcp-quality" in row:
        q = row["mcp-quality"]
        parts.append(f"mcp-quality {q:8,.1f}/s (kernel/mcp-quality {row['kernel'] / q:,.1f}")
        parts[-1] += f", dask/mcp-quality {row['dask'] / q:,.1f})" if "dask" in row else ")"
    return "  ".join(parts)


if __name__ == "__main__":
    main()
