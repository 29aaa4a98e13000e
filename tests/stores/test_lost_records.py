"""A store knows what it holds (issue 42.3 and 42.4): a journal that lost records or its storage is
damage, named, at once; the healthy journals beside it still open, list, verify and serve.

Each store records every journal's committed head as it changes (the directory store in its feed index,
the database stores in the journal's row), so a truncated, emptied, deleted or replaced file, or rows
deleted behind the store's back, cannot pass for a shorter journal. On the old code a truncated file
read "ok, 0 records", a deleted one took `ls` and serve's front page down, and PostgreSQL looped for
ever on a journal whose last rows were gone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import store_damage
from tests.helpers.blocking import outcome
from tests.helpers.cli_runner import waybook
from tests.stores.conftest import STORES, StoreKind
from waybook import Session
from waybook.journal import VerifyReport
from waybook.model import IntegrityError
from waybook.stores import (
    LostRecordsError,
    open_journal,
    open_proven,
    open_store,
    prove,
)

PERSISTENT = [kind for kind in STORES if kind.persistent]
BOUND = 60.0


def answer(call: Callable[[], Any]) -> object:
    """`call`'s result or exception, from a daemon thread given BOUND seconds (a hang fails the test)."""
    return outcome(call, within=BOUND)


def two_journals(url: str) -> None:
    with open_store(url) as store:
        for journal_id in ("healthy", "lost"):
            session = Session(store.create(journal_id))
            session.user(f"a question in {journal_id}")
            session.assistant("an answer")


@pytest.fixture(params=PERSISTENT, ids=lambda k: k.name)
def stored(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    kind: StoreKind = request.param
    url = kind.url(tmp_path)
    two_journals(url)
    return url


def assert_lost(url: str, committed: int) -> None:
    """Every way in names the lost journal as damage; the healthy one is untouched."""
    with open_store(url) as store:
        refused = answer(lambda: store.open("lost"))
        assert isinstance(refused, LostRecordsError), refused
        assert isinstance(refused, IntegrityError)
        assert refused.journal_id == "lost"
        assert refused.committed.seq == committed
        assert "lost" in str(refused)
        assert f"seq {committed}" in str(refused)
        assert isinstance(answer(lambda: open_journal(store, "lost")), LostRecordsError)
        report = answer(lambda: prove(store, "lost"))
        assert isinstance(report, VerifyReport), report
        assert not report.ok
        assert report.bad_seq is not None
        assert "lost records" in (report.reason or "")
        journal, proof = open_proven(store, "lost")
        journal.close()
        assert not proof.ok
        assert [info.journal_id for info in store.list()] == ["healthy", "lost"]
        with store.open("healthy") as healthy:
            assert healthy.head().seq == 3
        assert prove(store, "healthy").ok


def test_a_journal_whose_tail_was_removed_is_lost_records_not_a_shorter_journal(stored: str) -> None:
    store_damage.lose_tail(stored, "lost", keep=2)
    assert_lost(stored, committed=3)


def test_a_journal_whose_storage_is_gone_is_lost_records(stored: str) -> None:
    store_damage.lose_storage(stored, "lost")
    assert_lost(stored, committed=3)


@pytest.mark.parametrize("how", ["emptied", "deleted", "folder"])
def test_a_directory_stores_journal_file_emptied_deleted_or_replaced_by_a_folder_is_lost(
    tmp_path: Path, how: str
) -> None:
    url = f"file:{tmp_path}/store"
    two_journals(url)
    store_damage.lose_storage(url, "lost", how=how)
    assert_lost(url, committed=3)


def test_a_journal_file_replaced_by_another_journals_file_is_lost(tmp_path: Path) -> None:
    """The same number of records, another history: the head the store committed is not there."""
    url = f"file:{tmp_path}/store"
    two_journals(url)
    store_damage.replace_file(url, "lost", "healthy")
    assert_lost(url, committed=3)


def test_a_database_journal_open_when_its_tail_is_deleted_answers_with_the_damage_at_once(
    stored: str,
) -> None:
    """PostgreSQL looped for ever (one query per turn) in head(), read() and open once the last rows of
    a journal were deleted under its head row."""
    if stored.startswith("file:"):
        pytest.skip("a file journal held open is the JSONL journal's own case (tests/journal)")
    with open_store(stored) as store, store.open("lost") as journal:
        store_damage.lose_tail(stored, "lost", keep=1)
        for call in (lambda: list(journal.read()), lambda: store.open("lost")):  # open: head() from seq 0
            assert isinstance(answer(call), LostRecordsError)
        assert answer(journal.head).seq == 3  # type: ignore[attr-defined]  # (what it committed, known)


def test_verify_ls_and_serve_name_the_lost_journal_and_keep_the_healthy_ones(stored: str) -> None:
    store_damage.lose_storage(stored, "lost")
    verified = waybook("verify", "--store", stored)
    assert verified.returncode == 1, verified
    assert "lost" in verified.stdout + verified.stderr
    assert "lost records" in verified.stdout
    assert any("healthy" in line and ": ok, 3 records" in line for line in verified.stdout.splitlines())
    listed = waybook("ls", "--store", stored)
    assert listed.returncode == 1, listed
    assert "healthy" in listed.stdout
    assert "a question in healthy" in listed.stdout
    assert "lost" in listed.stderr
    assert "lost records" in listed.stderr
    as_json = waybook("ls", "--store", stored, "--json")
    assert as_json.returncode == 1
    from waybook.view import ViewServer

    server = ViewServer(stored, port=0)
    try:
        page = server.front_page()
    finally:
        server.server_close()
    assert "a question in healthy" in page
    assert "verified" in page
    assert "lost records" in page


def test_the_feed_of_a_store_with_a_lost_journal_names_the_loss_instead_of_skipping_it(stored: str) -> None:
    store_damage.lose_storage(stored, "lost")
    with open_store(stored) as store:
        if not stored.startswith("file:"):
            pytest.skip("a database's feed is its rows: a deleted row leaves a gap, as a purge does")
        got = answer(lambda: list(store.feed()))
        assert isinstance(got, IntegrityError), got
        assert "lost" in str(got)


def test_an_emptied_catalog_is_lost_not_a_new_empty_store(tmp_path: Path) -> None:
    """The old code wrote a fresh catalog header over an emptied catalog file: every journal vanished
    from the listing and the store reported nothing."""
    url = f"file:{tmp_path}/store"
    two_journals(url)
    (tmp_path / "store" / "catalog.jsonl").write_bytes(b"")
    with pytest.raises(LostRecordsError, match="_catalog"):
        open_store(url)
    assert (tmp_path / "store" / "catalog.jsonl").read_bytes() == b""  # nothing was written


def test_a_sqlite_store_of_the_first_schema_takes_its_heads_from_its_records(tmp_path: Path) -> None:
    import sqlite3

    url = f"sqlite:{tmp_path}/store.db"
    two_journals(url)
    with sqlite3.connect(tmp_path / "store.db") as conn:  # back to schema 1: no head columns
        conn.execute("ALTER TABLE journals DROP COLUMN head_seq")
        conn.execute("ALTER TABLE journals DROP COLUMN head_digest")
        conn.execute("PRAGMA user_version = 1")
    with open_store(url) as store:
        assert [r.seq for r in store.open("lost").read()] == [1, 2, 3]
    store_damage.lose_tail(url, "lost", keep=1)
    assert_lost(url, committed=3)


def test_a_catalog_that_lost_its_tail_still_opens_to_be_verified_and_refuses_every_catalog_write(
    tmp_path: Path,
) -> None:
    url = f"file:{tmp_path}/store"
    two_journals(url)
    catalog = tmp_path / "store" / "catalog.jsonl"
    lines = catalog.read_bytes().splitlines(keepends=True)
    catalog.write_bytes(b"".join(lines[:-1]))  # the creation of "lost" is gone
    with open_store(url) as store:
        report = prove(store, "_catalog")
        assert not report.ok
        assert report.bad_seq == len(lines)
        assert "lost records" in (report.reason or "")
        with pytest.raises(LostRecordsError, match="_catalog"):
            store.create("another")  # a new entry where a committed one was: never
        assert not store.exists("another")
        with pytest.raises(LostRecordsError):
            store.hide("healthy", reason="tidy up")
        assert [info.journal_id for info in store.list()] == ["healthy"]
