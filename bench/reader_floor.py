"""What a background reader costs by itself: minimal stdio ping clients with no MCP code.

What: three clients of a few lines each ping server-everything over stdio, in alternating
rounds, each with a server of its own:

- raw: the caller writes and reads the pipe itself (`bench/ping.py`'s floor);
- loop thread: an asyncio loop on a background thread reads (`add_reader`) and releases
  the caller's lock, the shape of mcp-notebook's session thread;
- reader thread: a plain thread blocked in `os.read` reads and releases the lock.

Each ping is JSON-encoded, written by the caller's thread and matched by id, as in
mcp-notebook; nothing else is done. The ratios to raw are the floor of each shape on this
machine, before any per-frame work of ours.

Run: `.venv/bin/python bench/reader_floor.py [--rounds 9] [--count 1000]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(1, str(Path(__file__).resolve().parent))
from ping import ARGV, INIT_PARAMS, RawStdio

WARMUP = 100


def ping_line(request_id: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": "ping"}, separators=(",", ":")).encode() + b"\n"


def raw_pings(server: RawStdio, count: int) -> list[float]:
    stdin, stdout = server.stdin.fileno(), server.stdout.fileno()
    pending, samples = b"", []
    for request_id in range(1, count + 1):
        started = time.perf_counter()
        os.write(stdin, ping_line(request_id))
        while True:
            while b"\n" not in pending:
                pending += os.read(stdout, 65536)
            line, pending = pending.split(b"\n", 1)
            if json.loads(line).get("id") == request_id:
                break
        samples.append(time.perf_counter() - started)
    return samples


def locked_pings(stdin: int, waiters: dict[int, threading.Lock], count: int) -> list[float]:
    """The caller's side of both threaded shapes: write, then sleep on a lock the reader releases."""
    samples = []
    for request_id in range(1, count + 1):
        started = time.perf_counter()
        waker = threading.Lock()
        waker.acquire()
        waiters[request_id] = waker
        os.write(stdin, ping_line(request_id))
        waker.acquire()
        samples.append(time.perf_counter() - started)
    return samples


def release_answered(chunk: bytes, pending: bytearray, waiters: dict[int, threading.Lock]) -> None:
    pending += chunk
    *lines, rest = pending.split(b"\n")
    pending[:] = rest
    for line in lines:
        waker = waiters.pop(json.loads(line).get("id"), None)
        if waker is not None:
            waker.release()


def loop_thread_pings(server: RawStdio, count: int) -> list[float]:
    loop = asyncio.new_event_loop()
    stdout, pending, waiters = server.stdout.fileno(), bytearray(), {}
    os.set_blocking(stdout, False)
    loop.add_reader(stdout, lambda: release_answered(os.read(stdout, 65536), pending, waiters))
    thread = threading.Thread(target=loop.run_forever)
    thread.start()
    try:
        return locked_pings(server.stdin.fileno(), waiters, count)
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.remove_reader(stdout)
        loop.close()
        os.set_blocking(stdout, True)


def reader_thread_pings(server: RawStdio, count: int) -> list[float]:
    stdout, pending, waiters = server.stdout.fileno(), bytearray(), {}
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            chunk = os.read(stdout, 65536)
            if not chunk:
                return
            release_answered(chunk, pending, waiters)

    thread = threading.Thread(target=read)
    thread.start()
    try:
        return locked_pings(server.stdin.fileno(), waiters, count)
    finally:
        done.set()
        server.stdin.close()  # the server exits, the read returns empty, the thread ends
        thread.join()


SHAPES: dict[str, Callable[[RawStdio, int], list[float]]] = {
    "raw": raw_pings,
    "loop thread": loop_thread_pings,
    "reader thread": reader_thread_pings,
}


def one_round(shape: Callable[[RawStdio, int], list[float]], count: int) -> float:
    server = RawStdio(ARGV)
    try:
        server.request("initialize", INIT_PARAMS)
        server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return statistics.median(shape(server, WARMUP + count)[WARMUP:])
    finally:
        server.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--count", type=int, default=1000)
    args = parser.parse_args()
    medians: dict[str, list[float]] = {name: [] for name in SHAPES}
    for round_number in range(args.rounds):
        order = list(SHAPES) if round_number % 2 == 0 else list(reversed(SHAPES))
        for name in order:
            medians[name].append(one_round(SHAPES[name], args.count))
    print(f"stdio ping, {args.rounds} rounds x {args.count} pings, medians of each round in µs")
    for name, values in medians.items():
        ratios = [value / raw for value, raw in zip(values, medians["raw"], strict=True)]
        print(
            f"{name:14} {statistics.median(values) * 1e6:8.1f} µs  {statistics.median(ratios):.2f}x raw"
            f"  [{min(ratios):.2f}-{max(ratios):.2f}]"
        )


if __name__ == "__main__":
    main()
