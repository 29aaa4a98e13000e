"""Issue 12: the file you hold is the file you write, and the lock you hold is the lock at the path.

A journal object locks the journal file itself (no side file to delete) and, under that lock and before
writing a byte, checks that its path still names the file it holds open.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path

import pytest

from tests.helpers.builders import header, user
from waybook import Session
from waybook.journal import JsonlJournal
from waybook.journal._jsonl._file_ops import OsFileOps
from waybook.model import GENESIS, JournalReplacedError


def new_session(path: Path) -> Session:
    journal = JsonlJournal(path)
    session = Session.create(journal, journal_id="held")
    session.user("first")
    return session


def test_appending_after_the_journal_was_deleted_is_refused_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    journal = session.journal
    assert isinstance(journal, JsonlJournal)
    os.unlink(path)
    with pytest.raises(JournalReplacedError, match="deleted"):
        session.user("x")  # the old code acknowledged seq 3 into a file nobody can find
    assert session.head.seq == 2
    assert journal.head().seq == 2, "nothing reached the orphaned file either"
    assert not path.exists(), "and nothing was created"
    journal.close()


def test_appending_after_another_file_was_renamed_over_the_path_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    other = tmp_path / "other.jsonl"
    with JsonlJournal(other) as journal:
        journal.append([header("h2", journal="other")], expected=GENESIS)
    replacement = other.read_bytes()
    os.replace(other, path)
    with pytest.raises(JournalReplacedError, match="another file"):
        session.user("x")
    assert path.read_bytes() == replacement, "the file at the path is untouched"
    with pytest.raises(JournalReplacedError):
        session.journal.repair()  # type: ignore[attr-defined]
    session.journal.close()


def test_a_journal_moved_back_into_place_takes_appends_again(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    session = new_session(path)
    aside = tmp_path / "aside.jsonl"
    os.rename(path, aside)
    with pytest.raises(JournalReplacedError):
        session.user("x")
    os.rename(aside, path)
    assert session.user("y").seq == 3
    session.journal.close()


def test_a_second_writer_on_the_replaced_path_and_the_old_holder_never_interleave(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    old = new_session(path)
    copy = tmp_path / "copy.jsonl"
    shutil.copyfile(path, copy)
    os.replace(copy, path)  # e.g. a restore from backup while a writer is live
    new = Session(JsonlJournal(path, create=False))
    assert new.user("from the new writer").seq == 3
    with pytest.raises(JournalReplacedError):
        old.user("from the old writer")
    with JsonlJournal(path, create=False) as reader:
        assert [r.seq for r in reader.read()] == [1, 2, 3]
    old.journal.close()
    new.journal.close()


class ProbingOps(OsFileOps):
    """During each write, tries to take the journal's lock through another open file of the path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lock_was_free: list[bool] = []

    def write(self, fd: int, data: bytes) -> int:
        probe = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.lock_was_free.append(False)
        else:
            self.lock_was_free.append(True)
        finally:
            os.close(probe)
        return super().write(fd, data)


def test_the_write_lock_is_on_the_journal_file_so_no_side_file_can_be_removed(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    ops = ProbingOps(path)
    with JsonlJournal(path, file_ops=ops, sidecar=False) as journal:  # no reopen checkpoint either
        head = journal.append([header()], expected=GENESIS).head
        journal.append([user("u1", None)], expected=head)
    assert ops.lock_was_free == [False, False], "anyone opening the path meets the writer's lock"
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]
