"""Erasure on every store (docs/erasure.md): after `erase`, the erased text is nowhere in the store's raw
bytes, the journal verifies, a guessed text does not match its commitment, every other digest and feed
position is unchanged, and the receipt recomputes from the journal alone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT
from tests.stores.conftest import StoreKind
from waybook import Session
from waybook.codecs._commitments import guess_state
from waybook.journal import erase, erasure_receipt, verify
from waybook.model import Erasure, InvalidArgumentError, InvalidErasureError, TextBlock, UserMessage
from waybook.stores import JournalStore, copy_records, open_store

SECRET = "the patient's diagnosis is 7f3a-confidential"
GUESS = "the patient's diagnosis is 0000-confidential"


def written(store: JournalStore) -> tuple[Session, list[str]]:
    session = Session(store.create("chat"))  # type: ignore[arg-type]
    session.user("hello")
    session.assistant("hi, how can I help?")
    session.user(SECRET)
    session.assistant(f"noted: {SECRET}")
    session.user("thanks")
    digests = [r.digest for r in session.journal.read()]
    return session, digests


def raw_bytes(kind: StoreKind, tmp_path: Path, store: JournalStore) -> bytes:
    """Every byte the store keeps: its files, or (PostgreSQL) the rows' stored lines."""
    if kind.name == "postgresql":
        engine = store._engine  # type: ignore[attr-defined]
        with engine.transaction(write=False) as tx:
            return b"\n".join(bytes(line) for line in tx.lines("chat", 0, 1000))
    if kind.name == "memory":
        journal = store.open("chat")
        return b"\n".join(journal.read_lines())
    return b"".join(p.read_bytes() for p in sorted(tmp_path.rglob("*")) if p.is_file())


def test_after_erase_the_text_is_nowhere_the_journal_verifies_and_other_digests_stay(
    kind: StoreKind, url: str, tmp_path: Path
) -> None:
    with open_store(url) as store:
        session, before = written(store)
        journal = store.open("chat")
        assert SECRET.encode() in raw_bytes(kind, tmp_path, store)
        feed_before = [(e.journal_id, e.seq) for e in store.feed(0)]
        receipt = erase(journal, [4, 5], reason="the patient asked", actor="desk")
        assert [entry.seq for entry in receipt.erased] == [4, 5]
        after = [r.digest for r in journal.read()]
        assert after[: len(before)] == before
        assert [type(r.body) for r in journal.read()][-1] is Erasure
        report = verify(journal)
        assert report.ok, report
        assert erasure_receipt(journal, receipt.erasures[0].seq) == receipt
        feed_after = [(e.journal_id, e.seq) for e in store.feed(0)]
        assert feed_after[: len(feed_before)] == feed_before
        journal.close()
        session.journal.close()
        assert SECRET.encode() not in raw_bytes(kind, tmp_path, store)
        assert b"confidential" not in raw_bytes(kind, tmp_path, store)
    if kind.persistent:
        with open_store(url) as store, store.open("chat") as journal:
            assert verify(journal).ok
            records = list(journal.read())
            assert [r.digest for r in records][: len(before)] == before
            erased = records[3]
            assert erased.erased is not None
            assert erased.body == UserMessage(parent=records[2].id, content=())
            assert receipt.erased[0].state != guess_state("0" * 32, UserMessage(parent=None, content=()))


def test_a_guessed_text_does_not_match_the_erased_commitment(url: str) -> None:
    with open_store(url) as store:
        session, _ = written(store)
        journal = store.open("chat")
        (record,) = journal.read(3, 1)
        salt = record.salt
        assert salt is not None
        receipt = erase(journal, 4, reason="asked")
        (entry,) = receipt.erased
        guessed = UserMessage(parent=record.body.parent, content=(TextBlock(GUESS),))  # type: ignore[union-attr]
        assert guess_state(salt, guessed) != entry.state
        assert guess_state(salt, record.body) == entry.state  # the real text under the erased salt
        journal.close()
        session.journal.close()


def test_a_request_past_the_head_or_without_a_reason_writes_nothing(url: str) -> None:
    with open_store(url) as store:
        session, before = written(store)
        journal = store.open("chat")
        with pytest.raises(InvalidErasureError, match="no record 99"):
            erase(journal, [4, 99], reason="asked")
        with pytest.raises(InvalidErasureError, match="needs a reason"):
            erase(journal, 4, reason=" ")
        with pytest.raises(InvalidErasureError, match="header"):
            erase(journal, 1, reason="asked")
        assert [r.digest for r in journal.read()] == before
        journal.close()
        session.journal.close()


def test_a_sqlite_eraser_killed_before_it_scrubs_the_log_leaves_the_next_open_to_scrub_it(
    tmp_path: Path,
) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        session, before = written(store)
        session.journal.close()
    run = subprocess.run(
        [sys.executable, "-m", "tests.helpers.killed_sqlite_eraser", url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == -9, run.stderr
    with open_store(url) as store, store.open("chat") as journal:  # the open scrubs what the eraser left
        assert verify(journal).ok
        assert [r.digest for r in journal.read()][: len(before)] == before
        assert journal.read(3, 1).__next__().erased is not None
        assert SECRET.encode() in b"".join(journal.read_lines())  # seq 5 still says it: only seq 4 was erased
        raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
        assert SECRET.encode() not in raw.replace(b"noted: " + SECRET.encode(), b"")


def test_a_sealed_journal_copies_verbatim_and_one_with_erased_records_is_refused_by_name(url: str) -> None:
    with open_store(url) as store, open_store("memory:") as first, open_store("memory:") as second:
        session, _ = written(store)
        journal = store.open("chat")
        copy = first.create("chat", header=False)  # a copy keeps its id: its header names it
        copy_records(journal.read(), copy)
        assert list(copy.read_lines()) == list(journal.read_lines())  # salts kept: the same bytes
        erase(journal, 4, reason="asked")
        other = second.create("chat", header=False)
        with pytest.raises(InvalidArgumentError, match="copy its file"):
            copy_records(journal.read(), other)
        for opened in (journal, copy, other, session.journal):
            opened.close()
