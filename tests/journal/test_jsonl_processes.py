"""Several processes on one JSONL journal: races without kills, and writers killed at random moments."""

from __future__ import annotations

import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from waybook import JsonlJournal, Record, Session, verify


def spawn(path: Path, name: str, attempts: int, *extra: int | str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tests.helpers.process_writer",
            str(path),
            name,
            str(attempts),
            *map(str, extra),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )


def acknowledgements(process: subprocess.Popen[str]) -> list[tuple[int, str]]:
    """Complete `seq id` lines only: a writer killed while printing leaves a partial last line."""
    out, _ = process.communicate()
    complete = out.split("\n")[:-1]
    return [(int(seq), rid) for seq, rid in (line.split() for line in complete)]


def new_journal(path: Path) -> None:
    with JsonlJournal(path) as journal:
        Session.create(journal, journal_id="race")


@pytest.mark.slow
def test_four_processes_racing_win_each_position_exactly_once(tmp_path: Path) -> None:
    path = tmp_path / "race.jsonl"
    new_journal(path)
    writers = [spawn(path, f"w{i}", 500) for i in range(4)]
    wins = [ack for w in writers for ack in acknowledgements(w)]
    assert all(w.returncode == 0 for w in writers)
    with JsonlJournal(path) as journal:
        records = list(journal.read())
        assert verify(journal).ok
    assert sorted(seq for seq, _ in wins) == list(range(2, len(records) + 1)), "one winner per position"
    assert {(r.seq, r.id) for r in records[1:]} == set(wins)
    assert len(wins) >= 500


class Writer:
    """A writer process and a thread collecting its complete acknowledgement lines as they arrive."""

    def __init__(self, path: Path, name: str, *extra: int | str) -> None:
        self.process = spawn(path, name, 0, *extra)
        self.lines: list[str] = []
        self.mid_write = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line == "mid\n":  # a trickling writer is in the middle of a write
                self.mid_write.set()
            elif line.endswith("\n"):  # a writer killed while printing leaves a partial last line
                self.lines.append(line)

    @property
    def appending(self) -> bool:
        return bool(self.lines)

    @property
    def exited(self) -> bool:
        return self.process.poll() is not None

    def kill(self) -> list[tuple[int, str]]:
        self.process.kill()  # SIGKILL; a no-op for a process that already exited and was reaped
        self.process.wait()
        self._reader.join()
        return [(int(seq), rid) for seq, rid in (line.split() for line in self.lines)]


@pytest.mark.slow
def test_writers_killed_at_random_lose_no_acknowledged_record(tmp_path: Path) -> None:
    path = tmp_path / "kill.jsonl"
    new_journal(path)
    rng = random.Random(20261201)
    writers = [Writer(path, f"w{i}-0") for i in range(4)]
    acked: list[tuple[int, str]] = []
    respawned = 0
    for round_no in range(200):
        # Kill only writers that are appending, at a random moment, so kills land mid-append.
        deadline = time.monotonic() + 30
        while not any(w.appending and not w.exited for w in writers):
            assert time.monotonic() < deadline, "no writer started appending within 30 s"
            for i, writer in enumerate(writers):
                if writer.exited:  # it met a torn tail a killed writer left; a new one repairs it
                    assert writer.process.returncode == 3, "a writer failed for another reason"
                    acked += writer.kill()
                    writers[i] = Writer(path, f"w{i}-r{respawned}")
                    respawned += 1
            time.sleep(0.005)
        time.sleep(rng.uniform(0.0, 0.01))
        victim = rng.choice([i for i, w in enumerate(writers) if w.appending and not w.exited])
        acked += writers[victim].kill()
        writers[victim] = Writer(path, f"w{victim}-{round_no + 1}")
    for writer in writers:
        acked += writer.kill()
    with JsonlJournal(path, on_torn_tail="repair") as journal:
        assert verify(journal).ok
        by_seq = {r.seq: r.id for r in journal.read()}
    assert len(acked) >= 200, "every killed writer had acknowledged at least one append"
    assert len({seq for seq, _ in acked}) == len(acked), "no position was acknowledged twice"
    for seq, rid in acked:
        assert by_seq.get(seq) == rid, f"acknowledged record {rid} at seq {seq} was lost"


def assert_whole_batches(records: list[Record], size: int) -> set[str]:
    """Every record after the header belongs to a batch of `size` whose records are all there, in order."""
    labels: dict[str, list[int]] = {}
    for record in records[1:]:
        label, _, index = record.id.rpartition("-")
        labels.setdefault(label, []).append(int(index))
    for label, indexes in labels.items():
        assert indexes == list(range(size)), f"batch {label} is partly committed: {len(indexes)} of {size}"
    return set(labels)


@pytest.mark.slow
def test_a_writer_killed_during_large_batches_never_leaves_part_of_a_batch_readable(tmp_path: Path) -> None:
    """Issue 12: SIGKILL mid-batch left 6, 12 and 18 of 64 records that every reader took as committed.

    Kills at random moments mostly land while the writer seals a batch, rarely inside write(2); the
    trickling test below kills inside the write every time."""
    path = tmp_path / "batches.jsonl"
    new_journal(path)
    rng = random.Random(20261212)
    acked: list[tuple[int, str]] = []
    for round_no in range(20):
        writer = Writer(path, f"k{round_no}", 64, 6000)  # about 400 KB per batch: one long write
        deadline = time.monotonic() + 30
        while not writer.appending:
            assert time.monotonic() < deadline, "the writer did not start appending within 30 s"
            assert not writer.exited, "the writer failed before appending"
            time.sleep(0.002)
        time.sleep(rng.uniform(0.0, 0.03))
        acked += writer.kill()
        with JsonlJournal(path, create=False) as reader:  # detects, never repairs
            assert reader.damage is None or reader.damage.torn
            seen = assert_whole_batches(list(reader.read()), 64)
        assert {label for _, label in acked} <= seen, "an acknowledged batch was lost"
    with JsonlJournal(path, create=False, on_torn_tail="repair") as journal:
        assert verify(journal).ok
        assert assert_whole_batches(list(journal.read()), 64) >= {label for _, label in acked}


FILE_SIZE_LIMIT_CHILD = """
import resource, signal, sys
from waybook import JsonlJournal, Session
from waybook.model import NewRecord, UserMessage, WriteFailedError, text
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # the kernel then answers EFBIG instead of killing us
path, limit = sys.argv[1], int(sys.argv[2])
journal = JsonlJournal(path, create=False)
session = Session(journal)
_, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
batch, parent = [], session.leaf
for i in range(64):
    body = UserMessage(parent=parent, content=text("x" * 2000))
    batch.append(NewRecord(id=f"b{i}", at="2026-12-01T09:00:00.000Z", body=body))
    parent = f"b{i}"
try:
    journal.append(batch, expected=session.head)
except WriteFailedError as exc:
    print("refused", exc.rolled_back, exc.head.seq)
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
print("then", journal.append(batch[:1], expected=session.head).head.seq)
"""


def test_a_batch_cut_by_the_file_size_limit_commits_nothing_and_leaves_the_file_as_it_was(
    tmp_path: Path,
) -> None:
    """Issue 12: EFBIG (RLIMIT_FSIZE) mid-batch used to leave its first complete lines committed."""
    path = tmp_path / "limit.jsonl"
    new_journal(path)
    before = path.read_bytes()
    limit = len(before) + 50_000  # about a third of the batch fits
    run = subprocess.run(
        [sys.executable, "-c", FILE_SIZE_LIMIT_CHILD, str(path), str(limit)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert run.stdout.splitlines() == ["refused True 1", "then 2"], run.stderr
    with JsonlJournal(path, create=False) as journal:
        assert journal.damage is None
        assert [r.id for r in journal.read()][1:] == ["b0"], "nothing of the cut batch was kept"
    assert path.read_bytes().startswith(before)


def test_a_writer_killed_with_a_batch_half_written_leaves_no_part_of_it_readable(tmp_path: Path) -> None:
    """A real SIGKILL while the batch's bytes are partly on disk (the writer hands them over 16 KiB per
    write(2), as short writes may): readers see whole batches only, and the next writer repairs."""
    path = tmp_path / "half.jsonl"
    new_journal(path)
    acked: list[tuple[int, str]] = []
    cut_batches = 0
    for round_no in range(5):
        writer = Writer(path, f"t{round_no}", 64, 6000, "trickle")
        assert writer.mid_write.wait(60), "the writer never started a write"
        acked += writer.kill()
        with JsonlJournal(path, create=False) as reader:
            damage = reader.damage
            assert damage is None or damage.torn
            cut_batches += damage is not None and "cut short" in damage.reason
            seen = assert_whole_batches(list(reader.read()), 64)
        assert {label for _, label in acked} <= seen
    assert cut_batches >= 1, "at least one kill left whole lines of a cut batch (the issue's case)"
