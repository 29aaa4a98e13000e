"""The PostgreSQL store's own promises: lost replies at every step, migrations, verbatim bytes,
feed wake-ups, typed errors. (The conformance and store suites run on it too.)"""

from __future__ import annotations

import asyncio
import threading
import urllib.parse
from collections.abc import Iterator

import psycopg
import pytest

from tests.helpers.builders import AT, header
from tests.helpers.tcp_cutter import Cutter
from waybook import AsyncSession, Session
from waybook.journal import SessionJournal, verify
from waybook.model import (
    AssistantMessage,
    BrokenChainError,
    Head,
    IntegrityError,
    NewRecord,
    UserMessage,
    text,
)
from waybook.stores import open_async_store, open_store
from waybook.stores.postgres import (
    SCHEMA_VERSION,
    ConnectionLostError,
    PostgresStore,
    SchemaTooNewError,
)
from waybook.stores.postgres import _aio as aio
from waybook.stores.postgres import _feed as feed
from waybook.stores.postgres._aio import AsyncPostgresStore


def connect(url: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(url.partition("&retry_for")[0], autocommit=True)


def through(url: str, port: int, **options: str) -> str:
    """`url` pointed at 127.0.0.1:`port` (the cutter), with extra store options."""
    parts = urllib.parse.urlsplit(url)
    netloc = f"{parts.username or ''}{':' + parts.password if parts.password else ''}@127.0.0.1:{port}"
    query = "&".join([parts.query, *(f"{k}={v}" for k, v in options.items())]).strip("&")
    return urllib.parse.urlunsplit(parts._replace(netloc=netloc, query=query))


@pytest.fixture
def cutter(pg_url: str) -> Iterator[Cutter]:
    parts = urllib.parse.urlsplit(pg_url)
    proxy = Cutter(parts.hostname or "127.0.0.1", parts.port or 5432)
    yield proxy
    proxy.close()


def turn(key: str, parent: str | None) -> list[NewRecord]:
    question = NewRecord(id=f"{key}-q", at=AT, body=UserMessage(parent=parent, content=text(key)))
    reply = AssistantMessage(parent=question.id, content=text("answer"), stop_reason="end_turn")
    return [question, NewRecord(id=f"{key}-a", at=AT, body=reply)]


def stored(url: str, journal_id: str) -> list[tuple[int, str]]:
    with open_store(url) as store:
        return [(r.seq, r.id) for r in store.open(journal_id).read()]


def started(store: PostgresStore, journal_id: str, *, behind: bool) -> tuple[SessionJournal, Head]:
    """A journal with a header and one turn. `behind`: another writer appended last, so this object's
    own idea of the head is stale and its next append takes the locked path."""
    journal = store.create(journal_id, header=False)
    head = journal.append([header(journal=journal_id)], expected=Head(0, "0" * 64)).head
    head = journal.append(turn("first", None), expected=head).head
    if behind:
        other = store.open(journal_id)
        head = other.append(turn("other", "first-a"), expected=head).head
    return journal, head


PATHS = ["known_head", "locked"]


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("forward", [False, True], ids=["cut_before_forwarding", "cut_after_forwarding"])
def test_a_connection_cut_at_any_step_of_an_append_commits_the_batch_exactly_once(
    pg_url: str, cutter: Cutter, path: str, forward: bool
) -> None:
    url = through(pg_url, cutter.port, retry_for="10")
    steps = 0
    with open_store(url) as store:
        assert isinstance(store, PostgresStore)
        for step in range(1, 40):
            journal_id = f"j{step}"
            journal, head = started(store, journal_id, behind=path == "locked")
            parent = "other-a" if path == "locked" else "first-a"
            batch = turn("retried", parent)
            cutter.arm(step, cut_after_forwarding=forward)
            result = journal.append(batch, expected=head)
            if cutter.disarm():
                break  # the append needed fewer steps than this: every step has been cut
            steps += 1
            committed = stored(pg_url, journal_id)
            assert [i for _, i in committed].count("retried-q") == 1
            assert [(r.seq, r.id) for r in result.records] == committed[-2:]
            assert result.prior == head
    assert steps >= 2, "the cuts landed inside the append"


def test_a_caller_resending_after_a_lost_commit_reply_gets_the_original_result(
    pg_url: str, cutter: Cutter
) -> None:
    """No retries in the store (retry_for=0). The journal object is behind, so it takes the locked
    path; the connection is cut right after COMMIT reaches the server: the batch is committed, the
    caller hears ConnectionLostError, resends, and gets the original result; nothing is written twice."""
    url = through(pg_url, cutter.port, retry_for="0")
    with open_store(url) as store:
        journal, head = started(store, "j1", behind=True)
        batch = turn("resent", "other-a")
        cutter.arm_on(b"COMMIT")
        with pytest.raises(ConnectionLostError, match="resend the same batch"):
            journal.append(batch, expected=head)
        assert not cutter.disarm()
        assert "resent-q" in [i for _, i in stored(pg_url, "j1")], "the cut came after the commit"
        again = journal.append(batch, expected=head)
        committed = stored(pg_url, "j1")
        assert [i for _, i in committed].count("resent-q") == 1
        assert [(r.seq, r.id) for r in again.records] == committed[-2:]
        assert again.prior == head


def test_a_lost_reply_to_the_one_statement_append_is_recognised_inside_the_store(
    pg_url: str, cutter: Cutter
) -> None:
    url = through(pg_url, cutter.port, retry_for="0")
    with open_store(url) as store:
        journal, head = started(store, "j1", behind=False)
        batch = turn("once", "first-a")
        cutter.arm_on(b"waybook_append")
        result = journal.append(batch, expected=head)
        assert not cutter.disarm()
        committed = stored(pg_url, "j1")
        assert [i for _, i in committed].count("once-q") == 1
        assert [(r.seq, r.id) for r in result.records] == committed[-2:]


def test_migrations_are_versioned_and_running_them_again_changes_nothing(pg_url: str) -> None:
    for _ in range(3):
        with open_store(pg_url) as store:
            Session(store.create(f"s{store.feed_head()}")).user("hello")
    with connect(pg_url) as conn:
        versions = conn.execute("SELECT version FROM waybook_schema ORDER BY version").fetchall()
        functions = conn.execute(
            "SELECT count(*) FROM pg_proc WHERE proname LIKE 'waybook%%'"
            " AND pronamespace = current_schema()::regnamespace"
        ).fetchone()
    assert [v for (v,) in versions] == list(range(1, SCHEMA_VERSION + 1))
    # channel, insert, append, sequence, feed; blob_keep, blob_add (schema 4 dropped create)
    assert functions == (7,)


def test_a_schema_newer_than_this_code_is_refused_and_left_unchanged(pg_url: str) -> None:
    open_store(pg_url).close()
    with connect(pg_url) as conn:
        conn.execute(
            "INSERT INTO waybook_schema (version, summary) VALUES (%s, 'from the future')",
            (SCHEMA_VERSION + 1,),
        )
    with pytest.raises(SchemaTooNewError, match="Upgrade waybook"):
        open_store(pg_url)
    with connect(pg_url) as conn:
        assert conn.execute("SELECT max(version) FROM waybook_schema").fetchone() == (SCHEMA_VERSION + 1,)


def test_record_bytes_are_stored_verbatim_and_altered_bytes_are_refused(pg_url: str) -> None:
    with open_store(pg_url) as store:
        session = Session(store.create("s1"))
        session.user('{"keys": "in an order jsonb would change", "b": 1, "a": 2}')
        lines = list(store.open("s1").read_lines())
    with connect(pg_url) as conn:
        types = dict(
            conn.execute(
                "SELECT column_name, data_type FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = 'waybook_records'"
            ).fetchall()
        )
        rows = conn.execute(
            "SELECT line FROM waybook_records WHERE journal_id = 's1' ORDER BY seq"
        ).fetchall()
        assert types["line"] == "bytea"
        assert [bytes(line) for (line,) in rows] == lines
        conn.execute(
            "UPDATE waybook_records SET line = convert_to(replace(convert_from(line, 'UTF8'),"
            " 'in an order', 'in AN order'), 'UTF8')"
            " WHERE journal_id = 's1' AND seq = 2"
        )
    with open_store(pg_url) as store:
        with pytest.raises(BrokenChainError):
            store.open("s1")
        with pytest.raises(IntegrityError):
            list(store.feed())


def test_a_purge_deletes_the_rows_and_their_bytes(pg_url: str) -> None:
    with open_store(pg_url) as store:
        Session(store.create("s1")).user("my secret phrase is tangerine")
        store.purge("s1", reason="erasure")
    with connect(pg_url) as conn:
        assert conn.execute("SELECT count(*) FROM waybook_records WHERE journal_id = 's1'").fetchone() == (0,)
        found = conn.execute(
            "SELECT count(*) FROM waybook_records WHERE position(%s in line) > 0", (b"tangerine",)
        ).fetchone()
        assert found == (0,)


def test_a_waiting_reader_wakes_on_another_stores_commit_by_its_watcher(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the waiter's own fallback look far longer than the wait, only the store's feed watcher (it
    looks at the feed head every few milliseconds while anyone waits) can wake the reader in time."""
    monkeypatch.setattr(feed, "POLL_FALLBACK", 600.0)
    with open_store(pg_url) as reader, open_store(pg_url) as writer:
        journal = writer.create("s1")
        position = reader.feed_head()
        woke: list[bool] = []
        waiting = threading.Thread(target=lambda: woke.append(reader.wait(position, timeout=120)))
        waiting.start()
        Session(journal).user("wake up")
        waiting.join()
        assert woke == [True]
        assert reader.feed_head() > position


def test_an_unreachable_server_is_a_typed_error_without_the_password() -> None:
    with pytest.raises(ConnectionLostError) as caught:
        open_store("postgresql://someone:hunter2@127.0.0.1:1/db?retry_for=0")
    assert "hunter2" not in str(caught.value)
    assert "postgresql://someone@127.0.0.1:1/db" in str(caught.value)
    assert "Connection refused" in str(caught.value), "the server's own reason, not just a pool timeout"
    assert "resend" not in str(caught.value), "an open has no batch to resend"


def test_the_cli_reports_an_unreachable_server_in_one_line_without_the_pools_log() -> None:
    import subprocess

    run = subprocess.run(
        ["waybook", "ls", "--store", "postgresql://someone@127.0.0.1:1/db?retry_for=1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1, run.stderr
    assert "could not open the store: no connection to PostgreSQL" in run.stderr


def test_async_sessions_write_through_the_threaded_store(pg_url: str) -> None:
    async def write() -> list[str]:
        store = await open_async_store(pg_url)
        async with store:
            session = await AsyncSession.open(await store.create("s1"))
            await session.user("hello")
            await session.assistant("hi")
            return [r.kind async for r in (await store.open("s1")).read()]

    assert asyncio.run(write()) == ["waybook.header/1", "waybook.user/2", "waybook.assistant/1"]
    with open_store(pg_url) as store:
        assert verify(store.open("s1")).ok


def test_an_async_waiter_wakes_on_another_processs_commit_by_its_watcher(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(aio, "POLL_FALLBACK", 600.0)

    async def scenario() -> tuple[bool, bool]:
        store = await open_async_store(pg_url)
        assert isinstance(store, AsyncPostgresStore)
        async with store:
            await store.create("s1")
            position = await store.feed_head()
            waiter = asyncio.create_task(store.wait(position, timeout=120))
            idle = await store.wait(await store.feed_head(), timeout=0.01)
            with open_store(pg_url) as writer:  # another store object: its own pool and process state
                await asyncio.to_thread(lambda: Session(writer.open("s1")).user("wake up"))
                return await waiter, idle

    assert asyncio.run(scenario()) == (True, False)
