"""waybook benchmarks: prints a table and writes bench/results.json.

Every row is measured against a raw baseline in the same run, so the ratio is what to compare across
machines; absolute rates on shared machines are noisy. Run: `python bench/run.py [--quick] [--only NAME]`.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench.core import bench_core
from bench.exports import bench_export
from bench.jsonl import bench_jsonl
from bench.measure import Row
from bench.memory import bench_authority, bench_memory
from bench.projections import bench_projections
from bench.speed import bench_speed

RESULTS = Path(__file__).resolve().parent / "results.json"

SUITES: dict[str, Callable[[bool], Iterator[Row]]] = {
    "core": bench_core,
    "jsonl": bench_jsonl,
    "projections": bench_projections,
    "export": bench_export,
    "memory": bench_memory,
    "authority": bench_authority,
    "speed": bench_speed,
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes, for a smoke run")
    parser.add_argument("--only", choices=sorted(SUITES), action="append", help="run only these suites")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the JSON results")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    print(f"{'benchmark':36} {'value':>14} {'baseline':>14} {'ratio':>7}  {'target':24} ok")
    for name in args.only or SUITES:
        for row in SUITES[name](args.quick):
            rows.append(row)
            base = f"{row.baseline:14,.0f}" if row.baseline else " " * 14
            ratio = f"{row.ratio:7.2f}" if row.ratio is not None else " " * 7
            ok = {True: "yes", False: "NO", None: ""}[row.passed]
            print(f"{row.name:36} {row.value:14,.0f} {base} {ratio}  {row.target:24} {ok}", flush=True)
    payload: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "quick": args.quick,
        "rows": [{**attrs.asdict(r), "ratio": r.ratio} for r in rows],
    }
    args.out.write_text(json.dumps(payload, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0 if all(r.passed is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
