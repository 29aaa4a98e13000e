"""What one append costs in system calls (issue 29): under the lock, one size check for other writers'
records, one write and one check that the path still names the file; a FileOps that replaces some of
the calls (a crash test's) has exactly those called, the others stay the real ones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.helpers.builders import chat, header
from waybook import GENESIS, JsonlJournal
from waybook.journal._jsonl._file_ops import FileIdentity, OsFileOps
from waybook.model import JournalReplacedError


class CountingOps(OsFileOps):
    def __init__(self) -> None:
        self.calls: list[str] = []

    def size(self, fd: int) -> int:
        self.calls.append("size")
        return super().size(fd)

    def write(self, fd: int, data: bytes) -> int:
        self.calls.append("write")
        return super().write(fd, data)

    def identity(self, path: Path) -> FileIdentity | None:
        self.calls.append("identity")
        return super().identity(path)


class CountingIdentityOnly(OsFileOps):
    def __init__(self) -> None:
        self.identities = 0

    def identity(self, path: Path) -> FileIdentity | None:
        self.identities += 1
        return super().identity(path)


def test_an_append_checks_the_size_writes_once_and_checks_the_path_once(tmp_path: Path) -> None:
    ops = CountingOps()
    with JsonlJournal(tmp_path / "s.jsonl", sidecar=False, file_ops=ops) as journal:
        head = journal.append([header()], expected=GENESIS).head
        for record in chat(10):
            ops.calls.clear()
            head = journal.append([record], expected=head).head
            assert ops.calls == ["size", "write", "identity"]
        ops.calls.clear()
        journal.append(list(chat(15))[10:], expected=head)  # a batch: the same three, once
        assert ops.calls == ["size", "write", "identity"]


def test_a_file_ops_replacing_only_the_path_check_is_asked_on_every_append(tmp_path: Path) -> None:
    ops = CountingIdentityOnly()
    with JsonlJournal(tmp_path / "s.jsonl", sidecar=False, file_ops=ops) as journal:
        head = journal.append([header()], expected=GENESIS).head
        before = ops.identities
        for record in chat(5):
            head = journal.append([record], expected=head).head
        assert ops.identities == before + 5


def test_a_journal_renamed_over_during_real_appends_is_caught_by_the_one_stat(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    with JsonlJournal(path, sidecar=False) as journal:  # the real system calls, bound once at open
        head = journal.append([header()], expected=GENESIS).head
        records = list(chat(2))
        head = journal.append([records[0]], expected=head).head
        other = tmp_path / "other.jsonl"
        other.write_bytes(b"")
        os.replace(other, path)
        with pytest.raises(JournalReplacedError):
            journal.append([records[1]], expected=head)
        assert path.read_bytes() == b""  # the file now at the path was never touched


def test_a_session_user_message_is_the_same_record_given_text_a_list_or_a_tuple_of_blocks(
    tmp_path: Path,
) -> None:
    from waybook import Session
    from waybook.model import TextBlock

    bodies = []
    for i, given in enumerate(["hi", [TextBlock(text="hi")], (TextBlock(text="hi"),)]):
        with JsonlJournal(tmp_path / f"s{i}.jsonl", sidecar=False) as journal:
            session = Session.create(journal, journal_id="s")
            record = session.user(given)  # type: ignore[arg-type]
            bodies.append(record.body)
            assert list(journal.read())[-1] == record
    assert bodies[0] == bodies[1] == bodies[2]
    assert type(bodies[1].content) is tuple  # type: ignore[attr-defined]
