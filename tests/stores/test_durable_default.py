"""Acknowledged means durable by default on every store (issue 41): the directory store's journals,
opened by URL with no options, fsync each append before it returns, as SQLite (synchronous=FULL) and
PostgreSQL (synchronous_commit=on) commit; `flush` and `none` are explicit URL options."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.faults import SyncTrackingFileOps
from waybook import Session
from waybook.journal import Durability
from waybook.stores import DirectoryStore, SqliteStore, open_store


def test_a_file_store_opened_by_url_is_durable_by_default(tmp_path: Path) -> None:
    with open_store(f"file:{tmp_path}/store") as store:
        assert isinstance(store, DirectoryStore)
        assert store.durability is Durability.GROUP


def test_twenty_acknowledged_appends_to_the_file_store_made_twenty_fsyncs(tmp_path: Path) -> None:
    ops = SyncTrackingFileOps()
    with DirectoryStore(tmp_path / "store", file_ops=ops) as store:
        session = Session(store.create("s"))
        before = ops.fsyncs
        for n in range(20):
            session.user(f"message {n}")
            assert ops.synced(store.path_of("s")), f"append {n} returned before its bytes were fsynced"
        assert ops.fsyncs - before >= 20


def test_sqlite_commits_with_synchronous_full_by_default(tmp_path: Path) -> None:
    with open_store(f"sqlite:{tmp_path}/s.db") as store:
        assert isinstance(store, SqliteStore)
        assert store.synchronous == "FULL"


@pytest.mark.parametrize(("policy", "sqlite"), [("flush", "NORMAL"), ("none", "OFF")])
def test_weaker_durability_is_an_explicit_url_option(tmp_path: Path, policy: str, sqlite: str) -> None:
    with open_store(f"file:{tmp_path}/store?durability={policy}") as store:
        assert isinstance(store, DirectoryStore)
        assert store.durability == policy
    with open_store(f"sqlite:{tmp_path}/s.db?durability={policy}") as store:
        assert isinstance(store, SqliteStore)
        assert store.synchronous == sqlite
