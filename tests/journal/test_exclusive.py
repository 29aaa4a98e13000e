"""`JsonlJournal(path, exclusive=True)`: one writer holds the journal for its lifetime, skips the
per-append lock and size check, and every other writer or reader is refused at once, never left hanging."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.builders import chat, header, user
from waybook import GENESIS, JsonlJournal
from waybook.journal._jsonl._file_ops import OsFileOps
from waybook.model import JournalBusyError, JournalReplacedError


class CountingSizeOps(OsFileOps):
    def __init__(self) -> None:
        self.sizes = 0

    def size(self, fd: int) -> int:
        self.sizes += 1
        return super().size(fd)


def test_a_single_writer_appends_without_a_size_check_per_append(tmp_path: Path) -> None:
    ops = CountingSizeOps()
    with JsonlJournal(tmp_path / "s.jsonl", exclusive=True, file_ops=ops) as journal:
        head = journal.append([header()], expected=GENESIS).head
        sizes = ops.sizes
        for record in chat(20):
            head = journal.append([record], expected=head).head
        assert journal.head() == head
        assert list(journal.read())[-1].seq == 21
        assert ops.sizes == sizes
        journal.check_invariants()
    with JsonlJournal(tmp_path / "s.jsonl", create=False, sidecar=False) as reopened:
        assert reopened.head() == head


def test_a_second_single_writer_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path, exclusive=True), pytest.raises(JournalBusyError, match="another single writer"):
        JsonlJournal(path, exclusive=True)


def test_other_writers_and_readers_are_refused_while_a_single_writer_holds_the_journal(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    early = JsonlJournal(path)  # opened before the single writer
    with JsonlJournal(path, exclusive=True) as single:
        single.append([header()], expected=GENESIS)
        with pytest.raises(JournalBusyError, match="exclusive=True"):
            early.append([user("u1", None)], expected=early.head())
        with pytest.raises(JournalBusyError):
            JsonlJournal(path, readonly=True)
    early.close()
    with JsonlJournal(path, create=False) as after:  # once it closes, anyone may write
        after.append([user("u1", None)], expected=after.head())


def test_a_single_writer_in_another_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    code = (
        "import sys\n"
        "from waybook import JsonlJournal\n"
        "from waybook.model import JournalBusyError\n"
        "try:\n"
        "    JsonlJournal(sys.argv[1], exclusive=True)\n"
        "except JournalBusyError as exc:\n"
        "    print('busy:', exc)\n"
        "    sys.exit(3)\n"
    )
    with JsonlJournal(path, exclusive=True):
        run = subprocess.run(
            [sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60
        )
    assert run.returncode == 3, run.stderr
    assert "busy:" in run.stdout
    run = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stdout + run.stderr


def test_a_single_writer_still_refuses_when_its_path_is_deleted(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path, exclusive=True) as journal:
        head = journal.append([header()], expected=GENESIS).head
        os.unlink(path)
        with pytest.raises(JournalReplacedError):
            journal.append([user("u1", None)], expected=head)


def test_exclusive_and_readonly_do_not_go_together(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="single writer"):
        JsonlJournal(tmp_path / "s.jsonl", exclusive=True, readonly=True)
