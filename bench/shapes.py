"""Linear in the session's shape (issue 50): tree, resume, stats, view and export on the deep branchy shape.

The deep branchy shape: each level a user question, an answer, a leaf move back to the question and a
second answer, the next level under the second answer. Every level leaves a branch and the tree is as
deep as the session is long, which made every per-branch or per-move walk of the path quadratic (the
red team at 80,000 records: resume 74 s, tree 170 s, tree --json a MemoryError at 6.6 GB, stats past
300 s). Each operation runs in its own process on the branchy session and on a linear session of the same
number of records (user and assistant turns alternating, records of the same size), alternately,
`--rounds` times; each row pairs the two in one run. The figure is the operation's CPU time (user +
system seconds of the operation alone, after the imports; the whole process's from `wait4` is kept
beside it in the JSON), which a loaded machine does not inflate the way it does wall time; wall
seconds are printed beside it, with the load average.

Rows, per operation and size: `CPU per record, branchy / linear` (median of the rounds' ratios; goal
at most 2) and `peak memory, branchy / linear` (each process's own peak RSS, VmHWM; goal at most 2);
per operation, `CPU per record, largest / smallest size` and `most / least over the sizes` on the
branchy shape (medians over the rounds; goal at most 2: constant cost per record). `--code DIR` runs
the commands of another checkout (e.g. the code before the fix), with `--timeout` per process.

Run: `python -m bench.shapes [--records 20000 80000] [--big] [--rounds 3] [--ops tree stats ...]`;
`--big` adds 320,000 records (opt-in: minutes per operation on 2 cores); writes bench/shapes.json (or
`--out`).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs

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
import resource, sys, time
import waybook, waybook.cli
args = sys.argv[2:]

def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime

start, start_cpu = time.perf_counter(), cpu()
if args[0] == "resume":
    waybook.resume(args[1]).journal.close()
else:
    try:
        waybook.cli.main(args)
    except SystemExit:
        pass
wall, used = time.perf_counter() - start, cpu() - start_cpu
with open("/proc/self/status") as status:
    peak = int(next(line.split()[1] for line in status if line.startswith("VmHWM:")))
with open(sys.argv[1], "w") as out:
    out.write(repr((wall, used, peak)))
"""
"""The child process: imports waybook, then times the operation alone (start-up is not counted): it
writes the operation's wall seconds, its user + system seconds (the process's own rusage, the counters
`wait4` reports for the whole process, read before and after the operation) and its own peak RSS
(VmHWM, KiB). Not `wait4`'s `ru_maxrss`: Linux carries the parent's high-water mark across the (v)fork
and exec into the child's, and this bench's parent writes the sessions (bench/home.py found the same)."""


BIG = 320_000
"""The issue's third size, run with `--big` (each of its operations takes minutes on this shape)."""

DEFAULT_OPS = [op for op in OPS if op != "tree --json"]
"""`tree --json` lists every branch's whole path: on the deep branchy shape that document is quadratic
in the records (700 MB at 20,000 records), so it is measured only when asked for (its memory stays
flat: the paths are written one at a time)."""


@attrs.frozen
class Run:
    """One operation in its own process: wall and CPU seconds of the operation alone, and peak RSS."""

    wall: float
    """Seconds from the end of the imports to the end of the operation (the machine's load is in it)."""
    cpu: float
    """User + system seconds of the operation alone: the work done, whatever the load (time spent
    waiting for a core busy elsewhere does not count here)."""
    process_cpu: float
    """User + system seconds of the whole process from `wait4` (the interpreter's start, the imports,
    about 0.9 s, and its exit, which frees what the operation left: kept beside the operation's)."""
    mib: float
    """Peak RSS in MiB (the process's own VmHWM)."""


FAILED = Run(wall=float("inf"), cpu=float("inf"), process_cpu=float("inf"), mib=float("inf"))


def run_once(code: Path, op: str, path: Path, scratch: Path, timeout: float) -> Run:
    """`op` on `path` in a new process of the checkout at `code`; `FAILED` when it fails or passes
    `timeout`."""
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
                return FAILED
            time.sleep(0.02)
    if not timing.exists():
        return FAILED
    wall, cpu, peak_kib = ast.literal_eval(timing.read_text())
    process_cpu = usage.ru_utime + usage.ru_stime
    return Run(wall=wall, cpu=cpu, process_cpu=process_cpu, mib=peak_kib / 1024)


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
    """Per operation and size: the branchy session's CPU seconds per record (median over the rounds)."""
    loads: list[float] = []
    print(f"code {code}; load average {os.getloadavg()[0]:.1f}")
    print(
        f"{'operation':<14}{'records':>9}{'cpu br s':>10}{'cpu lin s':>10}{'us/rec br':>10}"
        f"{'cpu br/lin':>11}{'wall br s':>10}{'wall br/lin':>12}{'MiB br':>8}{'MiB lin':>8}"
        f"{'mem br/lin':>11}{'load':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        for n in args.records:
            files = {shape: scratch / f"{shape}-{n}.jsonl" for shape in ("branchy", "linear")}
            for shape, path in files.items():
                write_shape_file(path, n, branchy=shape == "branchy")
            for op in args.ops:
                runs: dict[str, list[Run]] = {"branchy": [], "linear": []}
                row_loads: list[float] = []
                for round_ in range(args.rounds):
                    order = ("branchy", "linear") if round_ % 2 == 0 else ("linear", "branchy")
                    for shape in order:
                        row_loads.append(os.getloadavg()[0])
                        runs[shape].append(run_once(code, op, files[shape], scratch, args.timeout))
                    if runs["branchy"][-1] is FAILED:
                        break  # failed or timed out: no point repeating it
                loads.extend(row_loads)
                pairs = list(zip(runs["branchy"], runs["linear"], strict=True))
                cpu_ratio = statistics.median(b.cpu / max(lin.cpu, 1e-6) for b, lin in pairs)
                wall_ratio = statistics.median(b.wall / max(lin.wall, 1e-6) for b, lin in pairs)
                mem_ratio = statistics.median(b.mib / lin.mib for b, lin in pairs)
                cpu_b = statistics.median(r.cpu for r in runs["branchy"])
                cpu_l = statistics.median(r.cpu for r in runs["linear"])
                wall_b = statistics.median(r.wall for r in runs["branchy"])
                wall_l = statistics.median(r.wall for r in runs["linear"])
                mib_b = statistics.median(r.mib for r in runs["branchy"])
                mib_l = statistics.median(r.mib for r in runs["linear"])
                load = statistics.median(row_loads)
                per_record[op][n] = cpu_b / n
                print(
                    f"{op:<14}{n:>9}{cpu_b:>10.2f}{cpu_l:>10.2f}{1e6 * cpu_b / n:>10.1f}"
                    f"{cpu_ratio:>11.2f}{wall_b:>10.2f}{wall_ratio:>12.2f}{mib_b:>8.0f}{mib_l:>8.0f}"
                    f"{mem_ratio:>11.2f}{load:>6.1f}",
                    flush=True,
                )
                rows.append(
                    {
                        "name": f"{op} at {n} records: CPU per record, branchy / linear",
                        "operation": op,
                        "records": n,
                        "rounds": len(pairs),
                        "branchy_cpu_seconds": cpu_b,
                        "linear_cpu_seconds": cpu_l,
                        "branchy_cpu_us_per_record": 1e6 * cpu_b / n,
                        "ratio": cpu_ratio,
                        "branchy_process_cpu_seconds": statistics.median(
                            r.process_cpu for r in runs["branchy"]
                        ),
                        "linear_process_cpu_seconds": statistics.median(
                            r.process_cpu for r in runs["linear"]
                        ),
                        "branchy_wall_seconds": wall_b,
                        "linear_wall_seconds": wall_l,
                        "wall_ratio": wall_ratio,
                        "load_average": [min(row_loads), max(row_loads)],
                        "goal": "at most 2",
                        "passed": cpu_ratio <= 2,
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
                f"{op}: CPU per record at {large} / at {small} records (branchy): {growth:.2f}; "
                f"most / least over the {len(costs)} sizes: {spread:.2f}"
            )
            rows.append(
                {
                    "name": f"{op}: CPU per record at {large} / at {small} records, branchy",
                    "operation": op,
                    "ratio": growth,
                    "goal": "at most 2",
                    "passed": growth <= 2,
                }
            )
            rows.append(
                {
                    "name": f"{op}: CPU per record, most / least over {len(costs)} sizes, branchy",
                    "operation": op,
                    "sizes": sorted(costs),
                    "us_per_record": {str(k): 1e6 * v for k, v in sorted(costs.items())},
                    "ratio": spread,
                    "goal": "at most 2",
                    "passed": spread <= 2,
                }
            )
    if loads:
        print(f"load average over the run: {min(loads):.1f} to {max(loads):.1f}")
    args.out.write_text(
        json.dumps(
            {"code": str(code), "load_average": [min(loads, default=0), max(loads, default=0)], "rows": rows},
            indent=1,
        )
        + "\n"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
