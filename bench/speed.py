"""Core speed benchmarks (issues 15 and 29): each row a ratio to its baseline, paired in one run.

Run through `python bench/run.py --only speed` (or `python bench/speed.py [--quick]` for these rows
alone). Every ratio is paired: the row's work and its baseline run alternately (the order flipped each
round), several rounds, and the ratio reported is the median of the per-round ratios, so a machine
whose speed drifts over seconds moves both sides together. Each row's name says what it proves:
`full_proof` (every byte decoded and proved: chain, batches, rules), `checkpoint` (the default open:
the prefix hashed against its checkpoint, the tail proved), `trusted_checkpoint` (no proof of the
prefix: `trust_checkpoint=True`), `no_proof` (raw reading). bench/README.md lists each row, its
baseline and its goal.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import attrs  # noqa: E402

from bench.measure import Row  # noqa: E402
from bench.workload import session_records, write_journal_file  # noqa: E402

BASELINE_REV = "cffdb08"
"""The commit issue 15 started from: the "today" of its 200-session target."""


@attrs.frozen
class PairedRow(Row):
    """A row whose ratio is the median of per-round ratios (not the ratio of two separate bests)."""

    paired_ratio: float | None = None

    @property
    def ratio(self) -> float | None:
        return self.paired_ratio


def paired(
    count: int, baseline: Callable[[], object], value: Callable[[], object], *, rounds: int = 7
) -> tuple[float, float, float]:
    """Run `baseline` and `value` (each doing `count` operations) alternately for `rounds` rounds,
    flipping which goes first each round. Returns (median baseline rate, median value rate, median of
    the per-round ratios value rate / baseline rate)."""
    base_times: list[float] = []
    value_times: list[float] = []
    for round_ in range(rounds):
        order = ((baseline, base_times), (value, value_times))
        for fn, times in order if round_ % 2 == 0 else order[::-1]:
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
    ratios = [b / v for b, v in zip(base_times, value_times, strict=True)]
    return (
        count / statistics.median(base_times),
        count / statistics.median(value_times),
        statistics.median(ratios),
    )


def row(
    name: str,
    count: int,
    baseline: Callable[[], object],
    value: Callable[[], object],
    *,
    unit: str,
    goal: float | None,
    note: str,
    rounds: int = 7,
) -> PairedRow:
    base, rate, ratio = paired(count, baseline, value, rounds=rounds)
    target = f">= {goal:.2f} of baseline" if goal is not None else ""
    passed = None if goal is None else ratio >= goal
    return PairedRow(name, rate, unit, base, target, passed, note, paired_ratio=ratio)


def bench_speed(quick: bool) -> Iterator[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="waybook-speed-"))
    try:
        yield from append_rows(tmp, quick)
        yield from open_rows(tmp, quick)
        yield from resume_rows(tmp, quick)
        yield from reopen_rows(tmp, quick)
        yield from many_reopens_row(tmp, quick)
        yield from many_sessions_row(tmp, quick)
        yield from group_rows(tmp, quick)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- appends ---------------------------------------------------------------------------------------


def append_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook import GENESIS, JsonlJournal, Session
    from waybook.journal._fileio import FileIdentity, OsFileOps

    n = 5_000 if quick else 20_000
    records = list(session_records(n))
    texts = [r.body.content for r in records[1:]]  # type: ignore[union-attr]

    def raw_flush() -> None:
        encode = msgspec.json.encode
        with (tmp / "raw.jsonl").open("wb") as out:
            for r in records:
                out.write(encode(r) + b"\n")
                out.flush()

    class WithoutPathCheck(OsFileOps):
        """Only to price the check that the path still names the open file: every identity call
        answers from memory instead of a stat (so the row prices the stat and all its Python)."""

        def __init__(self) -> None:
            self._known: dict[Path, FileIdentity | None] = {}

        def identity(self, path: Path) -> FileIdentity | None:
            known = self._known.get(path)
            if known is None:
                known = super().identity(path)
                if known is not None:  # the file exists from here on
                    self._known[path] = known
            return known

    def journal_appends(**options: object) -> Callable[[], None]:
        def run() -> None:
            path = tmp / "journal.jsonl"
            path.unlink(missing_ok=True)
            ops = options.get("file_ops")
            if isinstance(ops, WithoutPathCheck):
                ops._known.clear()
            with JsonlJournal(path, sidecar=False, **options) as journal:  # type: ignore[arg-type]
                head = GENESIS
                for r in records:
                    head = journal.append((r,), expected=head).head

        return run

    def session_appends() -> None:
        path = tmp / "session.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, sidecar=False) as journal:
            session = Session.create(journal, journal_id="bench")
            for content in texts:
                session.user(content)

    def batches() -> None:
        path = tmp / "batch.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, sidecar=False) as journal:
            head = GENESIS
            for start in range(0, n, 100):
                head = journal.append(records[start : start + 100], expected=head).head

    rounds = 5 if quick else 7
    yield row(
        "speed.session.append.flush",
        n,
        raw_flush,
        session_appends,
        unit="appends/s",
        goal=0.20,
        rounds=rounds,
        note="Session.user per record (fresh id + timestamp); baseline msgspec encode + write + flush",
    )
    yield row(
        "speed.journal.append.flush",
        n,
        raw_flush,
        journal_appends(),
        unit="appends/s",
        goal=0.25,
        rounds=rounds,
        note="JsonlJournal.append of one record (all checks); baseline the same raw loop",
    )
    yield row(
        "speed.journal.append.flush_exclusive",
        n,
        raw_flush,
        journal_appends(exclusive=True),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="the same with exclusive=True (no per-append lock or size check)",
    )
    yield row(
        "speed.journal.append.path_check_cost",
        n,
        journal_appends(file_ops=WithoutPathCheck()),
        journal_appends(),
        unit="appends/s",
        goal=None,
        rounds=rounds,
        note="journal append (one stat per append checks the path still names the file) against the same "
        "append with every identity check answered from memory: the ratio is what the check leaves",
    )
    yield row(
        "speed.journal.batch100.flush",
        n,
        raw_flush,
        batches,
        unit="records/s",
        goal=0.45,
        rounds=rounds,
        note="100 records per append; same baseline (per record)",
    )


# --- opening: full proof, checkpoint, no proof -------------------------------------------------------


def open_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook import JsonlJournal
    from waybook.journal import Record, verify_file

    decoder = msgspec.json.Decoder(Record)
    n = 20_000 if quick else 100_000
    path = tmp / f"open-{n}.jsonl"
    write_journal_file(path, n)
    with JsonlJournal(path, create=False):
        pass  # a writer's open and close: the checkpoint exists from here on

    def raw() -> None:
        decoder.decode_lines(path.read_bytes())

    def opened(**options: object) -> Callable[[], None]:
        def run() -> None:
            with JsonlJournal(path, create=False, readonly=True, **options) as journal:  # type: ignore[arg-type]
                journal.head()

        return run

    rounds = 5 if quick else 7
    yield row(
        f"speed.open.{n}.full_proof",
        n,
        raw,
        opened(sidecar=False),
        unit="records/s",
        goal=0.45,
        rounds=rounds,
        note="open proving every line (chain, batches, rules; sidecar=False); baseline msgspec "
        "decode_lines of the same file's bytes (read included), no checks",
    )
    yield row(
        f"speed.verify_file.{n}.full_proof",
        n,
        raw,
        lambda: verify_file(path),
        unit="records/s",
        goal=0.45,
        rounds=rounds,
        note="waybook verify's proof (verify_file); same baseline",
    )
    yield row(
        f"speed.open.{n}.checkpoint",
        n,
        raw,
        opened(),
        unit="records/s",
        goal=None,
        rounds=rounds,
        note="the default open: every byte of the checkpointed prefix hashed (SHA-256) against the "
        "checkpoint, nothing decoded but the head line; same baseline",
    )
    yield row(
        f"speed.open.{n}.trusted_checkpoint",
        n,
        raw,
        opened(trust_checkpoint=True),
        unit="records/s",
        goal=None,
        rounds=rounds,
        note="trust_checkpoint=True: the prefix is not proved (head line and header only); same baseline",
    )


# --- resume and reopen ------------------------------------------------------------------------------


def resume_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook import JsonlJournal, resume
    from waybook.journal import Record
    from waybook.projections import ContextProjection, context_at, replay

    decoder = msgspec.json.Decoder(Record)
    for n, repeat in ((500, 200), (20_000 if quick else 100_000, 1)):
        path = tmp / f"resume-{n}.jsonl"
        write_journal_file(path, n)
        total = n * repeat

        def raw(path: Path = path, repeat: int = repeat) -> None:
            for _ in range(repeat):
                decoder.decode_lines(path.read_bytes())

        def fused(path: Path = path, repeat: int = repeat, sidecar: bool = True) -> None:
            for _ in range(repeat):
                resume(path, create=False, sidecar=sidecar).journal.close()

        def apart(path: Path = path, repeat: int = repeat) -> None:
            for _ in range(repeat):
                with JsonlJournal(path, create=False, sidecar=False) as journal:
                    state = replay(ContextProjection(), journal)
                    context_at(journal, state.tree)

        with JsonlJournal(path, create=False):
            pass  # a writer's open and close: the checkpoint exists from here on
        yield row(
            f"speed.resume.{n}.checkpoint",
            total,
            raw,
            fused,
            unit="records/s",
            goal=0.25,
            rounds=5,
            note=f"resume(): the default open (prefix hashed against its checkpoint) + replay + render "
            f"the context of {n:,} records; baseline decode_lines of the file's bytes",
        )
        yield row(
            f"speed.resume.{n}.full_proof",
            total,
            raw,
            lambda f=fused: f(sidecar=False),  # type: ignore[misc]
            unit="records/s",
            goal=0.35,
            rounds=5,
            note="the same, proving every line (sidecar=False): replay into tree + context",
        )
        yield row(
            f"speed.resume.{n}.apart.full_proof",
            total,
            raw,
            apart,
            unit="records/s",
            goal=None,
            rounds=3,
            note="open + replay + context_at as three steps, no checkpoint (each record decoded 2-3 times)",
        )


def reopen_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    from waybook import JsonlJournal

    path = tmp / "reopen-500.jsonl"
    write_journal_file(path, 500)
    with JsonlJournal(path, create=False):
        pass  # leaves the checkpoint
    count = 200 if quick else 1_000

    def reopen(**options: object) -> Callable[[], None]:
        def run() -> None:
            for _ in range(count):
                with JsonlJournal(path, create=False, **options) as journal:  # type: ignore[arg-type]
                    journal.head()

        return run

    yield row(
        "speed.reopen.500.checkpoint",
        count,
        reopen(sidecar=False),
        reopen(sidecar=True),
        unit="opens/s",
        goal=None,
        rounds=5,
        note="reopen (default: prefix hashed against the checkpoint) + head of a 500-record session; "
        "baseline the same with sidecar=False (full proof)",
    )
    yield row(
        "speed.reopen.500.trusted_checkpoint",
        count,
        reopen(sidecar=False),
        reopen(sidecar=True, trust_checkpoint=True),
        unit="opens/s",
        goal=None,
        rounds=5,
        note="the same with trust_checkpoint=True (prefix not proved); baseline the full proof",
    )


# --- 200 sessions x 500 records ----------------------------------------------------------------------


def many_reopens_row(tmp: Path, quick: bool) -> Iterator[Row]:
    import sqlite3

    from waybook import JsonlJournal

    sessions = 40 if quick else 200
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
    db.close()


_SCENARIO = """
import sys, time
from pathlib import Path
from waybook import JsonlJournal, Session
root, sessions, records = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
text = "the agent read the file, ran the tests and summarised what failed " * 2
start = time.perf_counter()
for s in range(sessions):
    with JsonlJournal.create(root / f"s{s}.jsonl", journal_id=f"s{s}") as journal:
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


# --- group commit -----------------------------------------------------------------------------------


def group_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    from waybook import GENESIS, JsonlJournal
    from waybook.journal import NewRecord, Reset, StaleWriterError

    per_thread = 100 if quick else 250
    threads_n = 8
    at = "2026-12-01T09:00:00.000Z"
    header = next(iter(session_records(1)))
    shared: list[float] = []

    def one_writer() -> None:
        path = tmp / "fsync.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, durability="fsync", sidecar=False) as journal:
            head = journal.append([header], expected=GENESIS).head
            for i in range(per_thread * threads_n):
                head = journal.append([NewRecord(id=f"r{i}", at=at, body=Reset())], expected=head).head

    def group() -> None:
        path = tmp / "group.jsonl"
        path.unlink(missing_ok=True)
        with JsonlJournal(path, durability="group", sidecar=False) as journal:
            journal.append([header], expected=GENESIS)

            def writer(w: int) -> None:
                done = 0
                while done < per_thread:
                    try:
                        journal.append(
                            [NewRecord(id=f"w{w}-{done}", at=at, body=Reset())], expected=journal.head()
                        )
                        done += 1
                    except StaleWriterError:
                        pass

            threads = [threading.Thread(target=writer, args=(w,)) for w in range(threads_n)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            stats = journal._group
            shared.append(stats.synced_appends / max(stats.fsyncs, 1))

    base, value, ratio = paired(per_thread * threads_n, one_writer, group, rounds=3)
    per_fsync = statistics.median(shared)
    yield PairedRow(
        "speed.group_commit.8_threads",
        value,
        "appends/s",
        base,
        ">= 2.5x, >= 3 per fsync",
        ratio >= 2.5 and per_fsync >= 3,
        f"8 writer threads, each append returns durable; {per_fsync:.1f} appends per fsync; baseline one "
        "writer under the fsync policy",
        paired_ratio=ratio,
    )


def main() -> int:
    quick = "--quick" in sys.argv
    print(f"{'benchmark':40} {'value':>12} {'baseline':>12} {'ratio':>7}  {'target':26} ok")
    for row in bench_speed(quick):
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
