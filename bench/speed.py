"""Core speed benchmarks (issues 15 and 29): each row a ratio to its baseline, paired in one run.

Run through `python bench/run.py --only speed` (or `python bench/speed.py [--quick]` for these rows
alone). Every ratio is paired: the row's work and its baseline run alternately (the order flipped each
round), several rounds, and the ratio reported is the median of the per-round ratios, so a machine
whose speed drifts over seconds moves both sides together. Each row's name says what it proves:
`full_proof` (every byte decoded and proved: chain, batches, rules), `checkpoint` (the default open:
the prefix hashed against its checkpoint, the tail proved), `trusted_checkpoint` (no proof of the
prefix: `trust_checkpoint=True`), `no_proof` (raw reading). bench/README.md lists each row, its
baseline and its goal.

This file gathers the rows; they live by area beside it: speed_pairing.py (how a row is paired),
speed_appends.py (appends, group commit), speed_reads.py (open, verify, resume, reopen),
speed_sessions.py (many sessions, the baseline revision).
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.measure import Row  # noqa: E402
from bench.speed_against import DEFAULT_REV, against_rows  # noqa: E402
from bench.speed_appends import append_rows, durable_rows, group_rows  # noqa: E402
from bench.speed_memory import memory_rows  # noqa: E402
from bench.speed_reads import open_rows, reopen_rows, resume_rows  # noqa: E402
from bench.speed_sessions import many_reopens_row, many_sessions_row  # noqa: E402

AREAS = ("appends", "memory", "durable", "reads", "sessions", "group")
"""What `--only AREA` picks: appends (speed_appends.py), memory (in memory against eventsourcing's POPO
recorder: speed_memory.py), durable (the default append, on disk when it
returns, against raw write + fsync and against flush), reads (open, verify, resume, reopen, the many
sessions' full-proof reopen), sessions (200 x 500 against BASELINE_REV), group (group commit); and, only
when named, against (the writer's loops against another revision, `--rev REV`: speed_against.py)."""


def bench_speed(
    quick: bool, only: tuple[str, ...] = AREAS, sessions: int | None = None, rev: str = DEFAULT_REV
) -> Iterator[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="waybook-speed-"))
    try:
        if "appends" in only:
            yield from append_rows(tmp, quick)
        if "memory" in only:
            yield from memory_rows(quick)
        if "durable" in only:
            yield from durable_rows(tmp, quick)
        if "reads" in only:
            yield from open_rows(tmp, quick)
            yield from resume_rows(tmp, quick)
            yield from reopen_rows(tmp, quick)
            yield from many_reopens_row(tmp, quick, sessions)
        if "sessions" in only:
            yield from many_sessions_row(tmp, quick)
        if "group" in only:
            yield from group_rows(tmp, quick)
        if "against" in only:
            yield from against_rows(tmp, quick, rev)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    """`[--quick] [--only AREA ...] [--sessions S] [--rev REV]`: `--sessions` sets the many-sessions
    reopen's S (default 200; 40 with --quick); `--rev` the revision `--only against` compares with."""
    quick = "--quick" in sys.argv
    pairs = list(zip(sys.argv, sys.argv[1:], strict=False))
    only = tuple(a for flag, a in pairs if flag == "--only") or AREAS
    sessions = next((int(a) for flag, a in pairs if flag == "--sessions"), None)
    rev = next((a for flag, a in pairs if flag == "--rev"), DEFAULT_REV)
    print(f"{'benchmark':40} {'value':>12} {'baseline':>12} {'ratio':>7}  {'target':26} ok")
    for row in bench_speed(quick, only, sessions, rev):
        ratio = f"{row.ratio:7.2f}" if row.ratio is not None else " " * 7
        ok = {True: "yes", False: "NO", None: ""}[row.passed]
        base = f"{row.baseline:12,.0f}" if row.baseline else " " * 12
        print(
            f"{row.name:40} {row.value:12,.1f} {base} {ratio}  {row.target:26} {ok}  {row.note}", flush=True
        )
    return 0


if __name__ == "__main__":
    started = time.perf_counter()
    code = main()
    print(f"({time.perf_counter() - started:.0f} s)")
    sys.exit(code)
