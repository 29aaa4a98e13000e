"""The SQLite store's own faults: a locked database, altered bytes, a file that is not a store."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from waybook import Session
from waybook.model import BrokenChainError, IntegrityError, StorageError
from waybook.stores import SqliteStore, StoreBusyError, open_store


def test_a_locked_database_is_a_typed_busy_error_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SqliteStore(path, busy_timeout=0.05) as store:
        session = Session(store.create("s1"))
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holding the write lock
        with pytest.raises(StoreBusyError, match="locked by other writers"):
            session.user("blocked")
        with pytest.raises(StoreBusyError):
            store.create("s2")
        other.execute("ROLLBACK")
        other.close()
        assert session.journal.head().seq == 1
        assert not store.exists("s2")
        session.user("after the lock is released")
        assert session.journal.head().seq == 2


def test_altered_record_bytes_are_refused_on_read(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with SqliteStore(path) as store:
        session = Session(store.create("s1"))
        session.user("original words")
        session.assistant("reply")
    db = sqlite3.connect(path)
    altered = "CAST(replace(CAST(line AS TEXT), 'original', 'altered!') AS BLOB)"
    db.execute(f"UPDATE records SET line = {altered} WHERE journal_id = 's1'")
    db.commit()
    db.close()
    with SqliteStore(path) as store:
        with pytest.raises(BrokenChainError):
            store.open("s1")
        with pytest.raises(IntegrityError):
            list(store.feed())


def test_purge_leaves_no_copy_in_the_database_or_its_log(tmp_path: Path) -> None:
    path = tmp_path / "store.db"
    with open_store(f"sqlite:{path}") as store:
        Session(store.create("s1")).user("my secret phrase is tangerine")
        store.purge("s1", reason="erasure")
        on_disk = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.is_file())
        assert b"tangerine" not in on_disk


def test_a_file_that_is_not_a_store_is_a_storage_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello, not a database" * 100)
    with pytest.raises(StorageError):
        SqliteStore(path)
    with pytest.raises(StorageError):
        SqliteStore(tmp_path / "missing-dir" / "store.db")


def test_another_programs_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
    before = path.read_bytes()
    with pytest.raises(StorageError, match=r"not a waybook store.*invoices"):
        SqliteStore(path)
    with sqlite3.connect(path) as conn:
        tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables == {"invoices"}
    assert path.read_bytes() == before


def test_an_empty_database_file_becomes_a_store(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    sqlite3.connect(path).close()
    with SqliteStore(path) as store:
        assert list(store.list()) == []


def test_position_is_the_head_and_leaf_another_writer_left(tmp_path: Path) -> None:
    with SqliteStore(tmp_path / "store.db") as store:
        writer = Session(store.create("s1"))
        question = writer.user("hi")
        writer.assistant("hello")
        writer.branch_from(question.id, reason="retry")
        journal = store.open("s1")
        assert journal.position() == (writer.head, question.id)
