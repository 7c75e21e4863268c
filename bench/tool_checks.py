"""Tool argument check benchmark: what checking one call's arguments against the tool's input schema costs.

What: `CompiledTool(definition).argument_problems(arguments)`, the check `call_tool` runs
before it sends (its verdict on valid arguments, and its phrases on wrong ones), timed per
call on a few schemas: server-everything's `get-sum`, a richer schema using every keyword a
tool schema commonly has, and wrong arguments to both. Also the one-time costs: compiling a
tool's checks, and the first wrong call in a fresh process (any import it needs paid).

Each checkout measured runs in a worker process of its own; the workers take turns for
`--rounds` rounds (who goes first flips every round), so machine noise hits both alike.
`--baseline PATH` adds a second checkout (say, a `git archive` of main) and prints the
ratio of this checkout's median to the baseline's, per case (below 1: faster than the
baseline).

Run: `.venv/bin/python bench/tool_checks.py [--rounds R] [--count N] [--baseline PATH] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

GET_SUM = {
    "type": "object",
    "properties": {"a": {"type": "number", "description": "First number"}, "b": {"type": "number", "description": "Second"}},
    "required": ["a", "b"],
}
RICH = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 2, "maxLength": 50},
        "count": {"type": "integer", "minimum": 0, "exclusiveMaximum": 100},
        "ratio": {"type": ["number", "null"], "maximum": 1},
        "mode": {"enum": ["fast", "slow", "auto"]},
        "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 10},
        "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
        "nested": {"type": "object", "properties": {"x": {"type": "number"}}, "required": ["x"], "additionalProperties": False},
    },
    "required": ["name", "count"],
    "additionalProperties": False,
}
RICH_OK = {"name": "Ada", "count": 3, "ratio": 0.5, "mode": "auto", "tags": ["a", "b"], "either": 7, "nested": {"x": 1.5}}
CASES: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "get-sum, valid": (GET_SUM, {"a": 1, "b": 2}),
    "rich, valid": (RICH, RICH_OK),
    "get-sum, wrong": (GET_SUM, {"a": "x"}),
    "rich, wrong": (RICH, {**RICH_OK, "count": -1, "mode": "off", "nested": {}}),
}


def worker(count: int) -> dict[str, float]:
    """Seconds per call of each case, the median of 5 batches of `count` calls; and the one-time costs."""
    t0 = time.perf_counter()
    from mcp_notebook.api.tools.checks import CompiledTool

    figures: dict[str, float] = {}
    first = CompiledTool({"name": "first", "inputSchema": GET_SUM})
    t0 = time.perf_counter()
    assert first.argument_problems({"a": "x"})
    figures["first wrong call (cold)"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    for n in range(20):
        CompiledTool({"name": f"t{n}", "inputSchema": dict(RICH)}).argument_problems(RICH_OK)
    figures["compile rich + first call"] = (time.perf_counter() - t0) / 20
    for label, (schema, arguments) in CASES.items():
        tool = CompiledTool({"name": "t", "inputSchema": schema})
        check = tool.argument_problems
        assert bool(check(arguments)) == label.endswith("wrong"), (label, check(arguments))
        batches = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(count):
                check(arguments)
            batches.append((time.perf_counter() - t0) / count)
        figures[label] = statistics.median(batches)
    return figures


def run(checkout: Path, count: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    bench = str(REPO / "bench")
    code = f"import sys, json; sys.path.insert(0, {bench!r}); import tool_checks; print(json.dumps(tool_checks.worker({count})))"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=checkout, capture_output=True, text=True, check=True)
    figures: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="rounds, each checkout once per round (default 5)")
    parser.add_argument("--count", type=int, default=20000, help="calls per batch (default 20000)")
    parser.add_argument("--baseline", type=Path, metavar="PATH", help="another checkout to compare with")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    checkouts = {"this": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
    seen: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    for n in range(args.rounds):
        for name in list(checkouts) if n % 2 == 0 else list(checkouts)[::-1]:
            seen[name].append(run(checkouts[name], args.count))
    labels = list(seen["this"][0])
    out: dict[str, Any] = {}
    print(
        f"{'case':<28}"
        + "".join(f"{name:>14}" for name in checkouts)
        + ("   this / baseline (median, range)" if args.baseline else "")
    )
    for label in labels:
        medians = {name: statistics.median(r[label] for r in rounds) for name, rounds in seen.items()}
        unit, scale = ("ms", 1e3) if "cold" in label or "compile" in label else ("µs", 1e6)
        line = f"{label:<28}" + "".join(f"{medians[name] * scale:>11.2f} {unit}" for name in checkouts)
        out[label] = {"seconds": medians}
        if args.baseline:
            ratios = [a[label] / b[label] for a, b in zip(seen["this"], seen["baseline"], strict=True)]
            out[label]["ratio"] = statistics.median(ratios)
            line += f"   {statistics.median(ratios):.2f} ({min(ratios):.2f}..{max(ratios):.2f})"
        print(line)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
