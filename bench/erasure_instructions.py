"""bench/erasure.py's rows counted in CPU instructions (valgrind's callgrind), not seconds.

On the shared 2-core machine the wall-clock rows swing by 0.2 from run to run; an instruction count of
the same work does not. Each side runs in its own process under callgrind, after the same setup (the
imports, the real sessions or journal files made ready); a side's count is its process's minus that of
a process that only does the setup. The ratio is baseline instructions / value instructions: the rate
ratio a machine with no contention would show, cache and branch effects aside.

Usage: python bench/erasure_instructions.py. Needs `valgrind`. Prints a table and writes its JSON
(erasure_instructions.json, beside this file, once it has run). Takes minutes (callgrind runs
Python about 50 times slower).
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
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


def side(what: str, folder: Path) -> None:
    """One side's work (or only the setup, for `setup`), in this process."""
    import msgspec

    from bench.erasure import appender, header  # noqa: F401  (the same imports for every side)
    from waybook.journal import InMemoryJournal, verify_file
    from waybook.model import SEALED_SCHEMA, NewRecord

    raw = pickle.loads((folder / "sessions.pkl").read_bytes())
    sessions = [msgspec.json.decode(s, type=list[NewRecord]) for s in raw]
    globs = {"prove-old": "s*-v1.jsonl", "prove-new": "s*-v2.jsonl", "prove-erased": "erased*.jsonl"}
    if what.startswith("append-"):
        schema = 1 if what == "append-old" else SEALED_SCHEMA
        appender(sessions, schema, lambda i: InMemoryJournal(f"s{i}"))()
    elif what in globs:
        for path in sorted(folder.glob(globs[what])):
            assert verify_file(path).ok


def prepare(folder: Path) -> None:
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


def instructions(what: str, folder: Path) -> int:
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        __file__,
        "--side",
        what,
        str(folder),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=ROOT)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        msg = f"callgrind reported no count for {what}: {done.stderr[-500:]}"
        raise RuntimeError(msg)
    return int(found.group(1))


def main() -> None:
    if sys.argv[1:2] == ["--side"]:
        side(sys.argv[2], Path(sys.argv[3]))
        return
    if shutil.which("valgrind") is None:
        sys.exit("bench/erasure_instructions.py needs valgrind (apt-get install valgrind)")
    with tempfile.TemporaryDirectory(prefix="waybook-bench-erasure-instr-") as tmp:
        folder = Path(tmp)
        prepare(folder)
        setup = instructions("setup", folder)
        counts = {w: instructions(w, folder) - setup for w in sorted({r[i] for r in ROWS for i in (1, 2)})}
    rows = []
    for name, baseline, value, goal in ROWS:
        ratio = counts[baseline] / counts[value]
        rows.append(
            {
                "name": name,
                "value_instructions": counts[value],
                "baseline_instructions": counts[baseline],
                "ratio": round(ratio, 3),
                "goal": goal,
                "passed": None if goal is None else ratio >= goal,
            }
        )
    width = max(len(r["name"]) for r in rows)  # type: ignore[arg-type]
    print(f"{'row':<{width}}  {'value Minstr':>12}  {'baseline':>12}  {'ratio':>6}  goal")
    for r in rows:
        verdict = "" if r["goal"] is None else f">= {r['goal']} {'ok' if r['passed'] else 'MISSED'}"
        figures = f"{r['value_instructions'] / 1e6:>12,.0f}  {r['baseline_instructions'] / 1e6:>12,.0f}"
        print(f"{r['name']:<{width}}  {figures}  {r['ratio']:>6.3f}  {verdict}")
    out = Path(__file__).parent / "erasure_instructions.json"
    out.write_text(json.dumps({"unit": "instructions", "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
