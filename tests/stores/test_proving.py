"""Reading and proving a store's journals through `waybook.stores` alone (`open_journal`, `prove`,
`open_proven`, `blobs_for`), the same on every store, with the stores' abilities checked by isinstance."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.helpers.builders import chat
from waybook import JsonlJournal, Session
from waybook.journal import verify_file
from waybook.model import JournalError, StorageError, TextBlock
from waybook.stores import (
    CATALOG_ID,
    InvalidJournalIdError,
    JournalFiles,
    JournalPurgedError,
    JournalStore,
    NonBlockingStore,
    StoreNotFoundError,
    UnknownJournalError,
    blobs_for,
    open_journal,
    open_proven,
    open_store,
    prove,
)

URLS = {
    "memory": lambda tmp: "memory:",
    "directory": lambda tmp: f"file:{tmp}/store",
    "sqlite": lambda tmp: f"sqlite:{tmp}/store.db",
}


@pytest.fixture(params=list(URLS))
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return URLS[request.param](tmp_path)  # type: ignore[no-untyped-call]


def write(store: JournalStore, journal_id: str = "s", nodes: int = 6) -> None:
    with store.create(journal_id) as journal:
        head = journal.head()
        for record in chat(nodes):
            head = journal.append([record], expected=head).head


def test_a_journal_and_the_catalog_prove_and_an_id_that_is_no_journal_raises_the_stores_error(
    url: str,
) -> None:
    with open_store(url) as store:
        write(store)
        write(store, "gone")
        store.purge("gone", reason="erasure")
        report = prove(store, "s")
        assert (report.ok, report.records) == (True, 7)
        assert prove(store, CATALOG_ID).ok
        with pytest.raises(UnknownJournalError):
            prove(store, "nobody")
        with pytest.raises(JournalPurgedError):
            prove(store, "gone")
        with pytest.raises(InvalidJournalIdError):
            prove(store, "../s")


def test_open_proven_gives_the_journal_and_the_report_of_one_pass(url: str) -> None:
    with open_store(url) as store:
        write(store)
        journal, report = open_proven(store, "s")
        with journal:
            assert report == prove(store, "s")
            assert len(list(journal.read())) == report.records
            with pytest.raises(JournalError):
                Session(journal).user("read-only")
        catalog, proof = open_proven(store, CATALOG_ID)
        with catalog:
            assert proof.ok
            assert proof.records == len(list(catalog.read()))


def test_open_journal_reads_a_journal_of_a_url_and_closes_the_store_with_it(url: str) -> None:
    if url == "memory:":
        pytest.skip("a memory: URL opens a new empty store")
    with open_store(url) as store:
        write(store)
    journal = open_journal(url, "s")
    with journal:
        assert journal.head().seq == 7
        with pytest.raises(JournalError):
            journal.append([], expected=journal.head())
    with pytest.raises(JournalError, match="closed"):
        journal.store.list()


def test_open_journal_on_a_store_leaves_the_store_open_and_writes_nothing(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        write(store)
        before = {p: p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file()}
        with open_journal(store, "s") as journal:
            assert journal.head().seq == 7
        after = {p: p.read_bytes() for p in (tmp_path / "store").rglob("*") if p.is_file()}
        assert after == before
        assert store.exists("s")


def test_a_store_that_is_not_there_is_not_created_by_a_reader(tmp_path: Path) -> None:
    for url in (f"file:{tmp_path}/nowhere", f"sqlite:{tmp_path}/nowhere.db"):
        with pytest.raises(StoreNotFoundError) as caught:
            open_journal(url, "s")
        assert caught.value.url == url
        with pytest.raises(StoreNotFoundError):
            open_store(url, create=False)
    assert list(tmp_path.iterdir()) == []


def test_damage_in_a_directory_store_is_reported_by_prove_and_refused_by_open_journal(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        write(store)
        assert isinstance(store, JournalFiles)
        path = store.file_of("s")
    lines = path.read_bytes().splitlines(keepends=True)
    lines[3] = lines[3].replace(b'"', b"'", 1)
    path.write_bytes(b"".join(lines))
    with open_store(url) as store:
        report = prove(store, "s")
        assert report == verify_file(path)
        assert (report.ok, report.bad_seq) == (False, 4)
        journal, proof = open_proven(store, "s")
        with journal:
            assert proof == report
            assert len(list(journal.read())) == 3  # the proven prefix
    with pytest.raises(JournalError):
        open_journal(url, "s")


def test_damage_in_a_sqlite_store_is_reported_by_prove_not_raised(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        write(store)
    with sqlite3.connect(tmp_path / "store.db") as db:
        db.execute(
            "UPDATE records SET line = replace(line, 'user', 'resu') WHERE journal_id = 's' AND seq = 4"
        )
    with open_store(url) as store:
        report = prove(store, "s")
        assert not report.ok
        assert report.bad_seq == 4


def test_blobs_for_finds_a_journals_store_blobs_wherever_it_was_opened(tmp_path: Path) -> None:
    url = f"file:{tmp_path}/store"
    with open_store(url) as store:
        ref = store.blobs.put(b"large output")
        session = Session(store.create("s"))
        session.user([TextBlock("see the blob")])
        session.journal.close()
        assert isinstance(store, JournalFiles)
        path = store.file_of("s")
    with open_journal(url, "s") as journal:
        blobs = blobs_for(journal)
        assert blobs is not None
        assert blobs.read(ref.digest) == b"large output"
    with JsonlJournal(path, readonly=True) as journal:  # the file of a directory store's journal
        blobs = blobs_for(journal)
        assert blobs is not None
        assert blobs.read(ref.digest) == b"large output"
    copied = tmp_path / "copied.jsonl"
    copied.write_bytes(path.read_bytes())
    with JsonlJournal(copied, readonly=True) as journal:
        assert blobs_for(journal) is None


def test_abilities_are_protocols_a_store_has_or_not(tmp_path: Path) -> None:
    with open_store("memory:") as memory, open_store(f"file:{tmp_path}/d") as directory:
        assert isinstance(memory, NonBlockingStore)
        assert memory.never_blocks
        assert not isinstance(directory, NonBlockingStore)
        assert isinstance(directory, JournalFiles)
        assert not isinstance(memory, JournalFiles)
    with open_store(f"sqlite:{tmp_path}/s.db") as database:
        assert not isinstance(database, JournalFiles | NonBlockingStore)


def test_a_read_only_journal_of_a_database_store_refuses_appends_naming_store_open(tmp_path: Path) -> None:
    url = f"sqlite:{tmp_path}/store.db"
    with open_store(url) as store:
        write(store)
    with open_journal(url, "s") as journal, pytest.raises(StorageError, match=r"store\.open"):
        journal.append([], expected=journal.head())
