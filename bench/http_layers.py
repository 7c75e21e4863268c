"""Where an HTTP ping's client CPU goes: the same ping loop through each layer of the stack.

What: one server-everything in streamableHttp mode on 127.0.0.1; each client below runs
the legacy handshake and then pings it, in a process of its own under callgrind, once
with `--small` and once with `--large` pings; the difference in instructions over the
difference in pings is the client's cost per ping (start-up, imports and the handshake
cancel out; every thread of the process counts; the server is not counted). The layers,
each reading the whole answer and taking the JSON from its SSE `data:` line alike:

- raw: stdlib `http.client`, one keep-alive connection, TCP_NODELAY (the floor);
- pool: `httpcore2.AsyncConnectionPool.handle_async_request` with an `httpcore2.Request`
  (the connection, the pool, h11 and anyio's socket streams);
- transport: `httpx2.AsyncHTTPTransport.handle_async_request` with an `httpx2.Request`
  (adds httpx2's request and response models and its exception mapping);
- client: `httpx2.AsyncClient.send(request, stream=True)` with a request from
  `build_request` (adds the auth flow, redirects, event hooks, cookies, URL merging);
- notebook: `mcp_notebook.connect(url, transport="http").ping()`, the whole client.

Run: `.venv/bin/python bench/http_layers.py [--layers raw,pool,...] [--small 50 --large 250]`.
`PYTHONPATH` picks the mcp-notebook checkout measured.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ping import INIT_PARAMS, LEGACY_VERSION, http_server, notebook_client, raw_client

LAYERS = ("raw", "pool", "transport", "client", "notebook")
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def _answer(body: bytes) -> Any:
    for line in body.decode().splitlines():
        if line.startswith("data:") and line[5:].strip():
            return json.loads(line[5:])
    return json.loads(body) if body.strip() else None


async def _async_pings(layer: str, url: str, count: int, warmup: int) -> list[float]:
    import httpcore2
    import httpx2

    transport = httpx2.AsyncHTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    client = httpx2.AsyncClient(transport=transport, timeout=httpx2.Timeout(10.0, read=None))
    headers = dict(HEADERS)
    ids = iter(range(1, 1 << 30))

    async def post(message: dict[str, Any]) -> Any:
        body = json.dumps(message, separators=(",", ":")).encode()
        if layer == "pool":
            parts = httpx2.URL(url)
            request = httpcore2.Request(
                "POST",
                httpcore2.URL(scheme=parts.raw_scheme, host=parts.raw_host, port=parts.port, target=parts.raw_path),
                headers=[(k.encode(), v.encode()) for k, v in headers.items()]
                + [(b"Host", parts.netloc), (b"Content-Length", str(len(body)).encode())],
                content=body,
                extensions={"timeout": {"connect": 10.0, "read": None, "write": 10.0, "pool": 10.0}},
            )
            response = await transport._pool.handle_async_request(request)
            data = b"".join([chunk async for chunk in response.stream])  # type: ignore[union-attr]
            await response.aclose()
            status, session = response.status, dict(response.headers).get(b"mcp-session-id", b"").decode()
        else:
            request = client.build_request("POST", url, content=body, headers=headers)
            if layer == "transport":
                reply = await transport.handle_async_request(request)
            else:
                reply = await client.send(request, stream=True)
            data = await reply.aread()
            await reply.aclose()
            status, session = reply.status_code, reply.headers.get("mcp-session-id", "")
        if status >= 400:
            raise RuntimeError(f"HTTP {status}")
        if session:
            headers["Mcp-Session-Id"] = session
        return _answer(data)

    async def request(method: str, params: dict[str, Any] | None = None) -> Any:
        return await post({"jsonrpc": "2.0", "id": next(ids), "method": method, "params": params or {}})

    await request("initialize", INIT_PARAMS)
    headers["MCP-Protocol-Version"] = LEGACY_VERSION
    await post({"jsonrpc": "2.0", "method": "notifications/initialized"})
    ping: Callable[[], Awaitable[Any]] = lambda: request("ping")  # noqa: E731
    for _ in range(warmup):
        await ping()
    clock, samples = time.perf_counter, []
    for _ in range(count):
        started = clock()
        await ping()
        samples.append(clock() - started)
    await client.aclose()
    return samples


def pings(layer: str, url: str, count: int, warmup: int = 0) -> list[float]:
    """Ping `count` times through `layer` after `warmup` untimed pings; the seconds each took."""
    if layer in ("pool", "transport", "client"):
        return asyncio.run(_async_pings(layer, url, count, warmup))
    with (notebook_client if layer == "notebook" else raw_client)(url) as ping:
        for _ in range(warmup):
            ping()
        clock, samples = time.perf_counter, []
        for _ in range(count):
            started = clock()
            ping()
            samples.append(clock() - started)
        return samples


def instructions(layer: str, url: str, count: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp, "cg.out")
        argv = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, __file__]
        subprocess.run([*argv, "--run", layer, "--url", url, "--count", str(count)], check=True, capture_output=True)
        summary = re.search(r"^summary:\s*(\d+)", out.read_text(), re.M)
        assert summary, "no callgrind summary"
        return int(summary.group(1))


def wall(layers: list[str], rounds: int, count: int) -> None:
    """Median wall-clock round trip of each layer (one process, layers alternating in rounds)."""
    medians: dict[str, list[float]] = {layer: [] for layer in layers}
    with http_server() as url:
        for number in range(rounds):
            for layer in layers if number % 2 == 0 else layers[::-1]:
                medians[layer].append(statistics.median(pings(layer, url, count, warmup=50)))
    for layer, values in medians.items():
        ratio = statistics.median(v / r for v, r in zip(values, medians.get("raw", values), strict=True))
        print(f"{layer:<10} {statistics.median(values) * 1e6:>8.1f} µs  {ratio:>5.2f}x raw")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", default=",".join(LAYERS), help=f"comma-separated, of {', '.join(LAYERS)}")
    parser.add_argument("--small", type=int, default=50, help="pings in the short run (default 50)")
    parser.add_argument("--large", type=int, default=250, help="pings in the long run (default 250)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each pair; the lowest figure counts (threads)")
    parser.add_argument("--wall", type=int, metavar="ROUNDS", help="time the layers instead, alternating, ROUNDS rounds")
    parser.add_argument("--run", choices=LAYERS, help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--count", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run:
        pings(args.run, args.url, args.count)
        return
    layers = args.layers.split(",")
    os.environ.setdefault("PYTHONPATH", str(Path(__file__).resolve().parents[1]))
    if args.wall:
        wall(layers, args.wall, args.large)
        return
    with http_server() as url:
        figures: dict[str, float] = {}
        for layer in layers:
            runs = []
            for _ in range(args.repeat):
                small, large = instructions(layer, url, args.small), instructions(layer, url, args.large)
                runs.append((large - small) / (args.large - args.small))
            figures[layer] = min(runs)
            print(f"{layer:<10} {figures[layer] / 1000:>9.1f} k instructions per ping", flush=True)
    if "raw" in figures:
        print()
        for layer, value in figures.items():
            print(f"{layer:<10} {value / figures['raw']:>6.2f}x raw")


if __name__ == "__main__":
    main()
