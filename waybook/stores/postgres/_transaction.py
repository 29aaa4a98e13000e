"""One PostgreSQL transaction: the SQL of `database.Transaction` (journal rows, heads, lines, inserts,
the catalog's listing, the feed) and how its statements travel.

Round trips: a write transaction sends `BEGIN` with its first statement, and its inserts with its
`COMMIT`, so the locked path of an append is two round trips (lock the journal row and read its head;
insert and commit). A read runs its statements on their own, outside any transaction. A first
statement that fails with its connection is sent again on a fresh one (see _connection.py).

Inserts carry no feed position: the feed's sequencer numbers committed records (see _engine.py).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol

import msgspec
import psycopg

from waybook.model import GENESIS, Head
from waybook.stores._engine import FeedRow, JournalRow
from waybook.stores._errors import JournalExistsError, JournalPurgedError
from waybook.stores.postgres._connection import Backoff, Connection, Params, Statement, transient
from waybook.stores.postgres._schema import LINE_DIGEST

_JOURNAL: Final = (
    "SELECT journal_id, role, metadata, created, created_at, hidden, purged, head_seq, head_digest"
    " FROM waybook_journals WHERE journal_id = %s"
)


_STORED_DIGEST: Final = LINE_DIGEST.format(line="r.line")


class TransactionHost(Protocol):
    """What a transaction needs of its engine (PostgresEngine): its URL for messages, how long to
    retry, how many pooled connections a restart may have broken, and a fresh connection."""

    @property
    def url(self) -> str: ...

    retry_for: float
    pool_size: int

    def replace(self, conn: Connection) -> Connection: ...


class PostgresTransaction:
    """The statements of `database.Transaction` in PostgreSQL (see this module's docstring)."""

    def __init__(self, engine: TransactionHost, conn: Connection, *, write: bool) -> None:
        self._engine = engine
        self.conn = conn
        self._write = write
        self._begun = False
        self._pending: list[Statement] = []
        self._heads: dict[str, Head] = {}
        self.after: list[Callable[[], None]] = []
        """What to run once this transaction has committed (after_commit)."""

    # --- database.Transaction -----------------------------------------------------------------------

    def journal(self, journal_id: str, *, lock: bool = False) -> JournalRow | None:
        rows = self._query(_JOURNAL + (" FOR UPDATE" if lock else ""), (journal_id,))
        if not rows:
            return None
        row = rows[0]
        self._heads[journal_id] = Head(row[7], row[8])
        return JournalRow(row[0], row[1], msgspec.json.decode(row[2]), row[3], row[4], row[5], row[6])

    def head(self, journal_id: str) -> Head:
        known = self._heads.get(journal_id)
        if known is not None:  # read with the journal row (locked for a write) in this transaction
            return known
        rows = self._query(
            "SELECT head_seq, head_digest FROM waybook_journals WHERE journal_id = %s", (journal_id,)
        )
        return Head(rows[0][0], rows[0][1]) if rows else GENESIS

    def lines(self, journal_id: str, after: int, limit: int) -> builtins.list[bytes]:
        # A read runs each statement on its own snapshot, so records can commit between reading the
        # head and reading lines; never read past the head this transaction has seen.
        through = self._heads.get(journal_id)
        rows = self._query(
            "SELECT line FROM waybook_records WHERE journal_id = %s AND seq > %s AND seq <= %s"
            " ORDER BY seq LIMIT %s",
            (journal_id, after, (2**63 - 1) if through is None else through.seq, limit),
        )
        return [row[0] for row in rows]

    def page_rows(self, journal_ids: Sequence[str]) -> builtins.list[tuple[JournalRow, Head]]:
        rows = self._query(
            "SELECT journal_id, role, metadata, created, created_at, hidden, purged, head_seq, head_digest"
            " FROM waybook_journals WHERE journal_id = ANY(%s)",
            (list(journal_ids),),
        )
        found = []
        for row in rows:
            head = Head(row[7], row[8])
            self._heads[row[0]] = head
            journal = JournalRow(row[0], row[1], msgspec.json.decode(row[2]), row[3], row[4], row[5], row[6])
            found.append((journal, head))
        return found

    def page_lines(self, heads: Mapping[str, Head]) -> dict[str, builtins.list[bytes]]:
        # Each statement of a read sees its own snapshot (see `lines`): never past the heads read before.
        # Ordered by the page's own order, then seq: each journal's index scan already yields its lines
        # in seq order, so PostgreSQL sorts only within a journal (an incremental sort), where ordering
        # by journal_id sorted every line of the page again (5,000 lines of 100 journals: ~8 of ~12 ms).
        found: dict[str, builtins.list[bytes]] = {journal_id: [] for journal_id in heads}
        rows = self._query(
            "SELECT w.journal_id, r.line FROM unnest(%s::text[], %s::bigint[]) WITH ORDINALITY"
            " AS w (journal_id, through, page_order) CROSS JOIN LATERAL (SELECT r.seq, r.line"
            " FROM waybook_records AS r WHERE r.journal_id = w.journal_id AND r.seq <= w.through) AS r"
            " ORDER BY w.page_order, r.seq",
            (list(heads), [head.seq for head in heads.values()]),
        )
        for journal_id, line in rows:
            found[journal_id].append(line)
        return found

    def allocate(self, count: int) -> int:
        """No positions at write time: records go in without one and the feed's sequencer numbers them
        once committed (waybook_insert ignores what this returns). No statement, no shared row."""
        return 0

    def insert(self, journal_id: str, rows: Sequence[tuple[int, int, str, bytes]]) -> None:
        if not rows:
            return
        expected = self._heads.get(journal_id, GENESIS)
        seqs, positions, digests, lines = (list(column) for column in zip(*rows, strict=True))
        self._pending.append(
            (
                "SELECT waybook_insert(%s, %s, %s, %s, %s, %s, %s)",
                (journal_id, expected.seq, expected.digest, seqs, positions, digests, lines),
            )
        )
        self._heads[journal_id] = Head(rows[-1][0], rows[-1][2])

    def add_journal(self, row: JournalRow) -> None:
        metadata = msgspec.json.encode(row.metadata, order="sorted").decode()
        added = self._query(
            "INSERT INTO waybook_journals (journal_id, role, metadata, created, created_at, hidden, purged)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (journal_id) DO NOTHING RETURNING 1",
            (row.journal_id, row.role, metadata, row.created, row.created_at, row.hidden, row.purged),
        )
        if not added:  # a racing creator committed it after this transaction looked
            purged = self._query(
                "SELECT purged FROM waybook_journals WHERE journal_id = %s", (row.journal_id,)
            )
            error = JournalPurgedError if purged and purged[0][0] is not None else JournalExistsError
            raise error(store=self._engine.url, journal_id=row.journal_id)
        self._heads[row.journal_id] = GENESIS

    def replace_lines(self, journal_id: str, rows: Sequence[tuple[int, str, bytes]]) -> None:
        """Rewrite erased records' lines (the old row versions stay until VACUUM: docs/erasure.md), each
        only where the stored line ends with the same digest (the same record)."""
        if not rows:
            return
        seqs, digests, lines = (list(column) for column in zip(*rows, strict=True))
        self._pending.append(
            (
                "UPDATE waybook_records AS r SET line = u.line"
                " FROM unnest(%s::bigint[], %s::text[], %s::bytea[]) AS u(seq, digest, line)"
                f" WHERE r.journal_id = %s AND r.seq = u.seq AND {_STORED_DIGEST} = u.digest",
                (seqs, digests, lines, journal_id),
            )
        )

    def note_erasure(self) -> None:
        """Nothing to remember: what VACUUM and the WAL keep is the operator's (`PostgresStore.scrub`)."""

    def set_hidden(self, journal_id: str) -> None:
        self._pending.append(
            ("UPDATE waybook_journals SET hidden = true WHERE journal_id = %s", (journal_id,))
        )

    def set_purged(self, journal_id: str, receipt_seq: int) -> None:
        self._pending.append(
            ("UPDATE waybook_journals SET purged = %s WHERE journal_id = %s", (receipt_seq, journal_id))
        )
        self._pending.append(("DELETE FROM waybook_records WHERE journal_id = %s", (journal_id,)))

    def journals(
        self, *, role: str | None, hidden: bool, after: int, limit: int
    ) -> builtins.list[JournalRow]:
        rows = self._query(
            "SELECT journal_id, role, metadata, created, created_at, hidden, purged FROM waybook_journals"
            " WHERE created > %s AND purged IS NULL AND journal_id <> '_catalog'"
            " AND (%s::text IS NULL OR role = %s) AND (%s OR NOT hidden) ORDER BY created LIMIT %s",
            (after, role, role, hidden, limit),
        )
        return [JournalRow(r[0], r[1], msgspec.json.decode(r[2]), r[3], r[4], r[5], r[6]) for r in rows]

    def count_journals(self, *, hidden: bool) -> int:
        rows = self._query(
            "SELECT count(*) FROM waybook_journals WHERE purged IS NULL AND journal_id <> '_catalog'"
            " AND (%s OR NOT hidden)",
            (hidden,),
        )
        return int(rows[0][0])

    def created_at_index(self, index: int, *, hidden: bool) -> int | None:
        rows = self._query(
            "SELECT created FROM waybook_journals WHERE purged IS NULL AND journal_id <> '_catalog'"
            " AND (%s OR NOT hidden) ORDER BY created LIMIT 1 OFFSET %s",
            (hidden, index),
        )
        return int(rows[0][0]) if rows else None

    def feed(self, after: int, limit: int) -> builtins.list[FeedRow]:
        rows = self._query("SELECT * FROM waybook_feed(%s, %s)", (after, limit))
        return [FeedRow(*row) for row in rows]

    def feed_head(self) -> int:
        return int(self._query("SELECT waybook_sequence()", None)[0][0])

    def after_commit(self, action: Callable[[], None]) -> None:
        self.after.append(action)

    def statement(self, query: str, params: Params = None) -> builtins.list[tuple[Any, ...]]:
        """Run one statement that returns rows in this transaction (BEGIN, first in a write, goes with
        it, and a first statement is retried on a fresh connection); its rows. For the blob tables."""
        return self._query(query, params)

    def changed(self, query: str, params: Sequence[object]) -> int:
        """Run one writing statement that returns no rows, like `statement`; the number of rows it
        inserted, updated or deleted."""
        return self._query(query, params, count=True)[0][0]  # type: ignore[no-any-return]

    # --- sending ------------------------------------------------------------------------------------

    def _query(self, query: str, params: Params, *, count: bool = False) -> builtins.list[tuple[Any, ...]]:
        """Send the pending writes (and BEGIN, first in a write) with `query`; return its rows (with
        `count`, one row holding the number of rows it changed)."""
        statements: list[Statement] = []
        if self._write and not self._begun:
            statements.append(("BEGIN", None))
        statements.extend(self._pending)
        statements.append((query, params))
        retry = not self._write or not self._begun  # nothing has happened that could be lost
        backoff = Backoff(self._engine.retry_for)
        stale = self._engine.pool_size  # idle connections a failure (a restart) may have broken
        while True:
            try:
                rows = self._send(statements, count=count)
                break
            except Exception as exc:
                if not (retry and transient(exc)):
                    raise
                stale -= 1
                if stale < 0 and not backoff.pause():
                    raise
                self.conn = self._engine.replace(self.conn)
        self._begun = True
        self._pending.clear()
        return rows

    def _send(
        self, statements: Sequence[Statement], *, rows: bool = True, count: bool = False
    ) -> builtins.list[tuple[Any, ...]]:
        """Run `statements` in one round trip; the rows of the last one (which must return rows), or
        with `count` one row holding the number of rows the last one changed."""
        conn = self.conn
        if len(statements) == 1:
            query, params = statements[0]
            cursor = conn.statements
            cursor.execute(query.encode(), params, prepare=_prepare(params))
        else:
            with conn.pipeline():
                for query, params in statements:
                    cursor = conn.execute(query.encode(), params, binary=True, prepare=_prepare(params))
        if count:
            return [(cursor.rowcount,)]
        return cursor.fetchall() if rows else []

    def commit(self) -> None:
        if self._write and (self._begun or self._pending):
            statements: list[Statement] = [] if self._begun else [("BEGIN", None)]
            self._send([*statements, *self._pending, ("COMMIT", None)], rows=False)
            self._pending.clear()

    def rollback(self) -> None:
        """Abandon the transaction; a connection that cannot even do that is closed and dropped."""
        try:
            if self.conn.pgconn.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                self.conn.execute(b"ROLLBACK")
        except psycopg.Error:
            self.conn.close()


def _prepare(params: Params) -> bool | None:
    """Statements without parameters (BEGIN, COMMIT, a feed glance) are never prepared; the others as
    the connection's `prepare_threshold` says (_connection.py, `configure`)."""
    return False if params is None else None
