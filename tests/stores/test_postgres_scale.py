"""Issue 28: the PostgreSQL store at scale. Writers of different journals share no lock; an append or
a whole turn is one round trip and a create at most two; opening or listing one journal among 100,000
costs what it costs among ten; a database at the previous schema version migrates and keeps its feed.

Round trips are counted, not timed: every statement batch the engine sends (one `_send`, a pipeline
or a single statement) is one round trip.
"""

from __future__ import annotations

import functools
import threading
import urllib.parse

import msgspec
import psycopg
import pytest

from tests.helpers.builders import AT
from tests.helpers.tcp_cutter import Cutter
from tests.stores.test_postgres_store import connect, cutter, through, turn  # noqa: F401  (cutter: a fixture)
from waybook import Session
from waybook.codecs._wire import seal
from waybook.journal import Plan, erase, verify
from waybook.model import NewRecord, UserMessage, text
from waybook.model._head import GENESIS_DIGEST
from waybook.stores import open_store
from waybook.stores._base import first_line
from waybook.stores._engine import JournalRow
from waybook.stores.postgres import PostgresStore
from waybook.stores.postgres import _engine as engine
from waybook.stores.postgres import _schema as schema
from waybook.stores.postgres._connection import Statement
from waybook.stores.postgres._engine import PostgresEngine
from waybook.stores.postgres._transaction import PostgresTransaction


class RoundTrips:
    """Counts the engine's round trips to the server, and keeps the statements sent."""

    def __init__(self) -> None:
        self.count = 0
        self.statements: list[tuple[str, object]] = []

    def __enter__(self) -> RoundTrips:
        self.count = 0
        self.statements.clear()
        return self

    def __exit__(self, *exc: object) -> None:
        pass


@pytest.fixture
def trips(monkeypatch: pytest.MonkeyPatch) -> RoundTrips:
    counter = RoundTrips()
    send = PostgresTransaction._send

    def counting(self: PostgresTransaction, statements: list[Statement], **kw: bool) -> object:
        counter.count += 1
        counter.statements.extend(statements)
        return send(self, statements, **kw)

    monkeypatch.setattr(PostgresTransaction, "_send", counting)
    return counter


def with_options(url: str, *settings: str) -> str:
    """`url` with more `-c name=value` settings in its libpq `options`."""
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query)
    options = " ".join([v for k, v in query if k == "options"] + [f"-c {s}" for s in settings])
    query = [(k, v) for k, v in query if k != "options"] + [("options", options)]
    return urllib.parse.urlunsplit(
        parts._replace(query=urllib.parse.urlencode(query, quote_via=urllib.parse.quote))
    )


def test_an_append_and_a_whole_turn_are_one_round_trip_each(pg_url: str, trips: RoundTrips) -> None:
    with open_store(pg_url) as store:
        session = Session(store.create("s1"))
        with trips:
            session.user("one record")
        assert trips.count == 1
        with trips:
            session.turn("a reply", stop_reason="end_turn")
        assert trips.count == 1
        journal = store.open("s1")
        head = journal.head()
        with trips:
            journal.append(turn("two", session.leaf), expected=head)
        assert trips.count == 1


def test_a_create_is_one_round_trip_and_two_after_another_process_created(
    pg_url: str, trips: RoundTrips
) -> None:
    with open_store(pg_url) as store, open_store(pg_url) as other:
        store.create("first")  # this store object takes in the catalog once
        with trips:
            journal = store.create("second", metadata={"customer": "acme"})
        assert trips.count == 1
        assert journal.head().seq == 1
        other.create("elsewhere")  # the catalog moved behind `store`'s back
        with trips:
            store.create("third")
        assert trips.count == 2
        with trips:
            store.create("fourth", header=False)
        assert trips.count == 1
        assert [i.journal_id for i in store.list().journals] == [
            "first",
            "second",
            "elsewhere",
            "third",
            "fourth",
        ]


def test_a_second_create_of_one_id_is_refused_with_nothing_written(pg_url: str) -> None:
    from waybook.stores import JournalExistsError

    with open_store(pg_url) as store, open_store(pg_url) as other:
        store.create("s1")
        head = store.feed_head()
        with pytest.raises(JournalExistsError):
            other.create("s1")
        with pytest.raises(JournalExistsError):
            store.create("s1")
        assert store.feed_head() == head


def test_a_creator_that_waits_on_a_racing_create_of_the_same_id_is_refused_with_nothing_written(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Store a's create of "x" is held in flight (its statement ran in a transaction not yet committed);
    store b's create of "x" (its statement's snapshot cannot see a's) waits on the catalog row. Once
    a commits, b's statement finds the catalog moved and writes nothing; b catches up, sees "x" taken
    and raises JournalExistsError. One `created` entry for "x", and x's header is a's."""
    from waybook.stores import JournalExistsError

    held = connect(pg_url)
    held.execute("BEGIN")
    headers: list[bytes | None] = []

    def in_flight(
        self: PostgresEngine, catalog: Plan, journal_id: str, row: JournalRow, header: bytes | None
    ) -> tuple[str, list[bytes]]:
        headers.append(header)
        rows = held.execute(
            engine._CREATE.encode(),
            {
                "journal": journal_id,
                "catalog_seq": catalog.result.prior.seq,
                "catalog_digest": catalog.result.prior.digest,
                "entry": catalog.lines[0],
                "role": row.role,
                "metadata": "{}",
                "created_at": row.created_at,
                "header": header,
            },
        ).fetchall()
        return str(rows[0][0]), []

    with open_store(pg_url) as a, open_store(pg_url) as b:
        a.create("first")
        b.create("second")  # both now know the catalog's head
        a.create("third")
        b.list()
        with monkeypatch.context() as patch:
            patch.setattr(PostgresEngine, "create_now", in_flight)
            a.create("x")
        outcome: list[object] = []

        def race() -> None:
            try:
                outcome.append(b.create("x"))
            except Exception as exc:  # the answer the test checks
                outcome.append(exc)

        racer = threading.Thread(target=race)
        racer.start()
        with connect(pg_url) as watch:  # await b's statement waiting on the catalog row a holds
            while not watch.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE %s",
                ("%waybook_create%",),
            ).fetchone()[0]:  # type: ignore[index]
                watch.execute("SELECT pg_sleep(0.01)")
        held.execute("COMMIT")
        racer.join(timeout=30)
        (refused,) = outcome
        assert isinstance(refused, JournalExistsError), refused
        created = [e for e in a.feed() if e.journal_id == "_catalog"]
        assert list(b.open("x").read_lines()) == headers
        assert verify(b.open("x")).ok
        assert sum(b'"journal":"x"' in e.line for e in created) == 1, [e.line for e in created]
    held.close()


def test_writers_of_different_journals_take_no_common_lock(pg_url: str) -> None:
    """An append to journal a is held in flight (begun, not committed). Appends and creates of other
    journals, and feed reads, go on meanwhile under lock_timeout=2s: any wait on a lock would fail
    them. The held record then commits and the feed has it after everything that committed before."""
    url = with_options(pg_url, "lock_timeout=2s")
    with open_store(url) as store:
        a = store.create("a")
        b = Session(store.create("b"))
        body = UserMessage(parent=None, content=text("held"))
        held = NewRecord(id="held", at="2026-12-01T12:00:00.000Z", body=body)
        head = a.head()
        sealed, raw = seal(2, held, head.digest)
        with psycopg.connect(pg_url) as conn:  # a transaction of its own, left open
            conn.execute(
                "SELECT waybook_append(%s, %s, %s, %s, %s)", ("a", 1, head.digest, [sealed.digest], [raw])
            )
            before = store.feed_head()
            b.user("while a's append is in flight")
            store.create("c")
            fed = [(e.journal_id, e.seq) for e in store.feed(before)]
            assert ("a", 2) not in fed
            assert fed[0] == ("b", 2)
            conn.commit()
        assert [(e.journal_id, e.seq) for e in store.feed(store.feed_head() - 1)] == [("a", 2)]


def test_open_and_list_of_one_journal_among_100000_cost_the_same_as_among_ten(
    pg_url: str, trips: RoundTrips
) -> None:
    def costs(store: PostgresStore) -> tuple[int, int, list[str]]:
        """Round trips of an open, of a list of one, and the statements they sent."""
        with trips:
            journal = store.open("needle")
            assert journal.head().seq == 1
        opened = trips.count
        with trips:
            page = store.list(limit=1)
        listed = trips.count
        statements = [q for q, _ in trips.statements]
        assert len(page.journals) == 1
        return opened, listed, statements

    with open_store(pg_url) as store:
        store.create("needle")
        few = costs(store)
        line = first_line("x", "session", {}, record_id="r", at="2026-12-01T12:00:00.000Z")
        with connect(pg_url) as conn:  # 100,000 more journals with their headers, in bulk
            conn.execute(
                "INSERT INTO waybook_journals"
                " (journal_id, role, metadata, created, created_at, head_seq, head_digest)"
                " SELECT 'j' || i, 'session', '{}', 1000 + i, '2026-12-01T12:00:00.000Z', 1, %s"
                " FROM generate_series(1, 100000) AS i",
                (GENESIS_DIGEST,),
            )
            conn.execute(
                "INSERT INTO waybook_records (journal_id, seq, line, position)"
                " SELECT 'j' || i, 1, %s, 1000 + i FROM generate_series(1, 100000) AS i",
                (line,),
            )
            conn.execute("ANALYZE waybook_journals")
            conn.execute("ANALYZE waybook_records")
        many = costs(store)
        with connect(pg_url) as conn:  # and each of those statements finds its rows through an index
            plans = [
                " ".join(row[0] for row in conn.execute(f"EXPLAIN {query}".encode(), params).fetchall())
                for query, params in trips.statements
                if query.startswith("SELECT")
            ]
    assert few[:2] == many[:2], "the same round trips among 100,000 journals as among ten"
    assert few[2] == many[2], "the same statements"
    assert plans
    assert all("Seq Scan" not in plan for plan in plans), plans


def test_a_store_at_schema_version_2_migrates_and_keeps_its_feed_positions(pg_url: str) -> None:
    with connect(pg_url) as conn:  # a store as the previous waybook left it: positions from the feed clock
        schema.migrate(conn, migrations=schema.MIGRATIONS[:2])
        line = first_line("old", "session", {}, record_id="h", at="2026-12-01T12:00:00.000Z")
        conn.execute(
            "INSERT INTO waybook_journals (journal_id, role, metadata, created, created_at)"
            " VALUES ('old', 'session', '{}', 1, '2026-12-01T12:00:00.000Z')"
        )
        records = [(line, _digest(line))]
        prev = records[0][1]
        for n in range(2, 6):
            body = UserMessage(parent=None if n == 2 else f"u{n - 1}", content=text(str(n)))
            record, raw = seal(n, NewRecord(id=f"u{n}", at="2026-12-01T12:00:00.000Z", body=body), prev)
            records.append((raw, record.digest))
            prev = record.digest
        assert conn.execute(
            "SELECT waybook_append('old', 0, %s, %s, %s)",
            (GENESIS_DIGEST, [d for _, d in records], [r for r, _ in records]),
        ).fetchone() == (True,)
        old = conn.execute("SELECT position, seq FROM waybook_records ORDER BY position").fetchall()
    assert old == [(1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]

    with open_store(pg_url) as store:
        assert [(e.position, e.journal_id, e.seq) for e in store.feed(limit=5)] == [
            (p, "old", s) for p, s in old
        ]
        journal = store.open("old")
        Session(journal).user("after the migration")
        fed = [(e.position, e.journal_id, e.seq) for e in store.feed(after=5)]
    assert fed == [(6, "_catalog", 1), (7, "old", 6)], "an old cursor (5) still reads on from where it was"
    with connect(pg_url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM waybook_schema ORDER BY version")]
    assert versions == [v.version for v in schema.MIGRATIONS]


def _schema_3_append_statement(n: int) -> str:
    """The compare-and-append statement waybook sent at schema version 3 (before issue 50's last round):
    each record's digest in its own column beside the line that ends with it."""
    moved = (
        "WITH waybook_append AS (UPDATE waybook_journals SET head_seq = %s, head_digest = %s"
        " WHERE journal_id = %s AND head_seq = %s AND head_digest = %s AND purged IS NULL"
        f" RETURNING journal_id, head_seq - {n} AS prior, set_config('synchronous_commit', 'on', true))"
        " INSERT INTO waybook_records (journal_id, seq, digest, line, xact)"
    )
    xact = "pg_current_xact_id()::text::bigint"
    if n == 1:
        return f"{moved} SELECT m.journal_id, m.prior + 1, %s, %s, {xact} FROM waybook_append AS m"
    rows = ", ".join(f"({i}, %s, %s::bytea)" for i in range(1, n + 1))
    return (
        f"{moved} SELECT m.journal_id, m.prior + r.i, r.digest, r.line, {xact}"
        f" FROM waybook_append AS m, (VALUES {rows}) AS r(i, digest, line)"
    )


def _schema_3_append_now(self: PostgresEngine, journal_id: str, plan: Plan) -> bool:
    """`PostgresEngine.append_now` as it was at schema version 3 (scalar batches with their digests)."""
    prior, records = plan.result.prior, plan.result.records
    if len(records) > engine.SCALAR_BATCH:
        with self.transaction(write=False) as tx:
            rows = tx.statement(
                "SELECT waybook_append(%s, %s, %s, %s, %s)",
                (journal_id, prior.seq, prior.digest, [r.digest for r in records], list(plan.lines)),
            )
        return bool(rows[0][0])
    params: list[object] = [prior.seq + len(records), records[-1].digest, journal_id, prior.seq, prior.digest]
    for record, line in zip(records, plan.lines, strict=True):
        params += (record.digest, line)
    return self._changed_now(_schema_3_append_statement(len(records)), params) == len(records)


def _schema_3_create_now(
    self: PostgresEngine, catalog: Plan, journal_id: str, row: JournalRow, header: bytes | None
) -> tuple[str, list[bytes]]:
    """`PostgresEngine.create_now` as it was at schema version 3 (the function, with digests)."""
    prior = catalog.result.prior
    with self.transaction(write=False) as tx:
        rows = tx.statement(
            "SELECT outcome, line FROM waybook_create(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
            (
                prior.seq,
                prior.digest,
                catalog.result.records[0].digest,
                catalog.lines[0],
                journal_id,
                row.role,
                msgspec.json.encode(row.metadata, order="sorted").decode(),
                row.created_at,
                None if header is None else _digest(header),
                header,
            ),
        )
    return str(rows[0][0]), [bytes(r[1]) for r in rows[1:]]


def test_a_store_written_at_schema_version_3_migrates_to_records_without_a_digest_column(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Schema 4 drops `waybook_records.digest` (each line ends with its digest). A store written by the
    schema-3 code (its migrations, functions and append statement) opens, proves, reads its feed in the
    same order, takes appends on both paths and erases, and its column is gone."""
    with monkeypatch.context() as old:  # the waybook of schema version 3
        old.setattr(engine, "migrate", functools.partial(schema.migrate, migrations=schema.MIGRATIONS[:3]))
        old.setattr(PostgresEngine, "append_now", _schema_3_append_now)
        old.setattr(PostgresEngine, "create_now", _schema_3_create_now)
        with open_store(pg_url) as store:
            first = store.create("first")
            first.append(turn("t", None), expected=first.head())  # a batch of 2: one scalar statement
            stale = store.open("first")  # its head is about to be old: the locked path (waybook_insert)
            first.append(turn("u", "t-a"), expected=first.head())
            stale.append(turn("v", "u-a"), expected=first.head())
            Session(store.open("first")).user("one record")  # one record: one scalar statement
            big = Session(store.create("big"))
            big.journal.append(  # more than SCALAR_BATCH records: the waybook_append function
                expected=big.journal.head(),
                records=[
                    NewRecord(
                        id=f"m{i}",
                        at=AT,
                        body=UserMessage(parent=f"m{i - 1}" if i else None, content=text(str(i))),
                    )
                    for i in range(40)
                ],
            )
            erase(store.open("first"), 2, reason="before the migration")
            before = {name: [(r.seq, r.digest) for r in store.open(name).read()] for name in ("first", "big")}
            feed = [(e.position, e.journal_id, e.seq) for e in store.feed(limit=1000)]
        with connect(pg_url) as conn:
            assert conn.execute("SELECT max(version) FROM waybook_schema").fetchone() == (3,)
            assert conn.execute("SELECT count(*) FROM waybook_records WHERE digest IS NULL").fetchone() == (
                0,
            )

    with open_store(pg_url) as store:  # today's waybook migrates it
        assert [(e.position, e.journal_id, e.seq) for e in store.feed(limit=1000)] == feed
        for name, records in before.items():
            journal = store.open(name)
            assert verify(journal).ok, name
            assert [(r.seq, r.digest) for r in journal.read()] == records
        first = Session(store.open("first"))
        first.user("after the migration")  # the one-statement path
        big_journal = store.open("big")
        big_journal.append(
            expected=big_journal.head(),
            records=[
                NewRecord(
                    id=f"n{i}",
                    at=AT,
                    body=UserMessage(parent=f"n{i - 1}" if i else "m39", content=text(str(i))),
                )
                for i in range(40)
            ],
        )
        erase(store.open("first"), 3, reason="after the migration")  # rewrites lines written at schema 3
        assert verify(store.open("first")).ok
        assert verify(store.open("big")).ok
        assert [(e.journal_id, e.seq) for e in store.feed(after=feed[-1][0])] == [
            ("first", len(before["first"]) + 1),
            *(("big", 42 + i) for i in range(40)),
            ("first", len(before["first"]) + 2),
        ]
    with connect(pg_url) as conn:
        versions = [v for (v,) in conn.execute("SELECT version FROM waybook_schema ORDER BY version")]
        columns = [
            c
            for (c,) in conn.execute(
                "SELECT column_name FROM information_schema.columns"
                " WHERE table_schema = current_schema() AND table_name = 'waybook_records'"
            )
        ]
    assert versions == [1, 2, 3, 4]
    assert "digest" not in columns


def _digest(line: bytes) -> str:
    from waybook.codecs._wire import line_digest

    digest = line_digest(line)
    assert digest is not None
    return digest


def test_a_feed_reader_never_sees_a_position_before_it_is_durable_or_a_head_without_its_records(
    pg_url: str,
) -> None:
    """Positions are handed out by the reader that first looks (the sequencer), and committed before it
    returns them: a second store sees the same head and the same records at the same positions."""
    with open_store(pg_url) as writer, open_store(pg_url) as reader, open_store(pg_url) as other:
        for n in range(3):
            Session(writer.create(f"s{n}")).user("hello")
        head = reader.feed_head()
        assert other.feed_head() == head
        assert [e.position for e in other.feed()] == list(range(1, head + 1))
        assert [(e.position, e.journal_id) for e in reader.feed()] == [
            (e.position, e.journal_id) for e in other.feed()
        ]


def test_a_lost_reply_to_the_one_statement_create_is_recognised_inside_the_store(
    pg_url: str,
    cutter: Cutter,  # noqa: F811
) -> None:
    """The connection is cut right after `waybook_create` reaches the server: it commits, the reply is
    lost, the engine sends it again, and the second reply (the catalog moved, by this very create) is
    recognised: the caller gets its journal, created once."""
    url = through(pg_url, cutter.port, retry_for="5")
    with open_store(url) as store:
        store.create("first")
        cutter.arm_on(b"waybook_create")
        journal = store.create("second")
        assert not cutter.disarm()
        assert journal.head().seq == 1
    with open_store(pg_url) as store:
        assert [i.journal_id for i in store.list().journals] == ["first", "second"]
        created = [e for e in store.feed() if e.journal_id == "_catalog" and e.seq > 1]
        assert len(created) == 2


def test_writers_nobody_tails_pay_nothing_for_the_feed(pg_url: str, trips: RoundTrips) -> None:
    """An append sends one statement, which neither notifies nor numbers: its records wait without a
    position until a reader looks, and the first look numbers them all at once."""
    with open_store(pg_url) as store:
        session = Session(store.create("s1"))
        head = store.feed_head()
        with trips:
            for n in range(5):
                session.user(f"message {n}")
        assert trips.count == 5
        assert all(q.startswith("WITH waybook_append AS (UPDATE") for q, _ in trips.statements)
        with connect(pg_url) as conn:
            waiting = conn.execute("SELECT count(*) FROM waybook_records WHERE position IS NULL").fetchone()
            notifying = conn.execute(
                "SELECT count(*) FROM pg_proc WHERE proname IN ('waybook_append', 'waybook_insert')"
                " AND pronamespace = current_schema()::regnamespace AND prosrc LIKE '%%pg_notify%%'"
            ).fetchone()
        assert waiting == (5,)
        assert notifying == (0,)
        assert [e.seq for e in store.feed(head)] == [2, 3, 4, 5, 6]
