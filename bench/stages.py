"""Where a ping's round trip goes: per-stage timestamps on a live mcp-notebook connection.

What: connects to server-everything (stdio, or Streamable HTTP on 127.0.0.1), wraps the
session's hand-off points with `time.perf_counter()` stamps (instance attributes only,
nothing changes in the package) and times `--count` pings from the caller. It prints the
median of each stage, in µs:

- launch: from the caller's call to `Session.launch` (or `CallBoundary._send_here`) running (the hop
  into the loop, where there is one);
- send: `launch` until the transport's `send` returns (encode, trace, write or spawn the POST);
- HTTP only: post task (until httpx2 starts the request), POST and server (until the
  response headers), body (until the frame is handed to the session);
- wire and server (stdio): from the write until the frame reaches the session (on the
  transport's reading thread, or the loop's read callback before it had one);
- dispatch: from there until the request is settled (decode, match, trace, release);
- wake: from the release until the caller runs again.

Run: `.venv/bin/python bench/stages.py [--transport stdio|http] [--count N]`; `PYTHONPATH`
chooses the checkout measured.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(1, str(Path(__file__).resolve().parent))
from ping import ARGV, REPO, http_server

Stamps = dict[str, float]


def stamp(stamps: Stamps, name: str, fn: Callable[..., Any], before: bool = False) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if before:
            stamps.setdefault(name, time.perf_counter())
        result = fn(*args, **kwargs)
        if not before:
            stamps.setdefault(name, time.perf_counter())
        return result

    return wrapper


def astamp(stamps: Stamps, name: str, fn: Callable[..., Any], entry: str) -> Callable[..., Any]:
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        stamps.setdefault(entry, time.perf_counter())
        result = await fn(*args, **kwargs)
        stamps.setdefault(name, time.perf_counter())
        return result

    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=200)
    args = parser.parse_args()
    if args.transport == "http":
        with http_server() as url:
            measure(url, args)
    else:
        measure(None, args)


def measure(url: str | None, args: argparse.Namespace) -> None:
    import mcp_notebook

    conn = mcp_notebook.connect(url or ARGV, name="stages", **({"transport": "http"} if url else {"cwd": REPO}))
    conn.keepalive(enabled=False)
    session, stamps = conn._session, {}
    session.launch = stamp(stamps, "launch", session.launch, before=True)  # type: ignore[method-assign]
    calls = getattr(session, "boundary", None) or getattr(session, "calls", None)  # the call boundary (older: calls, the session)
    if calls is not None and hasattr(calls, "_send_here"):  # the caller's thread sends it (stdio), no hop
        calls._send_here = stamp(stamps, "launch", calls._send_here, before=True)
    elif hasattr(session, "send_here"):
        session.send_here = stamp(stamps, "launch", session.send_here, before=True)  # type: ignore[attr-defined]
    session.transport.send = stamp(stamps, "sent", session.transport.send)  # type: ignore[method-assign]
    session.inbound.frame_received = stamp(stamps, "read", session.inbound.frame_received, before=True)  # type: ignore[method-assign]
    if hasattr(session.inbound, "frame_here"):  # stdio's reading thread offers it the frame first
        session.inbound.frame_here = stamp(stamps, "read", session.inbound.frame_here, before=True)  # type: ignore[method-assign]
    session.requests.settle = stamp(stamps, "settled", session.requests.settle)  # type: ignore[method-assign]
    order = ["launch", "sent", "read", "settled", "back"]
    if url:
        pool = session.transport.client._transport  # the httpx2 transport under the client
        pool.handle_async_request = astamp(stamps, "headers", pool.handle_async_request, "post task")
        order = ["launch", "sent", "post task", "headers", "read", "settled", "back"]
    names = {"read": "body" if url else "wire and server", "headers": "POST and server"}
    stages: dict[str, list[float]] = defaultdict(list)
    try:
        for number in range(args.warmup + args.count):
            stamps.clear()
            stamps["call"] = time.perf_counter()
            conn.ping()
            stamps["back"] = time.perf_counter()
            if number < args.warmup or any(name not in stamps for name in order):
                continue
            previous = stamps["call"]
            for name in order:
                stages[names.get(name, name)].append(stamps[name] - previous)
                previous = stamps[name]
            stages["total"].append(stamps["back"] - stamps["call"])
    finally:
        conn.close()
    print(f"{args.transport}: {len(stages['total'])} pings, median µs per stage")
    for name, values in stages.items():
        label = {"sent": "send", "settled": "dispatch", "back": "wake", "launch": "launch (hop)"}.get(name, name)
        print(f"  {label:<18} {statistics.median(values) * 1e6:8.1f}")


if __name__ == "__main__":
    main()
