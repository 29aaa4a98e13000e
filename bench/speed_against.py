"""The writer's speed against another revision (bench/speed.py `--only against --rev REV`): the same
loops run on this checkout's `waybook/` and on REV's, in alternate processes, paired.

Each round runs one process per tree (the order flipped each round); a process times only its loop, in
CPU seconds (on a busy shared machine wall time mostly measures the other processes), and prints them.
The ratio of a row is the median of the per-round ratios REV time / this time, so 1.00 is as fast as
REV and above 1 is faster. What a row proves: a change to the writer (issue 39's
session core, say) kept `Session.user`, the one-record append and the join at a journal's position as
fast as they were.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.measure import Row  # noqa: E402
from bench.speed_pairing import PairedRow  # noqa: E402

DEFAULT_REV = "main"

_LOOPS = """
import asyncio, sys, time
from pathlib import Path
from waybook import AsyncSession, GENESIS, InMemoryJournal, JsonlJournal, Session
from waybook.model import Header, NewRecord, UserMessage, text

kind, n, tmp = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
words = text("the agent read the file, ran the tests and summarised what failed " * 2 + "in the end")
path = tmp / "journal.jsonl"
path.unlink(missing_ok=True)
if kind == "session_user_jsonl":
    start = time.process_time()
    with JsonlJournal(path, sidecar=False, durability="flush") as journal:
        session = Session.create(journal, journal_id="bench")
        for _ in range(n):
            session.user(words)
elif kind == "journal_append_jsonl":
    records = [NewRecord(id="h", at="2026-12-01T09:00:00.000Z", body=Header(journal="bench", creator="b"))]
    parent = None
    for i in range(n):
        records.append(NewRecord(id=f"n{i}", at="2026-12-01T09:00:00.000Z",
                                 body=UserMessage(parent=parent, content=words)))
        parent = f"n{i}"
    start = time.process_time()
    with JsonlJournal(path, sidecar=False, durability="flush") as journal:
        head = GENESIS
        for record in records:
            head = journal.append((record,), expected=head).head
elif kind == "session_user_memory":
    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="bench")
    start = time.process_time()
    for _ in range(n):
        session.user(words)
elif kind == "session_join_memory":
    journal = InMemoryJournal()
    session = Session.create(journal, journal_id="bench")
    for _ in range(99):
        session.user(words)
    start = time.process_time()
    for _ in range(n):
        Session(journal)
elif kind == "async_user_memory":
    async def write():
        session = await AsyncSession.create(InMemoryJournal(), journal_id="bench")
        for _ in range(n):
            await session.user(words)
    start = time.process_time()
    asyncio.run(write())
elif kind in ("journal_open_read_jsonl", "journal_verify_jsonl"):
    with JsonlJournal(path, sidecar=False, durability="none") as journal:
        session = Session.create(journal, journal_id="bench")
        for _ in range(n):
            session.user(words)
    from waybook.journal import verify_file
    start = time.process_time()
    for _ in range(5):
        if kind == "journal_verify_jsonl":
            verify_file(path)
        else:
            with JsonlJournal(path, create=False, readonly=True, sidecar=False) as journal:
                for _record in journal.read():
                    pass
else:
    raise SystemExit(f"unknown loop {kind}")
print(time.process_time() - start)
"""

LOOPS: tuple[tuple[str, str, int, str], ...] = (
    ("session_user_jsonl", "speed.session.append.flush", 5_000, "Session.user per record, JSONL under flush"),
    ("journal_append_jsonl", "speed.journal.append.flush", 5_000, "JsonlJournal.append of one record"),
    ("session_user_memory", "speed.session.user.memory", 20_000, "Session.user on an InMemoryJournal"),
    (
        "session_join_memory",
        "speed.session.join.memory",
        20_000,
        "Session(journal) joining a 100-record InMemoryJournal at its position (the fast path)",
    ),
    ("async_user_memory", "speed.async_session.user.memory", 5_000, "AsyncSession.user, InMemoryJournal"),
    (
        "journal_open_read_jsonl",
        "speed.journal.open_read.jsonl",
        5_000,
        "open a 5,000-record JSONL journal (no sidecar) and read every record, 5 times",
    ),
    (
        "journal_verify_jsonl",
        "speed.journal.verify.jsonl",
        5_000,
        "verify_file of a 5,000-record journal, 5 times",
    ),
)
"""(loop, row name, operations, what it times)."""


def against_rows(tmp: Path, quick: bool, rev: str = DEFAULT_REV) -> Iterator[Row]:
    baseline_src = tmp / "against-src"
    try:
        baseline_src.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", rev, "waybook"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(baseline_src)], input=archive.stdout, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        yield Row(f"speed.against.{rev}", 0, "ops/s", None, "", None, f"skipped: no tree at {rev} ({exc})")
        return
    rounds = 5 if quick else 11
    for loop, name, count, note in LOOPS:
        count = count // 4 if quick else count
        rev_times: list[float] = []
        now_times: list[float] = []
        for round_ in range(rounds):
            sides = ((baseline_src, rev_times), (ROOT, now_times))
            for src, times in sides if round_ % 2 == 0 else sides[::-1]:
                times.append(_time(src, loop, count, tmp))
        ratio = statistics.median(b / v for b, v in zip(rev_times, now_times, strict=True))
        yield PairedRow(
            f"{name}.against_{rev}",
            count / statistics.median(now_times),
            "ops/s",
            count / statistics.median(rev_times),
            f"~1.00 of {rev}",
            None,
            f"{note}; baseline the same loop at {rev}",
            paired_ratio=ratio,
        )


def _time(src: Path, loop: str, count: int, tmp: Path) -> float:
    work = Path(tempfile.mkdtemp(dir=tmp))
    try:
        out = subprocess.run(
            [sys.executable, "-c", _LOOPS, loop, str(count), str(work)],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONPATH": str(src)},
            cwd=work,
        )
        return float(out.stdout.strip())
    finally:
        shutil.rmtree(work, ignore_errors=True)
