"""Every importer linear in what it imports (issue 50): a row per importer at two sizes, 4x apart.

- Claude Code and Codex: a folder of S and 4S real-shaped sessions (bench/home.py's generator, the same
  seed), walked with `sessions_in_folder` and each journal staged (every rule checked, every record
  sealed), as `waybook import` does before it writes: CPU seconds per session, and per record.
- Pi: the real Pi session of the fixtures (1,003 entries) cut to a quarter and imported whole
  (`import_pi`), and the whole: CPU seconds per entry (a Pi session is one file; its size is its entries).
- OpenCode: a parent session with C and 4C sub-agent sessions, each started by a task call (the red team's
  shape: 2,000 sessions 2.9 s, 8,000 sessions 23.7 s before the fix): CPU seconds per session.

Each row pairs the two sizes in one run, alternately (the order flipped each round), for `--rounds`
rounds, and reports the median of the rounds' ratios `cost per unit at the larger / at the smaller`
(goal at most 2: a constant cost per session), and beside it the same ratio per record made (the
generated sessions' lengths vary, so a small folder's mix moves its cost per session). CPU time
(`time.process_time`), so the machine's load moves it less than the wall time.

Run: `python -m bench.importers [--rounds 3] [--sessions 100] [--subsessions 2000]`; writes
bench/importers.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.home import FIXTURES, generate
from tests.helpers.shapes import opencode_parent_of
from waybook.commands.importing import stage
from waybook.formats import ImportedSession, claude_code, codex
from waybook.formats.opencode import import_opencode
from waybook.formats.opencode._storage import _Skips, _tree
from waybook.formats.pi import import_pi

OUT = Path(__file__).with_name("importers.json")
Work = Callable[[], tuple[int, int]]
"""One import: returns (units the cost is divided by, records made)."""


def folder_work(walk: Callable[[Path], Any], folder: Path) -> Work:
    def run() -> tuple[int, int]:
        sessions = records = 0
        for found in walk(folder):
            if isinstance(found, ImportedSession):
                sessions += 1
                for journal in found.journals:
                    records += stage(journal.journal, journal.records).head().seq
        return sessions, records

    return run


def pi_work(data: bytes) -> Work:
    def run() -> tuple[int, int]:
        imported = import_pi(data)
        return sum(1 for line in data.splitlines() if line.strip()), len(imported.records)

    return run


def opencode_work(children: int) -> Work:
    sessions, messages = opencode_parent_of(children)

    def run() -> tuple[int, int]:
        stored = _tree("ses_p", sessions, lambda sid: messages.get(sid, ()), _Skips(lenient=False))
        imported = import_opencode(stored, name="main")
        journals = (imported.records, *(sub.records for sub in imported.subagents))
        return children + 1, sum(len(records) for records in journals)

    return run


def cpu(work: Work) -> tuple[float, int, int]:
    start = time.process_time()
    units, records = work()
    return time.process_time() - start, units, records


def paired(name: str, unit: str, small: Work, large: Work, rounds: int) -> dict[str, object]:
    ratios, record_ratios, per_small, per_large = [], [], [], []
    sizes = (0, 0)
    for round_ in range(rounds):
        got = {}
        for which in ("small", "large") if round_ % 2 == 0 else ("large", "small"):
            got[which] = cpu(small if which == "small" else large)
        (s_cpu, s_units, s_records), (l_cpu, l_units, l_records) = got["small"], got["large"]
        per_small.append(s_cpu / s_units)
        per_large.append(l_cpu / l_units)
        ratios.append(per_large[-1] / per_small[-1])
        record_ratios.append((l_cpu / l_records) / (s_cpu / s_records))
        sizes = (s_units, l_units)
        records = (s_records, l_records)
    ratio = statistics.median(ratios)
    row = {
        "name": f"{name}: CPU per {unit} at {sizes[1]} / at {sizes[0]} {unit}s",
        "small": sizes[0],
        "large": sizes[1],
        "records": records,
        "us_per_unit_small": 1e6 * statistics.median(per_small),
        "us_per_unit_large": 1e6 * statistics.median(per_large),
        "ratio": ratio,
        "goal": "at most 2",
        "passed": ratio <= 2,
        "per_record_ratio": statistics.median(record_ratios),
    }
    print(
        f"{name:<12}{unit:>9}{sizes[0]:>8}{sizes[1]:>8}{row['us_per_unit_small']:>12.0f}"
        f"{row['us_per_unit_large']:>12.0f}{ratio:>8.2f}{row['per_record_ratio']:>12.2f}",
        flush=True,
    )
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=100, help="Claude Code and Codex: S (and 4S)")
    parser.add_argument("--subsessions", type=int, default=2000, help="OpenCode: C (and 4C)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    rows = []
    print(
        f"{'importer':<12}{'unit':>9}{'small':>8}{'large':>8}{'us small':>12}{'us large':>12}{'ratio':>8}"
        f"{'per record':>12}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        homes = [generate(Path(tmp) / f"home-{s}", 2 * s) for s in (args.sessions, 4 * args.sessions)]
        for name, walk in (
            ("claude-code", claude_code.sessions_in_folder),
            ("codex", codex.sessions_in_folder),
        ):
            small, large = (folder_work(walk, home[name]) for home in homes)
            rows.append(paired(name, "session", small, large, args.rounds))
    pi = (FIXTURES / "pi" / "before-compaction.jsonl").read_bytes()
    lines = pi.splitlines(keepends=True)
    quarter = b"".join(lines[: len(lines) // 4])
    rows.append(paired("pi", "entry", pi_work(quarter), pi_work(pi), args.rounds))
    c = args.subsessions
    rows.append(paired("opencode", "session", opencode_work(c), opencode_work(4 * c), args.rounds))
    args.out.write_text(json.dumps({"rows": rows}, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
