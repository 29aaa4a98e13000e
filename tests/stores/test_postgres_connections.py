"""Issue 50: what a command costs the PostgreSQL server beyond its statements.

A command (`waybook ls`, serve's front page) opens the store, reads, and closes it. Each server
connection it opens is a server process forked and authenticated; on a loaded machine that is CPU taken
from the very queries the command waits for. A command that uses one connection at a time opens one:
the pool starts empty and grows only when every connection it has is in use (it used to start one
connection in the background and, the store's first read finding it not yet made, a second), and an
open learns the schema's version in one statement (it took four round trips).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg

from waybook.stores import open_journals
from waybook.stores.postgres import PostgresStore
from waybook.stores.postgres._schema import LATEST, installed_version


def managed(store: PostgresStore) -> int:
    """Connections the store's pool holds: in it, lent out, or being made."""
    return int(store.postgres_engine._pool.get_stats()["pool_size"])


def test_a_store_read_one_statement_at_a_time_opens_one_server_connection(pg_url: str) -> None:
    with PostgresStore(pg_url) as store:
        for n in range(3):
            store.create(f"s{n}").close()
    with PostgresStore(pg_url) as store:
        listed = [entry.journal_id for entry in store.list()]
        for _, journal in open_journals(store, listed):
            assert not isinstance(journal, Exception)
            journal.close()
        store.open("s1").close()
        assert managed(store) == 1


def test_readers_at_once_still_get_connections_of_their_own(pg_url: str) -> None:
    with PostgresStore(pg_url, pool_size=3) as store:
        store.create("s").close()
        inside = threading.Barrier(3, timeout=60)  # a bound only: reached when the test fails
        failures: list[BaseException] = []

        def read() -> None:
            try:
                with store.postgres_engine.connection("hold a connection"):
                    inside.wait()  # all three hold a connection at once
                store.open("s").close()
            except BaseException as exc:  # reported by the test
                failures.append(exc)

        readers = [threading.Thread(target=read) for _ in range(3)]
        for reader in readers:
            reader.start()
        for reader in readers:
            reader.join()
        assert failures == []
        assert managed(store) == 3


def statements_sent(conn: psycopg.Connection[Any], action: Callable[[], object], tmp_path: Path) -> list[str]:
    """The statements `conn` sent to the server while `action` ran (libpq's protocol trace)."""
    trace = tmp_path / "trace.txt"
    with trace.open("w") as sink:
        conn.pgconn.trace(sink.fileno())
        try:
            action()
        finally:
            conn.pgconn.untrace()
    sent = [line.split("\t") for line in trace.read_text().splitlines()]
    return [
        fields[-1]
        for fields in sent
        if len(fields) > 2 and fields[1] == "F" and fields[3] in {"Query", "Parse"}
    ]


def test_an_open_learns_the_schema_version_in_one_statement(pg_url: str, tmp_path: Path) -> None:
    PostgresStore(pg_url).close()  # migrated
    with psycopg.connect(pg_url, autocommit=True) as conn:
        found: list[int | None] = []
        sent = statements_sent(conn, lambda: found.append(installed_version(conn)), tmp_path)
    assert found == [LATEST]
    assert len(sent) == 1, sent


def test_a_schema_without_a_store_has_no_version_and_a_transaction_around_the_look_goes_on(
    pg_url: str,
) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert installed_version(conn) is None
        with conn.transaction():
            assert installed_version(conn) is None
            assert conn.execute("SELECT 1").fetchone() == (1,)  # the failed look ended with its savepoint
    with psycopg.connect(pg_url) as conn:  # not autocommit: the look runs in a transaction of its own
        assert installed_version(conn) is None
        assert conn.execute("SELECT 1").fetchone() == (1,)
