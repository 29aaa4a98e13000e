"""The many-sessions speed rows (bench/speed.py): S sessions x 500 records reopened with a full proof
against SQLite reading the same rows, and 200 x 500 created, written and reopened against the same
script at BASELINE_REV (issue 15's start).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.measure import Row  # noqa: E402
from bench.speed_pairing import row  # noqa: E402
from bench.workload import proof_floor, write_journal_file  # noqa: E402

BASELINE_REV = "cffdb08"
"""The commit issue 15 started from: the "today" of its 200-session target."""


# --- 200 sessions x 500 records ----------------------------------------------------------------------


def many_reopens_row(tmp: Path, quick: bool, sessions: int | None = None) -> Iterator[Row]:
    import sqlite3

    from waybook import JsonlJournal

    sessions = sessions or (40 if quick else 200)
    root = tmp / "many"
    root.mkdir()
    db = sqlite3.connect(tmp / "many.db")
    db.execute(
        "CREATE TABLE records (journal_id TEXT, seq INTEGER, line BLOB, PRIMARY KEY (journal_id, seq))"
    )
    for s in range(sessions):
        lines = write_journal_file(root / f"s{s}.jsonl", 500)
        db.executemany(
            "INSERT INTO records VALUES (?, ?, ?)", ((f"s{s}", i + 1, x) for i, x in enumerate(lines))
        )
    db.commit()

    def sqlite_rows() -> None:
        for s in range(sessions):
            db.execute("SELECT line FROM records WHERE journal_id = ? ORDER BY seq", (f"s{s}",)).fetchall()

    def full_proof() -> None:
        for s in range(sessions):
            with JsonlJournal(root / f"s{s}.jsonl", create=False, sidecar=False, readonly=True) as journal:
                journal.head()

    yield row(
        f"speed.reopen.{sessions}x500.full_proof",
        sessions,
        sqlite_rows,
        full_proof,
        unit="journals/s",
        goal=0.5,
        rounds=5,
        note=f"{sessions} sessions x 500 records each reopened with a full proof; baseline SQLite reading "
        "the same rows (one SELECT per session, lines fetched, no check)",
    )
    yield row(
        f"speed.reopen.{sessions}x500.proof_floor",
        sessions,
        sqlite_rows,
        lambda: [proof_floor(root / f"s{s}.jsonl") for s in range(sessions)],
        unit="journals/s",
        goal=None,
        rounds=5,
        note="not an adapter: each file's chain alone, inline (read, split, decode, one SHA-256 per line, "
        "compare; no rules, lock or journal): what any full proof of these files costs; same baseline",
    )
    db.close()


_SCENARIO = """
import sys, time
from pathlib import Path
from waybook import JsonlJournal, Session
root, sessions, records = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
text = "the agent read the file, ran the tests and summarised what failed " * 2
start = time.perf_counter()
for s in range(sessions):
    with JsonlJournal.create(root / f"s{s}.jsonl", journal_id=f"s{s}", durability="flush") as journal:
        session = Session(journal)
        for i in range(records - 1):
            session.user(text) if i % 2 == 0 else session.assistant(text)
for s in range(sessions):
    with JsonlJournal(root / f"s{s}.jsonl", create=False) as journal:
        Session(journal)
        journal.head()
print(time.perf_counter() - start)
"""


def many_sessions_row(tmp: Path, quick: bool) -> Iterator[Row]:
    sessions, records = (40, 500) if quick else (200, 500)
    baseline_src = tmp / "baseline-src"
    try:
        baseline_src.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", BASELINE_REV, "waybook"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(baseline_src)], input=archive.stdout, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        yield Row(
            "speed.sessions.200x500", 0, "s", None, ">= 2x today", None, f"skipped: no baseline ({exc})"
        )
        return

    def run(src: Path) -> float:
        root = Path(tempfile.mkdtemp(dir=tmp))
        env = {**os.environ, "PYTHONPATH": str(src)}
        out = subprocess.run(
            [sys.executable, "-c", _SCENARIO, str(root), str(sessions), str(records)],
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
        shutil.rmtree(root, ignore_errors=True)
        return float(out.stdout.strip())

    today: list[float] = []
    now: list[float] = []
    for _ in range(2 if quick else 3):
        today.append(run(baseline_src))
        now.append(run(ROOT))
    value, base = min(now), min(today)
    yield Row(
        "speed.sessions.200x500",
        1 / value,
        "runs/s",
        1 / base,
        ">= 2x today",
        base >= 2 * value,
        f"{sessions} sessions x {records} records, flush policy: create + write each, then reopen + verify "
        f"each; {value:.2f} s now vs {base:.2f} s at {BASELINE_REV} (best of alternate runs)",
    )
