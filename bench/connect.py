"""Connect time: the first connect in a fresh process (imports paid) and warm connects after it,
mcp-notebook against the MCP SDK and a raw stdlib handshake (the floor), over stdio and Streamable HTTP.

What: each round starts one fresh worker process per client; the worker takes the clock,
imports its client and connects (the first connect), closes, then connects and closes
`--warm` more times in the same process (warm connects: everything imported, the era
verdict cached). Only the connects are timed, from the caller, until the connection is
usable; closing is not. Workers take turns, who goes first flips every round.

The servers: over stdio `bench/echo_server.py` (a Python stdlib server; each connect starts
one), over HTTP one server-everything in streamableHttp mode on 127.0.0.1 for every client.
The clients:
- mcp-notebook: `mcp_notebook.connect(...)` with its defaults (era "auto": the first connect
  probes with `server/discover`, later ones use the verdict). `--baseline PATH` adds the
  same from another checkout.
- mcp SDK 2.3.0: `mcp.Client(..., mode="legacy")` entered (the legacy handshake; over HTTP
  with its GET stream), in one asyncio loop.
- raw (the floor): stdio, start the server and write / `readline` the handshake; HTTP,
  `http.client` POSTing `initialize` and `notifications/initialized` on one connection.

It prints per transport the medians over rounds of the first connect and of the warm
connects (ms), and each against the floor and the SDK as medians of per-round ratios.

Run: `.venv/bin/python bench/connect.py [--rounds N] [--warm N] [--baseline PATH] [--json PATH]`.
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
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # ping.py's server and raw HTTP client

REPO = Path(__file__).resolve().parents[1]
ECHO = [sys.executable, str(REPO / "bench/echo_server.py")]
HELLO = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench-raw", "version": "0"}}


# ----- the clients (each runs in a fresh worker process) ------------------------


def notebook(url: str | None, connects: int) -> list[float]:
    clock = time.perf_counter
    times = []
    for _ in range(connects):
        t0 = clock()
        import mcp_notebook

        conn = mcp_notebook.connect(url or ECHO, name="bench", **({"transport": "http"} if url else {}))
        times.append(clock() - t0)
        conn.close()
    return times


def sdk(url: str | None, connects: int) -> list[float]:
    t0 = time.perf_counter()
    import asyncio

    async def main() -> list[float]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        times, start = [], t0
        for _ in range(connects):
            transport = url or stdio_client(StdioServerParameters(command=ECHO[0], args=ECHO[1:]))
            async with contextlib.AsyncExitStack() as stack:
                await stack.enter_async_context(Client(transport, mode="legacy"))
                times.append(time.perf_counter() - start)
            start = time.perf_counter()
        return times

    return asyncio.run(main())


def raw(url: str | None, connects: int) -> list[float]:
    clock = time.perf_counter
    times = []
    for _ in range(connects):
        t0 = clock()
        if url:
            from ping import RawHttp

            client = RawHttp(url)
            client.request("initialize", HELLO)
            client.headers["MCP-Protocol-Version"] = HELLO["protocolVersion"]
            client.post({"jsonrpc": "2.0", "method": "notifications/initialized"})
            times.append(clock() - t0)
            client.conn.request("DELETE", client.path, headers=client.headers)  # end the session, as the others do
            client.conn.getresponse().read()
            client.close()
        else:
            proc = subprocess.Popen(ECHO, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO}).encode() + b"\n")
            proc.stdin.flush()
            proc.stdout.readline()
            proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            proc.stdin.flush()
            times.append(clock() - t0)
            proc.stdin.close()
            proc.wait()
            proc.stdout.close()
    return times


CLIENTS: dict[str, Callable[[str | None, int], list[float]]] = {"notebook": notebook, "sdk": sdk, "raw": raw}


# ----- the coordinator --------------------------------------------------------


def one_process(client: str, url: str | None, warm: int, source: Path) -> list[float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable, __file__, "--worker", client, "--warm", str(warm)] + (["--url", url] if url else [])
    out = subprocess.run(argv, env=env, capture_output=True, text=True, check=False, timeout=120)
    if out.returncode != 0:
        raise RuntimeError(f"the {client} worker failed:\n{out.stderr[-2000:]}")
    return [float(x) for x in json.loads(out.stdout.strip().splitlines()[-1])]


def run(url: str | None, args: argparse.Namespace) -> dict[str, Any]:
    specs = [("mcp-notebook", "notebook", REPO)]
    if args.baseline:
        specs.append(("mcp-notebook baseline", "notebook", args.baseline))
    specs += [("mcp SDK", "sdk", REPO), ("raw (floor)", "raw", REPO)]
    first: dict[str, list[float]] = {label: [] for label, _, _ in specs}
    warm: dict[str, list[float]] = {label: [] for label, _, _ in specs}
    for number in range(args.rounds):
        for label, client, source in specs if number % 2 == 0 else specs[::-1]:
            times = one_process(client, url, args.warm, source)
            first[label].append(times[0])
            warm[label].append(statistics.median(times[1:]))
    figures: dict[str, Any] = {}
    for label, _, _ in specs:
        row: dict[str, Any] = {}
        for kind, values in (("first", first), ("warm", warm)):
            row[f"{kind}_ms"] = statistics.median(values[label]) * 1e3
            for other in ("raw (floor)", "mcp SDK"):
                per = [a / b for a, b in zip(values[label], values[other], strict=True)]
                row[f"{kind}_over_{other.split()[0].lower()}"] = [statistics.median(per), min(per), max(per)]
        figures[label] = row
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="rounds (fresh processes per client), default 7")
    parser.add_argument("--warm", type=int, default=10, help="warm connects per process after the first (default 10)")
    parser.add_argument("--baseline", type=Path, metavar="PATH", help="also time mcp-notebook from this checkout")
    parser.add_argument("--transport", choices=("stdio", "http", "both"), default="both")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--worker", choices=tuple(CLIENTS), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        times = CLIENTS[args.worker](args.url, 1 + args.warm)
        print(json.dumps(times))
        return
    if args.rounds < 1 or args.warm < 1:
        parser.error("--rounds and --warm must be >= 1")
    from ping import http_server

    results: dict[str, Any] = {"rounds": args.rounds, "warm": args.warm}
    if args.transport in ("stdio", "both"):
        results["stdio"] = run(None, args)
    if args.transport in ("http", "both"):
        with http_server() as url:
            results["http"] = run(url, args)
    print(f"connect: {args.rounds} rounds, a fresh process per client each, first connect then {args.warm} warm ones")
    print("ms: median over rounds; / floor, / SDK: median of per-round ratios [range]\n")
    columns = [f"{'first ms':>9}", f"{'/ floor':>17}", f"{'/ SDK':>17}", f"{'warm ms':>9}", f"{'/ floor':>17}", f"{'/ SDK':>17}"]
    print(f"{'client':<22} {'transport':<9} " + " ".join(columns))
    for transport in ("stdio", "http"):
        for label, row in results.get(transport, {}).items():
            cells = []
            for kind in ("first", "warm"):
                cells.append(f"{row[f'{kind}_ms']:>9.1f}")
                for other in ("raw", "mcp"):
                    mid, low, high = row[f"{kind}_over_{other}"]
                    cells.append(f"{mid:>5.2f}x [{low:.2f}-{high:.2f}]")
            print(f"{label:<22} {transport:<9} " + " ".join(cells))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
