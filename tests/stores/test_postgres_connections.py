"""Issue 50: what a command costs the PostgreSQL server beyond its statements.

A command (`waybook ls`, serve's front page) opens the store, reads, and closes it. Each server
connection it opens is a server process forked and authenticated; on a loaded machine that is CPU taken
from the very queries the command waits for. A command that uses one connection at a time opens one:
the pool starts empty and grows only when every connection it has is in use (it used to start one
connection in the background and, the store's first read finding it not yet made, a second).
"""

from __future__ import annotations

import threading

from waybook.stores import open_journals
from waybook.stores.postgres import PostgresStore


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
        inside = threading.Barrier(3, timeout=10)
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
