"""`JsonlJournal.open_proven`: one pass over a file gives the journal and `verify_file`'s report, and the
journal's later reads come from the bytes that pass read, never from stale bytes past its committed end."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.faults import CountingFileOps
from tests.helpers.sessions import branching_session
from waybook import JsonlJournal, Session
from waybook.journal import verify_file
from waybook.model import CorruptJournalError, StorageError


def golden_file(tmp_path: Path) -> Path:
    path = tmp_path / "golden.jsonl"
    with JsonlJournal(path) as journal:
        branching_session(journal)
    return path


def test_the_report_is_the_one_verify_file_gives_and_later_reads_touch_no_disk(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    ops = CountingFileOps()
    journal, report = JsonlJournal.open_proven(path, file_ops=ops)
    with journal:
        assert report == verify_file(path)
        assert report.ok
        reads = len(ops.reads)
        assert [r.seq for r in journal.read()] == list(range(1, report.records + 1))
        assert b"".join(line + b"\n" for line in journal.read_lines()) == path.read_bytes()
        assert len(ops.reads) == reads  # served from the bytes the open read


def test_without_keep_every_read_goes_to_the_file(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    ops = CountingFileOps()
    journal, _ = JsonlJournal.open_proven(path, file_ops=ops, keep=False)
    with journal:
        reads = len(ops.reads)
        list(journal.read())
        assert len(ops.reads) > reads


@pytest.mark.parametrize("tail", [b'{"seq":', b"\x00" * 40])
def test_a_torn_tail_is_reported_and_the_committed_records_are_served(tmp_path: Path, tail: bytes) -> None:
    path = golden_file(tmp_path)
    committed = path.read_bytes()
    path.write_bytes(committed + tail)
    journal, report = JsonlJournal.open_proven(path)
    with journal:
        assert report == verify_file(path)
        assert report.torn_tail
        assert journal.damage is not None
        assert b"".join(line + b"\n" for line in journal.read_lines()) == committed


def test_corruption_is_refused_unless_the_proven_prefix_is_asked_for(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"', b"'", 1)
    path.write_bytes(b"".join(lines))
    with pytest.raises(CorruptJournalError):
        JsonlJournal.open_proven(path)
    journal, report = JsonlJournal.open_proven(path, read_prefix=True)
    with journal:
        assert report == verify_file(path)
        assert (report.ok, report.bad_seq, report.records) == (False, 3, 2)
        assert len(list(journal.read())) == 2


def test_a_reader_sees_what_a_repair_and_a_later_append_wrote_past_its_committed_end(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    path.write_bytes(path.read_bytes() + b'{"seq":99,"torn')  # the kept bytes stop before this
    reader, report = JsonlJournal.open_proven(path)
    with reader:
        assert report.torn_tail
        with JsonlJournal(path, create=False, on_torn_tail="repair") as writer:
            Session(writer).user("after the repair")
        assert [r.seq for r in reader.read()] == list(range(1, report.records + 2))
        assert reader.damage is None


def test_a_proven_journal_is_read_only(tmp_path: Path) -> None:
    path = golden_file(tmp_path)
    journal, _ = JsonlJournal.open_proven(path)
    with journal, pytest.raises(StorageError, match="read-only"):
        Session(journal).user("no")
