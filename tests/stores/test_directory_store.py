"""The directory store's own faults: commits a crash left unfed, a torn feed line, layout, purge files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from waybook import JsonlJournal, Session
from waybook.stores import CATALOG_ID, DirectoryStore, InvalidStoreUrlError, JournalExistsError, open_store


def test_records_a_crashed_writer_committed_but_never_fed_are_fed_when_the_journal_is_opened(
    tmp_path: Path,
) -> None:
    with DirectoryStore(tmp_path / "store") as store:
        Session(store.create("s1")).user("fed")
        path = store.path_of("s1")
    # A writer that dies between its commit and its feed write: the same bytes, written without the store.
    Session(JsonlJournal(path, create=False)).user("committed, never fed")
    with DirectoryStore(tmp_path / "store") as store:
        assert [e.seq for e in store.feed() if e.journal_id == "s1"] == [1, 2]
        store.open("s1")
        assert [e.seq for e in store.feed() if e.journal_id == "s1"] == [1, 2, 3]


def test_a_torn_feed_line_is_not_a_run_and_the_next_writer_replaces_it(tmp_path: Path) -> None:
    with DirectoryStore(tmp_path / "store") as store:
        session = Session(store.create("s1"))
        session.user("one")
        before = [(e.journal_id, e.seq) for e in store.feed()]
    feed = tmp_path / "store" / "feed.runs"
    with feed.open("ab") as f:
        f.write(b'["s1",3,')  # a writer killed halfway through its feed line
    with DirectoryStore(tmp_path / "store") as store:
        assert [(e.journal_id, e.seq) for e in store.feed()] == before
        Session(store.open("s1")).assistant("two")
        assert [(e.journal_id, e.seq) for e in store.feed()] == [*before, ("s1", 3)]
    assert re.search(rb'\n\["s1",3,3,"[0-9a-f]{64}"\]\n\Z', feed.read_bytes())  # the run and its last digest


def test_purge_removes_the_journal_file_and_its_quarantined_bytes(tmp_path: Path) -> None:
    with DirectoryStore(tmp_path / "store") as store:
        session = Session(store.create("s1"))
        session.user("secret")
        path = store.path_of("s1")
        session.journal.close()
        with path.open("ab") as f:
            f.write(b'{"seq":3,"torn')
        JsonlJournal(path, create=False).repair()
        store.create("s1.jsonl.x")  # an id whose file name starts like s1's: must survive
        assert len(list(path.parent.glob("s1.jsonl.torn-*"))) == 1
        store.purge("s1", reason="erasure")
        assert sorted(p.name for p in path.parent.iterdir()) == ["s1.jsonl.x.jsonl"]


def test_the_layout_is_a_catalog_a_feed_and_one_file_per_journal(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path}/store") as store:
        store.create("s1")
    names = sorted(str(p.relative_to(tmp_path / "store")) for p in (tmp_path / "store").rglob("*"))
    assert names == [
        "catalog.jsonl",
        "catalog.jsonl.checkpoint",  # the catalog's reopen checkpoint (a cache: docs/jsonl.md)
        "feed.runs",
        "journals",
        "journals/s1.jsonl",
        "store.lock",
    ]
    catalog = JsonlJournal(tmp_path / "store" / "catalog.jsonl", readonly=True)
    first = next(iter(catalog.read()))
    assert (first.body.journal, first.body.role) == (CATALOG_ID, "catalog")  # type: ignore[union-attr]


def test_store_urls_name_a_local_directory(tmp_path: Path) -> None:
    with open_store(f"file://{tmp_path}/a?durability=fsync") as store:
        assert Path(store.url.removeprefix("file:")) == tmp_path / "a"
    with pytest.raises(InvalidStoreUrlError):
        open_store(f"file://example.com{tmp_path}/b")
    with pytest.raises(InvalidStoreUrlError):
        open_store(f"file:{tmp_path}/c?speed=fast")
    with pytest.raises(InvalidStoreUrlError):
        open_store("ftp://example.com/x")
    with pytest.raises(InvalidStoreUrlError):
        open_store("no-scheme")
    assert not (tmp_path / "b").exists()
    assert not (tmp_path / "c").exists()


def test_a_journal_whose_creator_died_before_cataloguing_it_is_adopted_not_lost(tmp_path: Path) -> None:
    with DirectoryStore(tmp_path / "store") as store:
        store.create("listed")
        path = store.path_of("orphan")
    # The creator wrote the journal file (with its header) and died before the catalog entry.
    JsonlJournal.create(path, journal_id="orphan", metadata={"user": "ada"}).close()
    with DirectoryStore(tmp_path / "store") as store:
        assert store.exists("orphan")
        with pytest.raises(JournalExistsError):
            store.create("orphan")
        listed = {i.journal_id: i.metadata for i in store.list()}
        assert listed == {"listed": {}, "orphan": {"user": "ada"}}
        Session(store.open("orphan")).user("still writable")
        assert [e.seq for e in store.feed() if e.journal_id == "orphan"] == [1, 2]
