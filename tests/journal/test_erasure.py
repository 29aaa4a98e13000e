"""Erasure of a JSONL journal (docs/erasure.md): the proof of absent content, pending erasures, old
journals that cannot erase, and a real SIGKILL at every step of an erasure."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from waybook import JsonlJournal, Session
from waybook.codecs._commitments import erase_line
from waybook.codecs._wire import decode_record, encode_record
from waybook.journal import InMemoryJournal, erase, erasure_receipt, verify, verify_file
from waybook.journal._jsonl import erasure_marker_path
from waybook.model import (
    CONTENT_PARTS,
    ErasedRecord,
    Erasure,
    ErasureInterruptedError,
    Header,
    NewRecord,
    NotSealedError,
)

SECRET = "a secret that must go 51c0"


def chat(path: Path) -> list[str]:
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        session.user("hello")
        session.user(SECRET)
        session.assistant(f"echo {SECRET}")
        session.user(f"and again {SECRET}")
        session.user("bye")
        return [r.digest for r in journal.read()]


def test_content_removed_without_an_erasure_record_is_damage(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chat(path)
    lines = path.read_bytes().splitlines(keepends=True)
    record = decode_record(lines[2][:-1])
    forged, _ = erase_line(lines[2][:-1], record, by=7)  # names an erasure that was never written
    lines[2] = forged + b"\n"
    path.write_bytes(b"".join(lines))
    report = verify_file(path)
    assert not report.ok
    assert report.bad_seq == 3
    assert "no committed erasure names it" in (report.reason or "")


def test_an_erasure_record_whose_records_still_hold_content_is_pending_and_resume_finishes_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.jsonl"
    before = chat(path)
    with JsonlJournal(path) as journal:
        (target,) = journal.read(2, 1)
        line = next(journal.read_lines(2, 1))
        _, marker = erase_line(line, target, by=len(before) + 1)
        entry = ErasedRecord(seq=3, state=marker.state, blocks=marker.blocks, parts=("text",))
        journal.append(
            [NewRecord(id="e1", at=target.at, body=Erasure(records=(entry,), reason="asked"))],
            expected=journal.head(),
        )  # as if the eraser died before its marker: the record committed, no byte overwritten yet
        report = verify(journal)
        assert report.ok
        assert report.pending_erasures == (3,)
        assert "erasure pending" in str(report)
        assert journal.finish_erasures() == (3,)
        assert verify(journal).pending_erasures == ()
        assert [r.digest for r in journal.read()][: len(before)] == before
    assert SECRET.encode() in path.read_bytes()  # seqs 4 and 5 were not erased
    assert path.read_bytes().count(SECRET.encode()) == 2


def pending_erasure_of_record_3(journal: JsonlJournal) -> int:
    """Append an erasure record naming record 3 without overwriting it: as if its eraser died before its
    marker (or the marker was lost). Returns the erasure record's seq."""
    (target,) = journal.read(2, 1)
    line = next(journal.read_lines(2, 1))
    by = journal.head().seq + 1
    _, marker = erase_line(line, target, by=by)
    entry = ErasedRecord(seq=3, state=marker.state, blocks=marker.blocks, parts=("text",))
    journal.append(
        [NewRecord(id="e1", at=target.at, body=Erasure(records=(entry,), reason="asked"))],
        expected=journal.head(),
    )
    return by


def test_erasing_a_record_a_pending_erasure_names_finishes_that_erasure_first(tmp_path: Path) -> None:
    """A second erasure taking record 3 for itself left the pending one naming a record it had not
    erased: verify went from "ok, erasure pending" to failed. The library's erase now finishes a pending
    erasure first, as `waybook erase` does."""
    path = tmp_path / "s.jsonl"
    chat(path)
    with JsonlJournal(path) as journal:
        first = pending_erasure_of_record_3(journal)
        receipt = erase(journal, [3, 4], reason="asked again")
        report = verify(journal)
        assert report.ok, report
        assert report.pending_erasures == ()
        erased_by = {r.seq: r.erased.by for r in journal.read() if r.erased is not None}
    assert erased_by == {3: first, 4: receipt.erasures[0].seq}
    assert [e.seq for e in receipt.erased] == [4]
    assert [s.seq for s in receipt.skipped] == [3]
    assert path.read_bytes().count(SECRET.encode()) == 1  # record 5 was not asked for


def test_a_journal_written_before_sealing_opens_verifies_and_refuses_erase_naming_migrate(
    tmp_path: Path,
) -> None:
    journal = InMemoryJournal("old")
    old_header = Header(journal="old", creator="waybook")  # schema 1, as every journal written before
    journal.append(
        [NewRecord(id="h", at="2026-01-01T00:00:00.000Z", body=old_header)], expected=journal.head()
    )
    session = Session(journal)
    session.user(SECRET)
    line = next(journal.read_lines(1, 1))
    assert line.startswith(b'{"seq":2,')  # the old shape, byte for byte
    with pytest.raises(NotSealedError, match="waybook migrate"):
        erase(journal, 2, reason="asked")
    assert verify(journal).ok


def test_parts_choose_the_records_and_the_rest_are_skipped_with_a_reason(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    chat(path)
    with JsonlJournal(path) as journal:
        receipt = erase(journal, range(2, 6), reason="asked", parts=["text"], policy="forget-on-request")
        assert [e.seq for e in receipt.erased] == [2, 3, 4, 5]
        again = erase(journal, [3, 4], reason="again")
        assert again.erased == ()
        assert [s.why for s in again.skipped] == ["already erased (by seq 7)"] * 2
        assert erasure_receipt(journal, 7) == receipt
        assert set(receipt.erased[0].parts) <= set(CONTENT_PARTS)


STEPS = [
    "planned",
    "marked",
    "appended",
    "region 1 of 3",
    "region 2 of 3",
    "region 3 of 3",
    "overwritten",
    "checkpoint removed",
]


@pytest.mark.parametrize("step", STEPS)
def test_a_sigkill_at_any_step_of_an_erase_leaves_a_journal_that_opens_and_finishes_or_keeps_the_old_bytes(
    tmp_path: Path, step: str
) -> None:
    path = tmp_path / "s.jsonl"
    before = chat(path)
    old = path.read_bytes()
    run = subprocess.run(
        [sys.executable, "-m", "tests.helpers.killed_eraser", str(path), step],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == -9, run.stderr
    committed = step not in ("planned", "marked")
    if erasure_marker_path(path).exists():
        with pytest.raises(ErasureInterruptedError, match="erase --resume"):
            JsonlJournal(path, readonly=True)
    else:
        assert not committed or step == "checkpoint removed"
    with JsonlJournal(path, create=False) as journal:  # a writer's open finishes (or drops) the marker
        assert not erasure_marker_path(path).exists()
        journal.finish_erasures()
        report = verify(journal)
        assert report.ok, report
        assert report.pending_erasures == ()
        assert [r.digest for r in journal.read()][: len(before)] == before
    data = path.read_bytes()
    if committed:
        assert SECRET.encode() not in data
        assert verify_file(path).records == len(before) + 1
    else:
        assert data == old


OLD_JOURNALS = [
    ROOT / "fixtures" / "values" / "plan-v1.jsonl",
    ROOT / "fixtures" / "wire" / "batches" / "batches-v1.jsonl",
]


@pytest.mark.parametrize("path", OLD_JOURNALS, ids=lambda p: p.name)
def test_a_journal_written_before_sealing_opens_and_verifies_byte_for_byte_unchanged(
    tmp_path: Path, path: Path
) -> None:
    copy = tmp_path / path.name
    copy.write_bytes(path.read_bytes())
    assert verify_file(copy).ok
    with JsonlJournal(copy, readonly=True) as journal:
        lines = list(journal.read_lines())
        records = list(journal.read())
    assert b"".join(line + b"\n" for line in lines) == path.read_bytes()
    assert all(record.salt is None and record.erased is None for record in records)
    assert [encode_record(record) for record in records] == lines
    with JsonlJournal(copy, create=False) as journal:  # a writer's open and append keep the old bytes
        header = next(journal.read(0, 1)).body
        assert isinstance(header, Header)
        if header.role == "session" and journal.head().seq == len(lines):
            Session(journal).user("one more")
    data = copy.read_bytes()
    assert data.startswith(path.read_bytes())
    added = data[len(path.read_bytes()) :]
    assert not added or added.startswith(b'{"seq":')  # a schema 1 journal goes on in its own shape
