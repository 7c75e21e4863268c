"""Import-time benchmark: `import mcp_notebook` against `import httpx2` alone.

What: each round runs `python -X importtime -c "import <module>"` in a fresh interpreter, once
per module, alternating, so that machine noise hits both; the total of a run is the sum of the
cumulative times of its top-level imports (what `-X importtime` prints flush left), in ms. It
prints the median, the minimum, the ratio of the medians, the heaviest packages by self time
in the last run of `import mcp_notebook`, and which of the modules we load lazily were imported
(none should be; the list, and the fresh interpreter that reports it, are
`tests/test_lazy_imports.py`'s).

Why: a notebook imports the package in its first cell; the HTTP stack, widgets and the rest
are imported on first use instead (`tests/test_lazy_imports.py` holds that). httpx2 alone is
the yardstick: `import mcp_notebook` used to cost about twice as much.

Run: `.venv/bin/python bench/import.py [--rounds N] [--json PATH]`.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from test_lazy_imports import fresh_interpreter  # noqa: E402

MODULES = ("mcp_notebook", "httpx2")
LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)$")


def run(module: str, source: Path = REPO) -> tuple[float, Counter[str], set[str]]:
    """One fresh interpreter: total ms, self µs by top-level package, and the lazy modules it loaded."""
    lazy_loaded, stderr = fresh_interpreter(f"import {module}", source, ["-X", "importtime"])
    total, by_package = 0, Counter[str]()
    for line in stderr.splitlines():
        match = LINE.match(line)
        if match is None:
            continue
        own, cumulative, indent, name = int(match[1]), int(match[2]), match[3], match[4]
        by_package[name.split(".")[0]] += own
        if not indent:
            total += cumulative
    return total / 1000, by_package, lazy_loaded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="runs of each import, alternating (default 15)")
    parser.add_argument("--baseline", type=Path, metavar="PATH", help="also time `import mcp_notebook` from this checkout")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the figures as JSON")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be >= 1")
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: from bytecode, not compiled each time

    runs = [(module, module, REPO) for module in MODULES]
    if args.baseline:
        runs.append(("mcp_notebook (baseline)", "mcp_notebook", args.baseline))
    totals: dict[str, list[float]] = {label: [] for label, _, _ in runs}
    heaviest: Counter[str] = Counter()
    loaded: set[str] = set()
    for _, module, source in runs:
        run(module, source)  # untimed: writes the bytecode the timed runs read
    for _ in range(args.rounds):
        for label, module, source in runs:
            total, by_package, lazy_loaded = run(module, source)
            totals[label].append(total)
            if label == "mcp_notebook":
                heaviest, loaded = by_package, lazy_loaded
    medians = {module: statistics.median(values) for module, values in totals.items()}
    ratio = medians["mcp_notebook"] / medians["httpx2"]

    print(f"python -X importtime totals, {args.rounds} rounds, alternating\n")
    print(f"{'import':<24} {'median ms':>10} {'min ms':>10}")
    for label, values in totals.items():
        print(f"{label:<24} {medians[label]:>10.1f} {min(values):>10.1f}")
    print(f"\nmcp_notebook / httpx2: {ratio:.2f}x (medians)")
    if args.baseline:
        print(f"baseline / httpx2: {medians['mcp_notebook (baseline)'] / medians['httpx2']:.2f}x (medians)")
    top = ", ".join(f"{name} {own / 1000:.1f}" for name, own in heaviest.most_common(8))
    print(f"heaviest packages (self ms, last run): {top}")
    print(f"lazy modules loaded by `import mcp_notebook`: {', '.join(sorted(loaded)) or 'none'}")

    if args.json:
        figures = {"rounds": args.rounds, "totals_ms": totals, "medians_ms": medians, "ratio": ratio, "loaded": sorted(loaded)}
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
