"""PostgreSQL erasure down to the data directory (docs/erasure.md): after `erase` and `scrub` (VACUUM
FULL, CHECKPOINT, a WAL switch, CHECKPOINT) on a cluster with `wal_recycle = off`, the erased text is in
no file of the data directory, the journal verifies and every other digest stays."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.pg_server import SETTINGS, Cluster, NoServerError, fresh_schema, with_schema
from waybook import Session
from waybook.journal import erase, verify
from waybook.stores import open_store
from waybook.stores.postgres import PostgresStore

SECRET = b"postgres-erased-7c1d-confidential"


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    try:
        owned = Cluster.create(settings=(*SETTINGS, "wal_recycle=off"))
    except NoServerError as exc:
        pytest.skip(str(exc))
    try:
        yield owned
    finally:
        owned.stop()


def files_holding(root: Path, needle: bytes) -> list[str]:
    found = []
    for path in root.rglob("*"):
        if path.is_file():
            try:
                if needle in path.read_bytes():
                    found.append(str(path.relative_to(root)))
            except OSError:
                continue
    return found


def test_after_erase_and_scrub_no_file_of_the_data_directory_holds_the_text(cluster: Cluster) -> None:
    url = with_schema(cluster.url, fresh_schema(cluster.url))
    with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        session = Session(store.create("chat"))  # type: ignore[arg-type]
        session.user("hello")
        session.user(SECRET.decode())
        session.user("bye")
        store.scrub()  # the text reaches the table's files and the WAL
        assert files_holding(cluster.datadir, SECRET)
        journal = store.open("chat")
        before = [r.digest for r in journal.read()]
        erase(journal, 3, reason="asked")
        store.scrub()
        assert verify(journal).ok
        assert [r.digest for r in journal.read()][: len(before)] == before
        journal.close()
        session.journal.close()
    assert files_holding(cluster.datadir, SECRET) == []


def test_a_blob_only_erased_content_referenced_leaves_the_data_directory_after_collect_and_scrub(
    cluster: Cluster,
) -> None:
    url = with_schema(cluster.url, fresh_schema(cluster.url))
    with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        journal = store.create("chat")
        session = Session.create(journal, blobs=store.blobs, inline_limit=8)
        digest = session.tool_result("c1", (SECRET + b" in a blob").decode()).body.content[0].digest  # type: ignore[union-attr]
        store.scrub()
        assert files_holding(cluster.datadir, SECRET)
        with store.postgres_engine.connection("age the blobs") as conn, conn.transaction():
            conn.execute(b"UPDATE waybook_blobs SET stored = stored - interval '2 hours'")
            conn.execute(b"UPDATE waybook_blob_leases SET taken = taken - interval '2 hours'")
        erase(journal, [2], reason="asked")
        assert store.blobs.collect(grace=600).removed == (digest,)
        store.scrub()
        assert verify(journal).ok
        journal.close()
    assert files_holding(cluster.datadir, SECRET) == []
