"""Large results: time and memory of one big `tools/call` result, against the frame's size.

What: a scripted stdlib server (`tests/servers/raw_server.py`, scenario `large`) answers
with a result it encoded once: one text block of 1, 10 or 50 MB, or 1,000,000 small text
blocks (about 31 MB on the wire). Every measured call is made by a fresh worker process
(so the memory it reports is its own, and no allocator cache of an earlier call hides a
peak) with a server of its own: it shakes hands, has the server encode the result ahead
(a small call, untimed), collects garbage, hands freed memory back (`malloc_trim`), resets
its peak (`/proc/self/clear_refs`), then makes the call. In `--rounds` rounds each client
makes one call per shape, clients in turn (who goes first flips every round). Per call:

- the time from the call to the result in hand, as MB/s of the frame's bytes;
- peak: the highest RSS during the call (`VmHWM`) over the RSS before it;
- held: RSS over the start while the result is still held (what the value costs, plus
  whatever the client kept besides);
- retained: RSS over the start after the result is dropped and garbage collected, with no
  trim by the bench (what the client hands back by itself); for mcp-notebook, once its
  frame checker has checked the frame (it holds each frame until then).

Memory is given as multiples of the frame's bytes (what the raw worker read), time as the
ratio to the raw loop's median in the same round.

The clients:
- mcp-notebook: blocking `conn.call_tool("large", ...)` (the session on its thread; the
  trace on, as by default). `--baseline PATH` adds mcp-notebook imported from another
  checkout (say, a `git archive` of main), for before and after in the same run.
- raw (the floor): `subprocess` pipes, a blocking `readline` and `json.loads`.
- mcp SDK 2.3.0: `mcp.Client(stdio_client(...), mode="legacy")`, `await client.call_tool(...)`
  (`--no-sdk` leaves it out).

`--pongs` measures instead how long a server ping sent right after a 1,000,000-item
result waits for its pong (the server times it), for a blocking and an awaited call:
the frames behind a big one wait while it is parsed.

Run: `.venv/bin/python bench/large.py [--rounds N] [--baseline PATH] [--pongs] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import gc
import itertools
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
SERVER = [sys.executable, str(REPO / "tests/servers/raw_server.py"), "--tools", "large"]
LEGACY_VERSION = "2025-11-25"
INIT_PARAMS = {"protocolVersion": LEGACY_VERSION, "capabilities": {}, "clientInfo": {"name": "bench-raw", "version": "0"}}
MB = 1_000_000
SHAPES = {  # label -> the scenario's arguments
    "1 MB text": {"items": 1, "size": 1 * MB},
    "10 MB text": {"items": 1, "size": 10 * MB},
    "50 MB text": {"items": 1, "size": 50 * MB},
    "1M items": {"items": 1_000_000, "size": 0},
}

# ----- memory of this process ----------------------------------------------------


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key):
                return int(line.split()[1]) / 1024
    raise RuntimeError(f"no {key} in /proc/self/status")


def _settle() -> None:
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def _start() -> float:
    """Collect, trim, reset the peak (`/proc/self/clear_refs` "5": VmHWM back to VmRSS); the RSS now."""
    _settle()
    start = _status_mb("VmRSS")
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    return start


def _after(start: float, seconds: float) -> dict[str, float]:
    """With the result still held: time, peak and held RSS over `start`."""
    return {"seconds": seconds, "peak": _status_mb("VmHWM") - start, "held": _status_mb("VmRSS") - start}


def _dropped(start: float, figures: dict[str, float]) -> dict[str, float]:
    """After the result was dropped: what the process still holds, with no trim of ours."""
    gc.collect()
    return {**figures, "retained": _status_mb("VmRSS") - start}


# ----- the clients (each in a worker process, for one call) ---------------------


def notebook_call(arguments: dict[str, Any]) -> dict[str, float]:
    import mcp_notebook

    with mcp_notebook.connect(SERVER, name="bench", era="legacy") as conn:
        conn.keepalive(enabled=False)
        conn.call_tool("large", {**arguments, "prepare": True})
        getattr(conn, "violations", None)  # the frame checker's one-time set-up (the schema) done first
        start = _start()
        t0 = time.perf_counter()
        result = conn.call_tool("large", arguments, timeout=300)
        figures = _after(start, time.perf_counter() - t0)
        del result
        getattr(conn, "violations", None)  # the frame checker (where there is one) holds a frame until checked
        return _dropped(start, figures)


def raw_call(arguments: dict[str, Any]) -> dict[str, float]:
    proc = subprocess.Popen(SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout, ids = proc.stdin, proc.stdout, itertools.count(1)

    def send(message: dict[str, Any]) -> None:
        stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        stdin.flush()

    def request(method: str, params: dict[str, Any]) -> tuple[Any, int]:
        request_id = next(ids)
        send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        while True:
            line = stdout.readline()
            if not line:
                raise EOFError(f"the server exited while {method} was awaited")
            size, message = len(line), json.loads(line)
            del line
            if message.get("id") == request_id and "method" not in message:
                return message["result"], size

    try:
        request("initialize", INIT_PARAMS)
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        request("tools/call", {"name": "large", "arguments": {**arguments, "prepare": True}})
        start = _start()
        t0 = time.perf_counter()
        result, size = request("tools/call", {"name": "large", "arguments": arguments})
        figures = _after(start, time.perf_counter() - t0)
        del result
        return {**_dropped(start, figures), "frame": size}
    finally:
        stdin.close()
        proc.wait(timeout=30)
        stdout.close()


def sdk_call(arguments: dict[str, Any]) -> dict[str, float]:
    async def main() -> dict[str, float]:
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=SERVER[0], args=SERVER[1:])
        async with Client(stdio_client(params), mode="legacy") as client:
            await client.call_tool("large", {**arguments, "prepare": True})
            start = _start()
            t0 = time.perf_counter()
            result = await client.call_tool("large", arguments)
            figures = _after(start, time.perf_counter() - t0)
            del result
            return _dropped(start, figures)

    return asyncio.run(main())


def notebook_pongs(arguments: dict[str, Any]) -> dict[str, float]:
    """The server pings right after the result: how long its pong took, for a blocking call
    and an awaited one (the awaiting caller's frame goes through the session's loop)."""
    import mcp_notebook

    with mcp_notebook.connect(SERVER, name="bench", era="legacy") as conn:
        conn.keepalive(enabled=False)
        conn.call_tool("large", {**arguments, "prepare": True})
        t0 = time.perf_counter()
        conn.call_tool("large", {**arguments, "ping_after": True}, timeout=300)
        blocking = time.perf_counter() - t0

        async def awaited() -> float:
            t0 = time.perf_counter()
            await conn.aio.call_tool("large", {**arguments, "ping_after": True}, timeout=300)
            return time.perf_counter() - t0

        awaiting = asyncio.run(awaited())
        pongs = json.loads(conn.call_tool("pong-latencies", validate=False).text)
        return {"blocking": blocking, "blocking_pong": pongs[0], "awaited": awaiting, "awaited_pong": pongs[1]}


CLIENTS: dict[str, Callable[[dict[str, Any]], dict[str, float]]] = {
    "notebook": notebook_call,
    "raw": raw_call,
    "sdk": sdk_call,
    "pongs": notebook_pongs,
}


def worker(client: str, shape: str) -> None:
    """Make one measured call and print its figures as JSON."""
    out = sys.stdout
    sys.stdout = sys.stderr  # nothing else may write on the channel
    out.write(json.dumps(CLIENTS[client](SHAPES[shape])) + "\n")
    out.flush()


# ----- the coordinator --------------------------------------------------------


def measured(client: str, shape: str, source: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(source), os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable, __file__, "--worker", client, "--shape", shape]
    done = subprocess.run(argv, env=env, stdout=subprocess.PIPE, text=True, timeout=600, check=True)
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def run(args: argparse.Namespace) -> dict[str, Any]:
    specs = [("mcp-notebook", "notebook", REPO)]
    if args.baseline:
        specs.append(("baseline", "notebook", args.baseline))
    specs.append(("raw (floor)", "raw", REPO))
    if args.sdk:
        specs.append(("mcp SDK", "sdk", REPO))
    if args.pongs:
        return pongs(specs[: 2 if args.baseline else 1], args.rounds)
    calls: dict[str, dict[str, list[dict[str, float]]]] = {shape: {label: [] for label, _, _ in specs} for shape in SHAPES}
    for number in range(args.rounds):
        for shape in SHAPES:
            for label, client, source in specs if number % 2 == 0 else specs[::-1]:
                calls[shape][label].append(measured(client, shape, source))
    figures: dict[str, Any] = {}
    for shape, by_client in calls.items():
        floor = by_client["raw (floor)"]
        frame = statistics.median(f["frame"] for f in floor) / MB
        rows: dict[str, Any] = {}
        for label, made in by_client.items():
            over = [f["seconds"] / r["seconds"] for f, r in zip(made, floor, strict=True)]
            rows[label] = {
                "mb_per_s": frame / statistics.median(f["seconds"] for f in made),
                "time_over_floor": statistics.median(over),
                "time_over_floor_range": [min(over), max(over)],
                **{key: statistics.median(f[key] for f in made) / frame for key in ("peak", "held", "retained")},
                "peak_range": [min(f["peak"] for f in made) / frame, max(f["peak"] for f in made) / frame],
            }
        figures[shape] = {"frame_mb": frame, "clients": rows}
    return figures


def pongs(specs: list[tuple[str, str, Path]], rounds: int) -> dict[str, Any]:
    made: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in specs}
    for number in range(rounds):
        for label, _, source in specs if number % 2 == 0 else specs[::-1]:
            made[label].append(measured("pongs", "1M items", source))
    return {label: {key: statistics.median(f[key] for f in calls) for key in calls[0]} for label, calls in made.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="rounds, one call per shape per client each (default 3)")
    parser.add_argument("--baseline", type=Path, metavar="PATH", help="also measure mcp-notebook from this checkout")
    parser.add_argument("--no-sdk", dest="sdk", action="store_false", help="leave the MCP SDK out")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    parser.add_argument("--pongs", action="store_true", help="instead: a server ping sent right after a 1M-item result")
    parser.add_argument("--worker", choices=tuple(CLIENTS), help=argparse.SUPPRESS)
    parser.add_argument("--shape", choices=tuple(SHAPES), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.shape)
        return
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    figures = run(args)
    if args.pongs:
        print("a server ping sent right after a 1,000,000-item result: seconds (medians)\n")
        print(f"{'client':<13} {'blocking call':>13} {'its pong':>9} {'awaited call':>13} {'its pong':>9}")
        for label, f in figures.items():
            row = (f["blocking"], f["blocking_pong"], f["awaited"], f["awaited_pong"])
            print(f"{label:<13} {row[0]:>13.3f} {row[1]:>9.3f} {row[2]:>13.3f} {row[3]:>9.3f}")
    else:
        report(args, figures)
    if args.json:
        args.json.write_text(json.dumps({"rounds": args.rounds, "figures": figures}, indent=2) + "\n")


def report(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    print(f"large tools/call results over stdio, {args.rounds} rounds; memory as multiples of the frame's bytes (medians)")
    print("time / floor: median over rounds of the call's time over the raw loop's in the same round [range]\n")
    head = ("shape", "frame MB", "client", "MB/s", "/ floor", "range", "peak", "held", "retained")
    print("{:<11} {:>8}  {:<13} {:>7} {:>8} {:>10} {:>6} {:>6} {:>8}".format(*head))
    for shape, row in figures.items():
        for label, c in row["clients"].items():
            low, high = c["time_over_floor_range"]
            print(
                f"{shape:<11} {row['frame_mb']:>8.1f}  {label:<13} {c['mb_per_s']:>7.1f} {c['time_over_floor']:>7.2f}x "
                f"{low:>4.2f}-{high:<5.2f} {c['peak']:>5.2f}x {c['held']:>5.2f}x {c['retained']:>7.2f}x"
            )


if __name__ == "__main__":
    main()
