"""Issue 50: the one-statement append, prepared on the server only where that is safe.

A connection prepares its statements on the server only when it talks to its server process itself
(the TCP connection the server sees is its own socket); through any proxy or pooler (the tests' TCP
cutter here, PgBouncer in tests/stores/test_postgres_pgbouncer.py) nothing is prepared, since the next
transaction may run on another server session. The append statement keeps its guarantees: a stale
writer writes nothing, and a transaction that moves a head commits synchronously whatever the session
says.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator

import psycopg
import pytest

from tests.helpers.tcp_cutter import Cutter
from waybook import Session, StaleWriterError
from waybook.codecs._wire import seal
from waybook.journal import verify
from waybook.model import NewRecord, UserMessage, text
from waybook.stores.postgres import PostgresStore
from waybook.stores.postgres._connection import PREPARE_AFTER
from waybook.stores.postgres._engine import _append_statement

AT = "2026-12-01T12:00:00.000Z"


@pytest.fixture
def proxy(pg_url: str) -> Iterator[str]:
    """The store's URL through a TCP proxy (the tests' cutter, never armed)."""
    parts = urllib.parse.urlsplit(pg_url)
    cutter = Cutter(parts.hostname or "127.0.0.1", parts.port or 5432)
    netloc = f"{parts.username or ''}{':' + parts.password if parts.password else ''}@127.0.0.1:{cutter.port}"
    yield urllib.parse.urlunsplit(parts._replace(netloc=netloc))
    cutter.close()


def prepared_appends(store: PostgresStore) -> tuple[object, list[str]]:
    """The prepare threshold of the store's one pooled connection, and the statements prepared on its
    server session that append."""
    with store.postgres_engine.connection("look") as conn:
        threshold = conn.prepare_threshold
        rows = conn.execute("SELECT statement FROM pg_prepared_statements").fetchall()
    return threshold, [str(r[0]) for r in rows if "waybook_append" in str(r[0])]


def test_a_direct_connection_prepares_the_append_once_and_runs_it_prepared(pg_url: str) -> None:
    with PostgresStore(pg_url, pool_size=1) as store:
        session = Session(store.create("s1"))
        for n in range(4):
            session.user(f"message {n}")
        threshold, appends = prepared_appends(store)
        assert threshold == PREPARE_AFTER
        assert len(appends) == 1
        assert verify(store.open("s1")).ok


def test_a_connection_through_a_proxy_prepares_nothing(proxy: str) -> None:
    with PostgresStore(proxy, pool_size=1) as store:
        session = Session(store.create("s1"))
        for n in range(4):
            session.user(f"message {n}")
        threshold, appends = prepared_appends(store)
        assert threshold is None
        assert appends == []
        assert verify(store.open("s1")).ok


def test_a_prepared_append_of_a_stale_writer_writes_nothing(pg_url: str) -> None:
    with PostgresStore(pg_url, pool_size=1) as store:
        session = Session(store.create("s1"))
        session.user("warm")
        session.user("up")  # the append statement is prepared from here on
        behind = store.open("s1")
        stale = behind.head()
        session.user("moved on")
        body = UserMessage(parent=None, content=text("late"))
        with pytest.raises(StaleWriterError):
            behind.append([NewRecord(id="late", at=AT, body=body)], expected=stale)
        assert [r.id for r in store.open("s1").read()][-1] != "late"
        assert store.open("s1").head().seq == 4


@pytest.mark.parametrize("size", [1, 3])
def test_the_append_statement_commits_synchronously_whatever_the_session_says(pg_url: str, size: int) -> None:
    with PostgresStore(pg_url) as store:
        journal = store.create("s1")
        head = journal.head()
    prior, records = head, []
    for n in range(size):
        body = UserMessage(parent=f"m{n - 1}" if n else None, content=text(f"m{n}"))
        sealed, line = seal(prior.seq + 1, NewRecord(id=f"m{n}", at=AT, body=body), prior.digest)
        records.append((sealed.digest, line))
        prior = type(head)(prior.seq + 1, sealed.digest)
    params: list[object] = [prior.seq, prior.digest, "s1", head.seq, head.digest]
    params += (line for _, line in records)
    with psycopg.connect(pg_url) as conn:  # a transaction, in a session that asks for no durability
        conn.execute("SET synchronous_commit = off")
        inserted = conn.execute(_append_statement(size).encode(), params).rowcount
        assert inserted == size
        assert conn.execute("SHOW synchronous_commit").fetchone() == ("on",)
        again = conn.execute(_append_statement(size).encode(), params).rowcount
        assert again == 0, "the head has moved: the same batch again writes nothing"
    with PostgresStore(pg_url) as store:
        assert store.open("s1").head() == prior
        assert verify(store.open("s1")).ok


def test_appends_run_on_the_cursor_the_pooled_connection_keeps(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cursor made per statement set up its adapters and dumpers anew for every append (a quarter of
    its client CPU): once warm, appends make no cursor, and what they wrote reads back proved."""
    made: list[object] = []
    cursor = psycopg.Connection.cursor

    def counting(self: psycopg.Connection[tuple[object, ...]], *args: object, **kwargs: object) -> object:
        made.append(self)
        return cursor(self, *args, **kwargs)  # type: ignore[call-overload]

    with PostgresStore(pg_url, pool_size=1) as store:
        session = Session(store.create("s1"))
        session.user("warm")
        monkeypatch.setattr(psycopg.Connection, "cursor", counting)
        for n in range(5):
            session.user(f"message {n}")
        monkeypatch.undo()
        assert made == []
        reopened = store.open("s1")
        assert reopened.head() == session.journal.head()
        assert [r.id for r in reopened.read()][-5:] == [r.id for r in session.journal.read()][-5:]
        assert verify(reopened).ok
