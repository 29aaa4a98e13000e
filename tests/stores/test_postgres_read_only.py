"""Issue 42.4: a PostgreSQL store opens read-only from a hot standby and from a read-only role. The open
changes nothing when the schema is current (no DDL, no lock), journals and the catalog read and prove,
and what needs a writer (appends, creations, numbering the feed) says so in a typed error. The old code
failed the open itself: "cannot execute CREATE TABLE in a read-only transaction" on a standby and
"permission denied for schema public" for a read-only role. The standby is a real one: `pg_basebackup
-R` of the test's own cluster (`standby.signal`), started beside it."""

from __future__ import annotations

import psycopg
import pytest

from tests.helpers.pg_server import Cluster, fresh_schema, standby_of, with_schema
from waybook import Session
from waybook.cli import main
from waybook.model import StorageError
from waybook.stores import open_store


@pytest.fixture
def written(pg_cluster: Cluster) -> tuple[str, str]:
    """A store in a fresh schema of the cluster with one journal of three records: (base URL, schema)."""
    schema = fresh_schema(pg_cluster.url)
    with open_store(with_schema(pg_cluster.url, schema)) as store:
        session = Session(store.create("s"))
        session.user("hello")
        session.assistant("hi")
    return pg_cluster.url, schema


def reads_and_refuses_writes(url: str, capsys: pytest.CaptureFixture[str]) -> None:
    with open_store(url) as store:
        assert [entry.journal_id for entry in store.list()] == ["s"]
        journal = store.open("s")
        assert [record.seq for record in journal.read()] == [1, 2, 3]
        assert store.open_proven("s", keep=False)[1].ok  # the proof `verify --store` runs
        with pytest.raises(StorageError, match=r"the feed .* need a writer on the primary"):
            list(store.feed())  # its records were never numbered: that is a write
        with pytest.raises(StorageError, match="need a writer on the primary"):
            Session(journal).user("refused")
        with pytest.raises(StorageError, match="need a writer on the primary"):
            store.create("t")
        assert [record.seq for record in store.open("s").read()] == [1, 2, 3]
    assert main(["verify", "--store", url]) == 0
    assert "s" in capsys.readouterr().out


def test_a_hot_standby_opens_the_store_read_only(
    written: tuple[str, str], pg_cluster: Cluster, capsys: pytest.CaptureFixture[str]
) -> None:
    _, schema = written
    with standby_of(pg_cluster) as standby:
        with psycopg.connect(standby.url) as conn:
            assert conn.execute("SELECT pg_is_in_recovery()").fetchone() == (True,)
        reads_and_refuses_writes(with_schema(standby.url, schema), capsys)


def test_a_read_only_role_opens_the_store_read_only(
    written: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    base, schema = written
    role = f"reader_{schema[-12:]}"
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN".encode())
        conn.execute(f"GRANT USAGE ON SCHEMA {schema} TO {role}".encode())
        conn.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA {schema} TO {role}".encode())
    try:
        url = with_schema(base.replace("postgres@", f"{role}@", 1), schema)
        reads_and_refuses_writes(url, capsys)
    finally:
        with psycopg.connect(base, autocommit=True) as conn:
            conn.execute(f"DROP OWNED BY {role}".encode())
            conn.execute(f"DROP ROLE {role}".encode())


def test_a_read_only_connection_to_a_store_that_needs_a_migration_says_so(
    pg_cluster: Cluster,
) -> None:
    schema = fresh_schema(pg_cluster.url)  # empty: the store was never created
    read_only = "options=-c%20default_transaction_read_only%3Don%20"
    url = with_schema(pg_cluster.url, schema).replace("options=", read_only, 1)
    with pytest.raises(StorageError, match="open the store once through a writer"):
        open_store(url)
