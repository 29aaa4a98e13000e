"""Before/after pairs of the big directory store's rows (issue 50): `python -m bench.big_store_pairs
--code /path/to/before DIR N [DIR N ...]`.

Each row (`store`, `ls`, `open`, `front` of bench/big_store_probe.py) runs in a fresh process under the
other checkout (`--code`, on PYTHONPATH) and under this one, alternately (which goes first alternates
too), `--rounds` times, on the same directory store. A row's figures are the median over the rounds of
the after / before ratio of CPU seconds (paired within a round: on a loaded machine the CPU a process
spent is what a pair compares, not the wall clock), beside the medians of each side's wall milliseconds
and peak RSS. Writes bench/big_store_pairs.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "big_store_pairs.json"
ROWS = {
    "store": "open the store",
    "ls": "ls first page",
    "open": "open one journal",
    "front": "serve front page",
}


def probe(code: Path, op: str, url: str, journals: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=str(code))
    script = Path(__file__).resolve().parent / "big_store_probe.py"
    done = subprocess.run(
        [sys.executable, str(script), op, url, str(journals)],
        env=env,
        cwd=code,
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def pairs(before: Path, url: str, journals: int, rounds: int) -> list[dict[str, Any]]:
    rows = []
    for op, name in ROWS.items():
        sides: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
        for round_ in range(rounds):
            order = [("before", before), ("after", ROOT)]
            for side, code in order if round_ % 2 == 0 else order[::-1]:
                sides[side].append(probe(code, op, url, journals))
        ratios = [
            a["cpu"] / b["cpu"] for a, b in zip(sides["after"], sides["before"], strict=True) if b["cpu"]
        ]
        row = {
            "row": f"{name} at {journals} journals: CPU, after / before",
            "ratio": statistics.median(ratios),
            **{
                f"{side}_{what}": statistics.median(run[key] for run in runs) * scale
                for side, runs in sides.items()
                for what, key, scale in (
                    ("ms", "seconds", 1000),
                    ("cpu_ms", "cpu", 1000),
                    ("rss_mb", "rss_kb", 1 / 1024),
                )
            },
        }
        rows.append(row)
        print(
            f"{row['row']:<62} {row['ratio']:7.3f}  before {row['before_ms']:8.1f} ms "
            f"({row['before_cpu_ms']:8.1f} cpu, {row['before_rss_mb']:5.0f} MB)  "
            f"after {row['after_ms']:8.1f} ms ({row['after_cpu_ms']:8.1f} cpu, "
            f"{row['after_rss_mb']:5.0f} MB)",
            flush=True,
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--code", type=Path, required=True, help="the checkout measured as 'before'")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("stores", nargs="+", help="DIR N pairs: a directory store and its journals")
    args = parser.parse_args()
    rows = []
    for directory, journals in zip(args.stores[::2], args.stores[1::2], strict=True):
        rows += pairs(args.code.resolve(), f"file:{directory}", int(journals), args.rounds)
    RESULTS.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
