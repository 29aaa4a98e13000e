"""bench/erasure.py's rows counted in CPU instructions (valgrind's callgrind), not seconds.

On the shared 2-core machine the wall-clock rows swing by 0.2 from run to run; an instruction count of
the same work does not, if everything around the work is held still. Each side runs in its own process
under callgrind: the setup (the imports, the real sessions or journal files made ready), then its work
once as a warm-up (the first call's lazy work: msgspec's type info, regexes, the salt and id pools),
then `MEASURED` repetitions inside `functools.reduce`. Callgrind counts only inside that C function
(`--toggle-collect=functools_reduce`; nothing else in the process calls it), so setup, imports,
warm-up and compiling bytecode are outside the count. Every process gets `PYTHONHASHSEED=0` (a random
hash seed moves a count by about 0.4%) and reads bytecode compiled beforehand into a cache outside the
checkout. Both sides append the same records (the same ids, times and bodies); only the salts are
random, and hashing and hex encoding do not depend on their values. The ratio is baseline
instructions / value instructions: the rate ratio a machine with no contention would show, cache and
branch effects aside.

Usage: python bench/erasure_instructions.py [--rows append|all] [--repeat N] [--keep DIR]. Needs
`valgrind`. Prints instructions per record of each side and the ratio (the median over N counts, with
their spread) and writes erasure_instructions.json beside this file. `--keep DIR` keeps each callgrind
output file there, for `callgrind_annotate`. Takes minutes (callgrind runs Python about 50 times
slower); `--rows append` counts only the append row.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

ROWS = (
    ("append in memory: sealed (salt + commitment) vs today's", "append-old", "append-new", 0.91),
    ("full proof (verify_file): sealed vs today's", "prove-old", "prove-new", 0.87),
    ("full proof with a tenth of the records erased vs none", "prove-new", "prove-erased", None),
)
MEASURED = 1
"""Repetitions of a side's work inside the counted window (after one warm-up outside it)."""


def side(what: str, folder: Path, repetitions: int) -> None:
    """One side's work in this process: the setup, the work once, then the work `repetitions` times
    inside `functools.reduce` (the window callgrind counts)."""
    import functools

    import msgspec

    from bench.erasure import appender, header  # noqa: F401  (the same imports for every side)
    from waybook.journal import InMemoryJournal, verify_file
    from waybook.model import SEALED_SCHEMA, NewRecord

    raw = pickle.loads((folder / "sessions.pkl").read_bytes())
    sessions = [msgspec.json.decode(s, type=list[NewRecord]) for s in raw]
    globs = {"prove-old": "s*-v1.jsonl", "prove-new": "s*-v2.jsonl", "prove-erased": "erased*.jsonl"}

    def work() -> None:
        if what.startswith("append-"):
            schema = 1 if what == "append-old" else SEALED_SCHEMA
            appender(sessions, schema, lambda i: InMemoryJournal(f"s{i}"))()
        else:
            for path in paths:
                assert verify_file(path).ok

    paths = sorted(folder.glob(globs.get(what, "none")))
    work()
    functools.reduce(lambda _, __: work(), range(repetitions), None)


def prepare(folder: Path) -> int:
    """The real sessions and the journal files every side reads, in `folder`; returns how many records
    an append side appends (each session's header and records)."""
    import msgspec

    from bench.erasure import real_records, write_files
    from waybook.journal import JsonlJournal, erase
    from waybook.model import SEALED_SCHEMA

    sessions = real_records()
    (folder / "sessions.pkl").write_bytes(pickle.dumps([msgspec.json.encode(s) for s in sessions]))
    write_files(sessions, 1, folder)
    for index, path in enumerate(write_files(sessions, SEALED_SCHEMA, folder)):
        copy = folder / f"erased{index}.jsonl"
        copy.write_bytes(path.read_bytes())
        with JsonlJournal(copy, sidecar=False) as journal:
            erase(journal, range(2, journal.head().seq + 1, 10), reason="bench")
    return sum(len(s) + 1 for s in sessions)


def _environment(folder: Path) -> dict[str, str]:
    env = dict(os.environ, PYTHONHASHSEED="0", PYTHONPYCACHEPREFIX=str(folder / "pycache"))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_first(folder: Path) -> None:
    """Run the setup once natively, so every module the sides import is compiled into the cache."""
    command = [sys.executable, __file__, "--side", "append-new", str(folder), "0"]
    subprocess.run(command, check=True, cwd=ROOT, env=_environment(folder))


def instructions(what: str, folder: Path, keep: Path | None, attempt: int) -> float:
    """Instructions of one warm repetition of `what`'s work."""
    out = "/dev/null" if keep is None else str(keep / f"callgrind.{what}.{attempt}.out")
    command = [
        "valgrind",
        "--tool=callgrind",
        "--toggle-collect=functools_reduce",
        f"--callgrind-out-file={out}",
        sys.executable,
        __file__,
        "--side",
        what,
        str(folder),
        str(MEASURED),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, check=True, cwd=ROOT, env=_environment(folder)
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        msg = f"callgrind reported no count for {what}: {done.stderr[-500:]}"
        raise RuntimeError(msg)
    return int(found.group(1)) / MEASURED


def main() -> None:
    if sys.argv[1:2] == ["--side"]:
        side(sys.argv[2], Path(sys.argv[3]), int(sys.argv[4]))
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", choices=("append", "all"), default="all")
    parser.add_argument("--repeat", type=int, default=1, help="count every side this many times")
    parser.add_argument("--keep", type=Path, help="keep callgrind's output files in this folder")
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("bench/erasure_instructions.py needs valgrind (apt-get install valgrind)")
    chosen = ROWS[:1] if args.rows == "append" else ROWS
    sides = sorted({r[i] for r in chosen for i in (1, 2)})
    counts: dict[str, list[float]] = {s: [] for s in sides}
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="waybook-bench-erasure-instr-") as tmp:
        folder = Path(tmp)
        records = prepare(folder)
        compile_first(folder)
        for attempt in range(args.repeat):
            for s in sides:
                counts[s].append(instructions(s, folder, args.keep, attempt))
    rows = []
    for name, baseline, value, goal in chosen:
        ratios = [b / v for b, v in zip(counts[baseline], counts[value], strict=True)]
        ratio = statistics.median(ratios)
        rows.append(
            {
                "name": name,
                "value_instructions": statistics.median(counts[value]),
                "baseline_instructions": statistics.median(counts[baseline]),
                "value_per_record": round(statistics.median(counts[value]) / records),
                "baseline_per_record": round(statistics.median(counts[baseline]) / records),
                "ratio": round(ratio, 4),
                "ratios": [round(r, 4) for r in ratios],
                "ratio_spread": round((max(ratios) - min(ratios)) / ratio, 5),
                "value_spread": round((max(counts[value]) - min(counts[value])) / min(counts[value]), 5),
                "baseline_spread": round(
                    (max(counts[baseline]) - min(counts[baseline])) / min(counts[baseline]), 5
                ),
                "goal": goal,
                "passed": None if goal is None else ratio >= goal,
            }
        )
    width = max(len(str(r["name"])) for r in rows)
    print(f"{records} records a repetition; instructions of one warm repetition, median of {args.repeat}")
    print(f"{'row':<{width}}  {'value/rec':>9}  {'base/rec':>9}  {'ratio':>6}  {'spread':>7}  goal")
    for r in rows:
        verdict = "" if r["goal"] is None else f">= {r['goal']} {'ok' if r['passed'] else 'MISSED'}"
        figures = f"{r['value_per_record']:>9,}  {r['baseline_per_record']:>9,}"
        print(f"{r['name']:<{width}}  {figures}  {r['ratio']:>6.4f}  {r['ratio_spread']:>7.2%}  {verdict}")
    out = Path(__file__).parent / "erasure_instructions.json"
    result = {"unit": "instructions", "records": records, "repeat": args.repeat, "rows": rows}
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
