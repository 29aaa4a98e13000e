"""Issue 28: the PostgreSQL store behind a real PgBouncer in transaction mode (started by the tests, like
the server). Appends (both paths), turns, creates, reads, the feed and its waiting all work through it:
each transaction may land on any server connection, so the store uses no prepared statements, no
session settings it relies on, and no LISTEN (waiting polls the feed head).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator

import psycopg
import pytest

from tests.helpers.pg_fixtures import pg_bouncer  # noqa: F401  (the fixture)
from tests.helpers.pg_server import Bouncer, Server
from tests.stores.test_postgres_store import turn
from waybook import Session, StaleWriterError
from waybook.journal import verify
from waybook.stores import open_store


@pytest.fixture
def bounced(pg_server: Server, pg_bouncer: Bouncer) -> Iterator[tuple[str, str]]:  # noqa: F811
    """(URL through PgBouncer, direct URL) of a fresh store in a database of its own: PgBouncer does not
    pass libpq's `options`, so the store lives in that database's public schema."""
    database = f"waybook_bouncer_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server.url, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {database}".encode())
    direct = pg_server.url.rsplit("/", 1)[0] + f"/{database}"
    try:
        yield pg_bouncer.url(database) + "?pool_size=4&retry_for=5", direct
    finally:
        with psycopg.connect(pg_server.url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)".encode())


def test_the_tests_pgbouncer_really_is_in_transaction_mode(bounced: tuple[str, str]) -> None:
    url = bounced[0].partition("?")[0]
    admin_url = url.rsplit("/", 1)[0] + "/pgbouncer"
    with psycopg.connect(admin_url, autocommit=True, prepare_threshold=None) as admin:
        config = {row[0]: row[1] for row in admin.execute("SHOW CONFIG").fetchall()}
    assert config["pool_mode"] == "transaction"


def test_appends_turns_creates_reads_and_the_feed_work_through_pgbouncer(bounced: tuple[str, str]) -> None:
    url, direct = bounced
    with open_store(url) as store:
        sessions = [Session(store.create(f"s{n}", metadata={"n": n})) for n in range(6)]

        def talk(session: Session) -> None:
            for k in range(15):
                session.user(f"question {k}")
                session.turn(f"answer {k}", stop_reason="end_turn")

        threads = [threading.Thread(target=talk, args=(s,)) for s in sessions]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=120)
        assert not any(t.is_alive() for t in threads)

        journal = store.open("s0")  # the locked path: this object is behind
        behind = journal.head()
        sessions[0].user("moved on")
        with pytest.raises(StaleWriterError):
            journal.append(turn("late", sessions[0].leaf), expected=behind)
        journal.append(turn("current", sessions[0].leaf), expected=journal.head())

        assert all(verify(store.open(f"s{n}")).ok for n in range(6))
        assert [i.journal_id for i in store.list(metadata={"n": 3}).journals] == ["s3"]
        fed = list(store.feed())
        assert [e.position for e in fed] == list(range(1, len(fed) + 1))
        assert store.feed_head() == len(fed)
    with open_store(direct) as store:  # the same store, seen directly
        assert [e.position for e in store.feed()] == [e.position for e in fed]


def test_a_waiting_reader_behind_pgbouncer_wakes_on_another_stores_commit(bounced: tuple[str, str]) -> None:
    url, direct = bounced
    with open_store(url) as reader, open_store(direct) as writer:
        journal = writer.create("s1")
        position = reader.feed_head()
        woke: list[bool] = []
        waiting = threading.Thread(target=lambda: woke.append(reader.wait(position, timeout=60)))
        waiting.start()
        Session(journal).user("wake up")
        waiting.join(timeout=90)
        assert woke == [True]
        assert [e.journal_id for e in reader.feed(position)] == ["s1"]
