"""The erasure proof rides on the chain proof's one pass (docs/erasure.md, "Cost"): a proving open logs
the erased and erasure records it takes in, and the proof reads the journal again only when that log
cannot decide (an erasure names a record that still holds its content, or none it erased). Each case
here is decided the same way from the log as from a second read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.faults import CountingFileOps
from waybook import JsonlJournal, Session
from waybook.codecs._commitments import erase_line
from waybook.codecs._wire import decode_record
from waybook.journal import erase, verify, verify_file
from waybook.journal._erasure import erasure_finding, logged_erasure_finding
from waybook.model import ErasedRecord, Erasure, NewRecord

SECRET = "a secret that must go 9e1f"


def chat(path: Path) -> None:
    with JsonlJournal(path) as journal:
        session = Session.create(journal, journal_id="chat")
        for text in ("hello", SECRET, f"echo {SECRET}", f"again {SECRET}", "bye"):
            session.user(text)


def erased(path: Path) -> None:
    chat(path)
    with JsonlJournal(path) as journal:
        erase(journal, [3, 4, 5], reason="asked")


def forged_without_erasure(path: Path) -> None:
    chat(path)
    lines = path.read_bytes().splitlines(keepends=True)
    forged, _ = erase_line(lines[2][:-1], decode_record(lines[2][:-1]), by=9)
    lines[2] = forged + b"\n"
    path.write_bytes(b"".join(lines))


def pending(path: Path) -> None:
    chat(path)
    with JsonlJournal(path) as journal:
        (target,) = journal.read(2, 1)
        _, marker = erase_line(next(journal.read_lines(2, 1)), target, by=7)
        entry = ErasedRecord(seq=3, state=marker.state, blocks=marker.blocks, parts=("text",))
        body = Erasure(records=(entry,), reason="asked")
        journal.append([NewRecord(id="e1", at=target.at, body=body)], expected=journal.head())


def naming_another_erasure(path: Path) -> None:
    """Record 3 erased by erasure 7; erasure 8 then names record 3 too: a record it did not erase."""
    erased(path)
    with JsonlJournal(path) as journal:
        first = next(r for r in journal.read() if type(r.body) is Erasure)
        body = Erasure(records=first.body.records[:1], reason="again")  # type: ignore[union-attr]
        journal.append([NewRecord(id="e2", at=first.at, body=body)], expected=journal.head())


CASES: dict[str, Callable[[Path], None]] = {
    "erased": erased,
    "forged_without_erasure": forged_without_erasure,
    "pending": pending,
    "naming_another_erasure": naming_another_erasure,
}


@pytest.mark.parametrize("make", CASES.values(), ids=list(CASES))
def test_the_logged_erasure_proof_decides_as_a_second_read_does_or_defers_to_it(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    path = tmp_path / "s.jsonl"
    make(path)
    lines = path.read_bytes().splitlines()
    records = [decode_record(line) for line in lines]
    log = [r for r in records if r.erased is not None or type(r.body) is Erasure]
    logged = logged_erasure_finding(log)
    read_again = erasure_finding(lines)
    assert logged is None or logged == read_again
    with JsonlJournal(path, readonly=True, sidecar=False) as journal:
        assert verify_file(path) == verify(journal)


def test_the_proof_of_a_journal_with_erasures_reads_its_file_once(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    erased(path)
    ops = CountingFileOps()
    journal, report = JsonlJournal.open_proven(path, keep=False, file_ops=ops)
    journal.close()
    assert report.ok
    assert report.records == 7
    assert ops.reads.count(0) == 1
    assert SECRET.encode() not in path.read_bytes()


def test_a_pending_erasure_is_still_found_by_reading_the_journal_again(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    pending(path)
    report = verify_file(path)
    assert report.ok
    assert report.pending_erasures == (3,)
