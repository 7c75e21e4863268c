"""Server pings answered from a real kernel while a cell sleeps and while it spins.

What: starts an IPython kernel (this interpreter, ipykernel, as `tests/kernels.py` sets
it up; `PYTHONPATH` chooses the checkout), connects it to the bundled demo server over
stdio and over Streamable HTTP with the server pinging every `--interval` seconds, then
runs two cells of `--seconds` each: one in `time.sleep`, one spinning in pure Python
(holding the GIL but for the interpreter's switch interval). For each it reports the
server's own round trip of its pings (ping written to pong read, from the demo server's
stderr lines), p50 and max in ms, and how many pings went unanswered.

Run: `.venv/bin/python bench/kernel_pongs.py [--seconds S] [--interval S] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from queue import Empty
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from jupyter_client.manager import KernelManager  # noqa: E402
from support.kernels import KERNEL_NAME, VenvKernelSpecManager  # noqa: E402

CELL = r"""
import json, re, time
import mcp_notebook
from mcp_notebook.api.connecting import demo as _demo

def _server_lines(conn, transport):
    if transport == "stdio":
        return list(conn.stderr)
    return list(_demo.http_server(conn.name).stderr_log.lines)

def _pongs(lines):  # {pong number: round trip in ms}; the stderr tail is bounded: by number, not position
    found = (re.search(r"pong (\d+) \(.*\) after ([\d.]+) ms", line) for line in lines)
    return {int(m.group(1)): float(m.group(2)) for m in found if m}

result = {}
for transport in ("stdio", "http"):
    conn = mcp_notebook.demo(f"k{transport}", transport=transport, ping_interval=%(interval)r, keepalive=None)
    time.sleep(1.0)  # the server's first pings
    for mode in ("sleep", "spin"):
        before = max(_pongs(_server_lines(conn, transport)), default=0)
        sent_before = conn.health.server_pings
        t_end = time.monotonic() + %(seconds)r
        if mode == "sleep":
            time.sleep(%(seconds)r)
        else:
            n = 0
            while time.monotonic() < t_end:
                n += 1
        time.sleep(0.5)  # the last pong's stderr line
        rtts = sorted(rtt for n, rtt in _pongs(_server_lines(conn, transport)).items() if n > before)
        result[f"{transport} {mode}"] = {
            "pings": conn.health.server_pings - sent_before,
            "pongs": len(rtts),
            "p50_ms": rtts[len(rtts) // 2] if rtts else None,
            "max_ms": rtts[-1] if rtts else None,
            "pong_failures": conn.health.pong_failures,
        }
    conn.close()
print("RESULT " + json.dumps(result))
"""


def run_cell(kc: Any, code: str, timeout: float) -> str:
    msg_id = kc.execute(code)
    out: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            msg = kc.get_iopub_msg(timeout=1)
        except Empty:
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            out.append(content["text"])
        elif kind == "error":
            raise RuntimeError("\n".join(content["traceback"]))
        elif kind == "status" and content["execution_state"] == "idle":
            return "".join(out)
    raise TimeoutError("the cell did not finish")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="how long each cell sleeps or spins (default 5)")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between the server's pings (default 0.05)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        km = KernelManager(
            kernel_name=KERNEL_NAME,
            kernel_spec_manager=VenvKernelSpecManager(),
            connection_file=str(Path(tmp) / "kernel.json"),
            transport="ipc",
            ip=str(Path(tmp) / "kernel-ipc"),
        )
        env = {**os.environ, "IPYTHONDIR": str(Path(tmp) / "ipython")}
        km.start_kernel(env=env, cwd=tmp)
        kc = km.client()
        kc.start_channels()
        try:
            kc.wait_for_ready(timeout=60)
            out = run_cell(kc, CELL % {"seconds": args.seconds, "interval": args.interval}, timeout=120 + 4 * args.seconds)
        finally:
            kc.stop_channels()
            km.shutdown_kernel(now=True)
    result = json.loads(next(line for line in out.splitlines() if line.startswith("RESULT "))[7:])
    source = os.environ.get("PYTHONPATH", "").split(os.pathsep)[0] or str(REPO)
    print(f"server pings every {args.interval * 1000:.0f} ms, cells of {args.seconds:g} s, mcp_notebook from {source}")
    print(f"{'transport, cell':<16} {'pings':>6} {'pongs':>6} {'p50 ms':>8} {'max ms':>8}")
    for name, row in result.items():
        p50 = f"{row['p50_ms']:.2f}" if row["p50_ms"] is not None else "-"
        top = f"{row['max_ms']:.2f}" if row["max_ms"] is not None else "-"
        print(f"{name:<16} {row['pings']:>6} {row['pongs']:>6} {p50:>8} {top:>8}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
