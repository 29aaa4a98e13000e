"""`DirectoryStore.create_sealed` (issue 50): journals created whole from their sealed lines, proved first.

The bytes must be those an append per record gives (every digest kept), nothing may be written when any
journal of the batch fails its proof or names a taken id, and the journals created are catalogued and
fed as `create` and `append` would have done.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.sessions import branching_session
from waybook.journal import InMemoryJournal, SessionJournal
from waybook.model import BrokenChainError, DecodeError, Head
from waybook.stores import (
    DirectoryStore,
    JournalExistsError,
    SealedCreating,
    SealedJournal,
    StoreArgumentError,
    copy_records,
    open_store,
    prove,
)


def staged(journal_id: str) -> SessionJournal:
    """A checked journal, as an import stages it (records appended in memory, every rule checked)."""
    return branching_session(InMemoryJournal(journal_id), journal_id=journal_id)


def sealed(journal_id: str, journal: SessionJournal | None = None) -> SealedJournal:
    journal = journal if journal is not None else staged(journal_id)
    return SealedJournal.of(journal_id, journal.read_lines(), journal.head())


def files_of(store: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in (store / "journals").glob("*.jsonl")}


def test_the_directory_store_creates_sealed_journals() -> None:
    assert issubclass(DirectoryStore, SealedCreating)


def test_a_sealed_journal_is_byte_for_byte_the_journal_its_appends_give(tmp_path: Path) -> None:
    sources = {journal_id: staged(journal_id) for journal_id in ("a", "b")}  # (their salts are random)
    with DirectoryStore(tmp_path / "whole") as store:
        store.create_sealed([sealed(journal_id, source) for journal_id, source in sources.items()])
    with DirectoryStore(tmp_path / "appended") as store:
        for journal_id, source in sources.items():
            with store.create(journal_id, header=False) as journal:
                copy_records(source.read(), journal)
    assert files_of(tmp_path / "whole") == files_of(tmp_path / "appended")
    assert len(files_of(tmp_path / "whole")) == 2


def test_sealed_journals_are_catalogued_fed_and_proved_after_a_reopen(tmp_path: Path) -> None:
    source = staged("a")
    with DirectoryStore(tmp_path / "s") as store:
        store.create_sealed([sealed("a", source), sealed("b")])
        assert store.committed("a").head == source.head()
    with open_store(f"file:{tmp_path / 's'}") as store:
        assert [info.journal_id for info in store.list().journals] == ["a", "b"]
        fed = [(entry.journal_id, entry.seq) for entry in store.feed() if entry.journal_id == "a"]
        assert fed == [("a", seq) for seq in range(1, source.head().seq + 1)]
        report = prove(store, "a")
        assert report.ok, report
        assert report.records == source.head().seq
        with store.open("a") as journal:  # and it takes appends as any journal does
            assert journal.head() == source.head()


def test_a_tampered_line_is_refused_before_any_file_is_written(tmp_path: Path) -> None:
    good = sealed("a")
    bad = sealed("b")
    data = bad.data.replace(b"buy milk", b"buy beer", 1)
    assert data != bad.data
    with DirectoryStore(tmp_path / "s") as store, pytest.raises((BrokenChainError, DecodeError)):
        store.create_sealed([good, SealedJournal("b", data, bad.head)])
    assert files_of(tmp_path / "s") == {}
    with DirectoryStore(tmp_path / "s") as store:
        assert store.list().journals == ()


def test_lines_that_end_before_the_head_given_are_refused(tmp_path: Path) -> None:
    whole = sealed("a")
    cut = whole.data[: whole.data.rindex(b"\n", 0, len(whole.data) - 1) + 1]  # the last line dropped
    with DirectoryStore(tmp_path / "s") as store:
        with pytest.raises(StoreArgumentError, match="not at the head given"):
            store.create_sealed([SealedJournal("a", cut, whole.head)])
        with pytest.raises(StoreArgumentError, match="each ending in a newline"):
            store.create_sealed([SealedJournal("a", whole.data[:-1], whole.head)])
        with pytest.raises(StoreArgumentError, match="not at the head given"):
            store.create_sealed([SealedJournal("a", whole.data, Head(whole.head.seq, "0" * 64))])
    assert files_of(tmp_path / "s") == {}


def test_a_taken_id_refuses_the_whole_batch_before_any_file_is_written(tmp_path: Path) -> None:
    with DirectoryStore(tmp_path / "s") as store:
        store.create("b").close()
        before = files_of(tmp_path / "s")
        with pytest.raises(JournalExistsError):
            store.create_sealed([sealed("a"), sealed("b")])
        with pytest.raises(StoreArgumentError, match="named twice"):
            store.create_sealed([sealed("c"), sealed("c")])
        assert files_of(tmp_path / "s") == before
        assert [info.journal_id for info in store.list().journals] == ["b"]


def test_an_orphan_file_in_the_way_is_adopted_and_refused(tmp_path: Path) -> None:
    """A file a crashed creator linked but never catalogued: the batch is refused, the orphan listed."""
    with DirectoryStore(tmp_path / "s") as store:
        store.create_sealed([sealed("a")])
    orphan = tmp_path / "s" / "journals" / "b.jsonl"
    orphan.write_bytes(sealed("b").data)
    with DirectoryStore(tmp_path / "s") as store:
        with pytest.raises(JournalExistsError):
            store.create_sealed([sealed("b"), sealed("c")])
        assert [info.journal_id for info in store.list().journals] == ["a", "b"]
        assert not (tmp_path / "s" / "journals" / "c.jsonl").exists()
