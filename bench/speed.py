"""Issue 15 benchmarks (core speed): each row a ratio to its baseline, measured in the same run, paired.

Run through `python bench/run.py --only speed` (or `python bench/speed.py [--quick]` for these rows
alone). Rows:

- session / journal one-record append under `flush`, against raw msgspec encode + write + flush;
- a batch of 100 per append, against the same raw loop;
- resume (open + replay + render the context), against decode_lines of the file's bytes;
- reopen + verify of a 500-record session with its checkpoint, against a full open + verify;
- 200 sessions x 500 records (create + write, then reopen + verify), against the same scenario run by
  the code this issue started from (`BASELINE_REV`, extracted with `git archive`), run alternately;
- group commit with 8 writer threads, against one writer under the `fsync` policy.
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

from bench.measure import Row, paired_rates  # noqa: E402
from bench.workload import session_records, write_journal_file  # noqa: E402

BASELINE_REV = "cffdb08"
"""The commit issue 15 started from: the "today" of its 200-session target."""


def bench_speed(quick: bool) -> Iterator[Row]:
    tmp = Path(tempfile.mkdtemp(prefix="waybook-speed-"))
    try:
        yield from append_rows(tmp, quick)
        yield from resume_rows(tmp, quick)
        yield from reopen_rows(tmp, quick)
        yield from many_sessions_row(tmp, quick)
        yield from group_rows(tmp, quick)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --- appends ---------------------------------------------------------------------------------------


def append_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    import msgspec

    from waybook import GENESIS, JsonlJournal, Session

    n = 10_000 if quick else 50_000
    records = list(session_records(n))
    texts = [r.body.content for r in records[1:]]  # type: ignore[union-attr]

    def raw_flush() -> None:
        encode = msgspec.json.encode
        with (tmp / "raw.jsonl").open("wb") as out:
            for r in records:
                out.write(encode(r) + b"\n")
                out.flush()

    class WithoutPathCheck(JsonlJournal):
        """Only to price issue 12's check that the path still names the open file (one stat per append)."""

        def _check_identity(self) -> None:
            return

    def journal_appends(kind: type[JsonlJournal] = JsonlJournal, **options: object) -> Callable[[], None]:
        def run() -> None:
            path = tmp / "journal.jsonl"
            path.unlink(missing_ok=True)
            with kind(path, sidecar=False, **options) as journal:  # type: ignore[arg-type]
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

    base, value = paired_rates(n, raw_flush, session_appends)
    yield Row(
        "speed.session.append.flush",
        value,
        "appends/s",
        base,
        ">= 20% of raw",
        value >= 0.2 * base,
        "Session.user per record (fresh id + timestamp); baseline msgspec encode + write + flush per line",
    )
    base, value = paired_rates(n, raw_flush, journal_appends())
    yield Row(
        "speed.journal.append.flush",
        value,
        "appends/s",
        base,
        ">= 25% of raw",
        value >= 0.25 * base,
        "JsonlJournal.append of one record; same baseline",
    )
    base, value = paired_rates(n, raw_flush, journal_appends(exclusive=True))
    yield Row(
        "speed.journal.append.flush_exclusive",
        value,
        "appends/s",
        base,
        "",
        None,
        "the same with exclusive=True (no per-append lock or size check)",
    )
    unchecked, checked = paired_rates(n, journal_appends(WithoutPathCheck), journal_appends())
    yield Row(
        "speed.journal.append.path_check_cost",
        checked,
        "appends/s",
        unchecked,
        "(the price of a rule)",
        None,
        "journal append against the same append without the per-append check that the path still names "
        "the open file (issue 12's rule; kept)",
    )
    base, value = paired_rates(n, raw_flush, batches)
    yield Row(
        "speed.journal.batch100.flush",
        value,
        "records/s",
        base,
        ">= 45% of raw",
        value >= 0.45 * base,
        "100 records per append; same baseline (per record)",
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
        base, value = paired_rates(total, raw, fused, repeat=5)
        yield Row(
            f"speed.resume.{n}",
            value,
            "records/s",
            base,
            ">= 25% of decode_lines",
            value >= 0.25 * base,
            f"resume(): open (with its checkpoint) + replay + render the context of {n:,} records; "
            "baseline decode_lines of the file's bytes",
        )
        base, value = paired_rates(total, raw, lambda f=fused: f(sidecar=False), repeat=5)
        yield Row(
            f"speed.resume.{n}.full_proof",
            value,
            "records/s",
            base,
            "",
            None,
            "the same, proving every line (sidecar=False)",
        )
        base, value = paired_rates(total, raw, apart, repeat=3)
        yield Row(
            f"speed.resume.{n}.apart",
            value,
            "records/s",
            base,
            "",
            None,
            "open + replay + context_at as three steps, no checkpoint (each record decoded 2-3 times)",
        )


def reopen_rows(tmp: Path, quick: bool) -> Iterator[Row]:
    from waybook import JsonlJournal

    path = tmp / "reopen-500.jsonl"
    write_journal_file(path, 500)
    with JsonlJournal(path, create=False):
        pass  # leaves the checkpoint
    count = 200 if quick else 1_000

    def reopen(sidecar: bool) -> Callable[[], None]:
        def run() -> None:
            for _ in range(count):
                with JsonlJournal(path, create=False, sidecar=sidecar) as journal:
                    journal.head()

        return run

    full, fast = paired_rates(count, reopen(False), reopen(True), repeat=5)
    yield Row(
        "speed.reopen.500.checkpoint",
        fast,
        "opens/s",
        full,
        ">= 10x the full proof",
        fast >= 10 * full,
        "reopen + verify (head) of a 500-record session with its checkpoint; baseline the same with "
        "sidecar=False (every line proved)",
    )


# --- 200 sessions x 500 records ----------------------------------------------------------------------

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

    base, value = paired_rates(per_thread * threads_n, one_writer, group, repeat=3)
    per_fsync = statistics.mean(shared)
    yield Row(
        "speed.group_commit.8_threads",
        value,
        "appends/s",
        base,
        ">= 2.5x, >= 3 per fsync",
        value >= 2.5 * base and per_fsync >= 3,
        f"8 writer threads, each append returns durable; {per_fsync:.1f} appends per fsync; baseline one "
        "writer under the fsync policy",
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
