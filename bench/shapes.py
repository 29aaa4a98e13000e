"""Linear in the session's shape (issue 50): tree, resume, stats, view and export on the deep branchy shape.

The deep branchy shape: each level a user question, an answer, a leaf move back to the question and a
second answer, the next level under the second answer. Every level leaves a branch and the tree is as
deep as the session is long, which made every per-branch or per-move walk of the path quadratic (the
red team at 80,000 records: resume 74 s, tree 170 s, tree --json a MemoryError at 6.6 GB, stats past
300 s). Each operation runs in its own process (its own time after the import, and peak RSS from
`wait4`) on the branchy
session and on a linear session of the same number of records (user and assistant turns alternating,
records of the same size), alternately, `--rounds` times; each row pairs the two in one run.

Rows, per operation and size: `per-record cost, branchy / linear` (median of the rounds' ratios; goal
at most 2) and `peak memory, branchy / linear` (goal at most 2); per operation, `per-record cost, largest
/ smallest size` on the branchy shape (goal at most 2: constant cost per record). `--code DIR` runs the
commands of another checkout (e.g. the code before the fix), with `--timeout` per process.

Run: `python -m bench.shapes [--records 20000 80000] [--big] [--rounds 3] [--ops tree stats ...]`;
`--big` adds 320,000 records (opt-in: minutes per operation on 2 cores); writes bench/shapes.json (or
`--out`).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.workload import write_shape_file

ROOT = Path(__file__).resolve().parent.parent
OUT = Path(__file__).with_name("shapes.json")

OPS: dict[str, list[str]] = {
    "resume": ["resume", "{path}"],
    "tree": ["tree", "{path}"],
    "tree --json": ["tree", "--json", "{path}"],
    "stats": ["stats", "{path}"],
    "stats --json": ["stats", "--json", "{path}"],
    "view": ["view", "{path}", "-o", "{out}.html", "--force"],
    "export": ["export", "{path}", "--format", "openai", "-o", "{out}.jsonl", "--force"],
}
"""Each operation's arguments to `waybook` (`resume`: the library's `waybook.resume(PATH)`)."""

CHILD = """
import sys, time
import waybook, waybook.cli
args = sys.argv[2:]
start = time.perf_counter()
if args[0] == "resume":
    waybook.resume(args[1]).journal.close()
else:
    try:
        waybook.cli.main(args)
    except SystemExit:
        pass
with open(sys.argv[1], "w") as out:
    out.write(repr(time.perf_counter() - start))
"""
"""The child process: imports waybook, then times the operation alone (start-up is not counted)."""


BIG = 320_000
"""The issue's third size, run with `--big` (each of its operations takes minutes on this shape)."""

DEFAULT_OPS = [op for op in OPS if op != "tree --json"]
"""`tree --json` lists every branch's whole path: on the deep branchy shape that document is quadratic
in the records (700 MB at 20,000 records), so it is measured only when asked for (its memory stays
flat: the paths are written one at a time)."""


def run_once(code: Path, op: str, path: Path, scratch: Path, timeout: float) -> tuple[float, float]:
    """Seconds and peak RSS in MiB of `op` on `path` in a new process of the checkout at `code`;
    (inf, inf) when it fails or passes `timeout`."""
    timing = scratch / "seconds"
    timing.unlink(missing_ok=True)
    args = [a.format(path=path, out=scratch / "out") for a in OPS[op]]
    env = {**os.environ, "PYTHONPATH": str(code), "COLUMNS": "120"}
    command = [sys.executable, "-c", CHILD, str(timing), *args]
    with open(os.devnull, "wb") as sink:
        process = subprocess.Popen(command, stdout=sink, stderr=sink, env=env, cwd=code)
        deadline = time.perf_counter() + timeout
        while True:
            pid, _, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.perf_counter() > deadline:
                process.kill()
                os.wait4(process.pid, 0)
                return float("inf"), float("inf")
            time.sleep(0.02)
    if not timing.exists():
        return float("inf"), float("inf")
    return float(timing.read_text()), usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, nargs="+", default=[20_000, 80_000])
    parser.add_argument(
        "--big",
        action="store_true",
        help=f"also {BIG:,} records (about 20 minutes a round on 2 idle cores: opt-in)",
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--ops", nargs="+", default=DEFAULT_OPS, choices=list(OPS))
    parser.add_argument("--code", type=Path, default=ROOT, help="the checkout whose commands run")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per process")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if args.big and BIG not in args.records:
        args.records.append(BIG)
    code = args.code.resolve()
    rows: list[dict[str, object]] = []
    per_record: dict[str, dict[int, float]] = {op: {} for op in args.ops}
    print(f"code {code}")
    print(
        f"{'operation':<14}{'records':>9}{'branchy s':>11}{'linear s':>10}{'us/rec br':>11}"
        f"{'cost br/lin':>12}{'MiB br':>9}{'MiB lin':>9}{'mem br/lin':>11}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for n in args.records:
            files = {shape: scratch / f"{shape}-{n}.jsonl" for shape in ("branchy", "linear")}
            for shape, path in files.items():
                write_shape_file(path, n, branchy=shape == "branchy")
            for op in args.ops:
                ratios: list[float] = []
                mem_ratios: list[float] = []
                times: dict[str, list[float]] = {"branchy": [], "linear": []}
                mems: dict[str, list[float]] = {"branchy": [], "linear": []}
                for round_ in range(args.rounds):
                    order = ("branchy", "linear") if round_ % 2 == 0 else ("linear", "branchy")
                    got = {}
                    for shape in order:
                        got[shape] = run_once(code, op, files[shape], scratch, args.timeout)
                        times[shape].append(got[shape][0])
                        mems[shape].append(got[shape][1])
                    ratios.append(got["branchy"][0] / max(got["linear"][0], 1e-6))
                    mem_ratios.append(got["branchy"][1] / got["linear"][1])
                    if got["branchy"][0] == float("inf"):
                        break  # failed or timed out: no point repeating it
                ratio, mem_ratio = statistics.median(ratios), statistics.median(mem_ratios)
                branchy_s = statistics.median(times["branchy"])
                linear_s = statistics.median(times["linear"])
                mib_b, mib_l = statistics.median(mems["branchy"]), statistics.median(mems["linear"])
                per_record[op][n] = branchy_s / n
                print(
                    f"{op:<14}{n:>9}{branchy_s:>11.2f}{linear_s:>10.2f}{1e6 * branchy_s / n:>11.1f}"
                    f"{ratio:>12.2f}{mib_b:>9.0f}{mib_l:>9.0f}{mem_ratio:>11.2f}",
                    flush=True,
                )
                rows.append(
                    {
                        "name": f"{op} at {n} records: per-record cost, branchy / linear",
                        "operation": op,
                        "records": n,
                        "branchy_seconds": branchy_s,
                        "linear_seconds": linear_s,
                        "ratio": ratio,
                        "goal": "at most 2",
                        "passed": ratio <= 2,
                    }
                )
                rows.append(
                    {
                        "name": f"{op} at {n} records: peak memory, branchy / linear",
                        "operation": op,
                        "records": n,
                        "branchy_mib": mib_b,
                        "linear_mib": mib_l,
                        "ratio": mem_ratio,
                        "goal": "at most 2",
                        "passed": mem_ratio <= 2,
                    }
                )
    if len(args.records) > 1:
        small, large = min(args.records), max(args.records)
        for op in args.ops:
            costs = per_record[op]
            growth = costs[large] / costs[small]
            spread = max(costs.values()) / min(costs.values())
            print(
                f"{op}: per-record cost at {large} / at {small} records (branchy): {growth:.2f}; "
                f"most / least over the {len(costs)} sizes: {spread:.2f}"
            )
            rows.append(
                {
                    "name": f"{op}: per-record cost at {large} / at {small} records, branchy",
                    "operation": op,
                    "ratio": growth,
                    "goal": "at most 2",
                    "passed": growth <= 2,
                }
            )
            rows.append(
                {
                    "name": f"{op}: per-record cost, most / least over {len(costs)} sizes, branchy",
                    "operation": op,
                    "sizes": sorted(costs),
                    "ratio": spread,
                    "goal": "at most 2",
                    "passed": spread <= 2,
                }
            )
    args.out.write_text(json.dumps({"code": str(code), "rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
