"""The PostgreSQL engine under `DatabaseStore`: one store in one schema, its connection pool, and the
statements that need no transaction of their own (compare-and-append, create, the feed glance).

The rest lives beside it: connections and their retry policy in _connection.py, the SQL of one
transaction in _transaction.py, feed wake-ups (the watcher thread) in _feed.py.

Feed order: writers insert records without a feed position and share no row, lock or notification.
Readers number committed records first (`waybook_sequence`, one sequencer at a time, under the feed
clock row, durable before anyone reads the numbers), then read by position; docs/postgresql.md, "Feed
order", has the argument that no reader misses, repeats or reorders a record.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import msgspec
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from waybook.journal import Plan
from waybook.model import GENESIS_DIGEST, IntegrityError, JournalClosedError, StorageError
from waybook.stores._engine import JournalRow
from waybook.stores.postgres._connection import (
    RETRY_FOR,
    Backoff,
    Connection,
    configure,
    public_url,
    transient,
)
from waybook.stores.postgres._errors import ConnectionLostError
from waybook.stores.postgres._feed import FeedWaker
from waybook.stores.postgres._schema import LINE_DIGEST, migrate
from waybook.stores.postgres._transaction import PostgresTransaction

SCALAR_BATCH: Final = 32
"""Batches up to this many records are one statement of scalar parameters (`_append_statement`);
larger ones call `waybook_append` with arrays."""


class PostgresEngine:
    """One store in one PostgreSQL schema: a pool of autocommit connections and a feed watcher.

    Open it in the process that uses it: a pool must not cross a fork.
    """

    def __init__(self, conninfo: str, *, pool_size: int = 8, retry_for: float = RETRY_FOR) -> None:
        self._conninfo = conninfo
        self._url = public_url(conninfo)
        self.retry_for = retry_for
        self.pool_size = max(pool_size, 1)
        self._closed = False
        self._pool: ConnectionPool[Connection] = ConnectionPool(
            conninfo,
            # Empty at first: the first read grows it by the one connection it waits for. With one
            # connection started in the background, that read found it not yet made and the pool grew
            # a second: two server processes forked for every command that uses one at a time.
            min_size=0,
            max_size=self.pool_size,
            # No server-side prepared statements: a pooler in transaction mode (PgBouncer) hands each
            # transaction to any server connection, where a statement prepared on another is unknown.
            kwargs={"autocommit": True, "prepare_threshold": None},
            connection_class=Connection,
            configure=configure,
            # At least a second to get a connection, even with retry_for=0: recognising a lost reply
            # needs one new connection, which a loaded machine made in 0.1 s only sometimes (a CI flake).
            timeout=max(retry_for, 1.0),
            reconnect_timeout=max(retry_for, 1.0),
            num_workers=1,
            open=False,
        )
        self._feed = FeedWaker()
        try:
            self._pool.open(wait=False)
            self._migrate()
        except BaseException:
            self._pool.close()
            raise

    def _migrate(self) -> None:
        """Bring the schema up to date (safe to run again: it is one transaction, and idempotent).
        Retried like a read while the server is unreachable."""
        backoff = Backoff(self.retry_for)
        while True:
            try:
                with self._errors("open the store"), self._pool.connection() as conn:
                    migrate(conn)
                    return
            except ConnectionLostError as exc:
                if not backoff.pause():
                    raise self._why_no_connection(exc) from exc

    def _why_no_connection(self, lost: ConnectionLostError) -> ConnectionLostError:
        """The pool only says it timed out: one direct attempt gives the server's own reason."""
        try:
            with psycopg.connect(self._conninfo, connect_timeout=5):
                return lost  # reachable again: the timeout was the reason
        except psycopg.Error as exc:
            return ConnectionLostError(store=self._url, doing="open the store", cause=exc)

    @property
    def url(self) -> str:
        return self._url

    @property
    def conninfo(self) -> str:
        """What this engine connects with (it may hold a password: never show it)."""
        return self._conninfo

    @contextlib.contextmanager
    def transaction(self, *, write: bool) -> Iterator[PostgresTransaction]:
        if self._closed:
            msg = f"{self._url}: the store is closed; open it again with open_store(url)"
            raise JournalClosedError(msg)
        with self._errors("write" if write else "read"):
            conn = self._pool.getconn()
            tx = PostgresTransaction(self, conn, write=write)
            try:
                yield tx
                tx.commit()
            except BaseException:
                tx.rollback()
                raise
            finally:
                self._pool.putconn(tx.conn)
        for action in tx.after:
            action()

    def run(self, query: str, params: Sequence[object] | None = None) -> builtins.list[tuple[Any, ...]]:
        """One statement on its own (autocommit), retried on a fresh connection like every read; its rows.
        Only for statements that are safe to run twice (reads, and idempotent writes such as dropping a
        lease)."""
        with self.transaction(write=False) as tx:
            return tx.statement(query, params)

    @contextlib.contextmanager
    def connection(self, doing: str) -> Iterator[Connection]:
        """A pooled autocommit connection for work of its own (blobs: a transaction streaming a blob's
        parts). psycopg's errors become the store's typed errors; a broken connection leaves the pool."""
        if self._closed:
            msg = f"{self._url}: the store is closed; open it again with open_store(url)"
            raise JournalClosedError(msg)
        with self._errors(doing), self._pool.connection() as conn:
            yield conn

    def append_now(self, journal_id: str, plan: Plan) -> bool:
        """Compare-and-append `plan` in one statement, so one round trip and (autocommit) one
        transaction; False (nothing written) if the head has moved. See `_append_statement`.

        Safe to run again after a lost reply: the second run finds the head moved and says False."""
        prior = plan.result.prior
        records = plan.result.records
        n = len(records)
        if n > SCALAR_BATCH:
            digests = [record.digest for record in records]
            with self.transaction(write=False) as tx:
                rows = tx.statement(
                    "SELECT waybook_append(%s, %s, %s, %s, %s)",
                    (journal_id, prior.seq, prior.digest, digests, list(plan.lines)),
                )
            return bool(rows[0][0])
        last = records[-1].digest
        params: list[object] = [prior.seq + n, last, journal_id, prior.seq, prior.digest]
        params += plan.lines
        return self._changed_now(_append_statement(n), params) == n

    def _changed_now(self, query: str, params: Sequence[object]) -> int:
        """`transaction(write=False)` around one `changed` statement, without its two generator context
        managers (the one-record append's hot path): the number of rows the statement changed."""
        if self._closed:
            msg = f"{self._url}: the store is closed; open it again with open_store(url)"
            raise JournalClosedError(msg)
        try:
            conn = self._pool.getconn()
        except PoolTimeout as exc:
            raise self._typed(_WRITE, exc) from exc
        tx = PostgresTransaction(self, conn, write=False)
        try:
            return tx.changed(query, params)
        except psycopg.Error as exc:
            tx.rollback()
            raise self._typed(_WRITE, exc) from exc
        except BaseException:
            tx.rollback()
            raise
        finally:
            self._pool.putconn(tx.conn)

    def replace(self, conn: Connection) -> Connection:
        """A fresh connection in place of `conn`, which failed (the pool drops it if it is broken)."""
        self._pool.putconn(conn)
        return self._pool.getconn()

    def create_now(
        self, catalog: Plan, journal_id: str, row: JournalRow, header: bytes | None
    ) -> tuple[str, builtins.list[bytes]]:
        """Create a journal in one statement (`_CREATE`): the catalog entry `catalog` (sealed after the
        catalog head this process knows), the journal's row and its `header` line. Returns the outcome
        ('created', 'exists', 'purged', or 'stale' with the catalog lines to catch up on)."""
        prior = catalog.result.prior
        metadata = msgspec.json.encode(row.metadata, order="sorted").decode()
        with self.transaction(write=False) as tx:
            rows = tx.statement(
                _CREATE,
                {
                    "journal": journal_id,
                    "catalog_seq": prior.seq,
                    "catalog_digest": prior.digest,
                    "entry": catalog.lines[0],
                    "role": row.role,
                    "metadata": metadata,
                    "created_at": row.created_at,
                    "header": header,
                },
            )
        return str(rows[0][0]), [bytes(r[1]) for r in rows[1:]]

    def glance(self) -> int:
        """The feed head if every committed record is numbered, else one more: what a feed waiter needs
        to know (is there anything after its cursor?) without numbering anything, so without a write
        or a WAL flush. One probe of the clock and of the partial index of unnumbered records."""
        with self.transaction(write=False) as tx:
            rows = tx.statement(
                "SELECT c.position + (EXISTS (SELECT 1 FROM waybook_records WHERE position IS NULL))::int"
                " FROM waybook_feed_clock AS c"
            )
        return int(rows[0][0])

    def committed(self) -> None:
        """This process committed: the watcher, if any, looks at the feed head now."""
        self._feed.committed()

    def wait(self, after: int, timeout: float | None, head: Callable[[], int]) -> bool:
        """Sleep until the feed head passes `after` (FeedWaker.wait: one watcher thread per engine);
        False when `timeout` is spent."""
        return self._feed.wait(after, timeout, head)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._feed.stop()
        self._pool.close()

    def vacuum_records(self) -> None:
        """Reclaim the space of deleted records (after a purge), so their bytes leave the table's pages."""
        with self._errors("vacuum after a purge"), self._pool.connection() as conn:
            conn.execute(b"VACUUM waybook_records")

    @contextlib.contextmanager
    def _errors(self, doing: str) -> Iterator[None]:
        """Turn psycopg's errors into the store's typed errors."""
        try:
            yield
        except (PoolTimeout, psycopg.Error) as exc:
            raise self._typed(doing, exc) from exc

    def _typed(self, doing: str, exc: PoolTimeout | psycopg.Error) -> StorageError | IntegrityError:
        """The store's typed error for a failure of psycopg or the pool while doing `doing`."""
        if isinstance(exc, PoolTimeout) or transient(exc):
            return ConnectionLostError(store=self._url, doing=doing, cause=exc)
        if exc.sqlstate in ("WB409", "WB400"):
            msg = f"{self._url}: could not {doing}: {exc.diag.message_primary}; nothing was written"
            return IntegrityError(msg)
        if exc.sqlstate in _READ_ONLY_STATES:
            msg = (
                f"{self._url}: could not {doing}: {' '.join(str(exc).split())}. This connection can only "
                "read (a hot standby, a read-only transaction, or a role without write privileges): "
                "journals, the catalog and their proofs read here, but appends, creations and the feed "
                "(which numbers new records as it reads them) need a writer on the primary"
            )
            return StorageError(msg)
        return StorageError(f"{self._url}: could not {doing}: {' '.join(str(exc).split())}")


_WRITE: Final = "write"
"""What a failed write was doing, in its message (as `transaction(write=True)` says)."""

_READ_ONLY_STATES: Final = frozenset({"25006", "42501"})
"""read_only_sql_transaction (a hot standby, default_transaction_read_only) and insufficient_privilege."""


_CREATE: Final = (
    "WITH taken AS (SELECT CASE WHEN j.purged IS NULL THEN 'exists' ELSE 'purged' END AS outcome"
    " FROM waybook_journals AS j WHERE j.journal_id = %(journal)s),"
    " waybook_create AS (UPDATE waybook_journals"
    f" SET head_seq = %(catalog_seq)s + 1, head_digest = {LINE_DIGEST.format(line='%(entry)s::bytea')}"
    " WHERE journal_id = '_catalog' AND head_seq = %(catalog_seq)s AND head_digest = %(catalog_digest)s"
    " AND NOT EXISTS (SELECT FROM taken)"
    " RETURNING pg_current_xact_id()::text::bigint AS xact, set_config('synchronous_commit', 'on', true)),"
    " added AS (INSERT INTO waybook_journals"
    " (journal_id, role, metadata, created, created_at, head_seq, head_digest)"
    " SELECT %(journal)s, %(role)s, %(metadata)s, %(catalog_seq)s + 1, %(created_at)s,"
    " (%(header)s::bytea IS NOT NULL)::int,"
    f" coalesce({LINE_DIGEST.format(line='%(header)s::bytea')}, '{GENESIS_DIGEST}') FROM waybook_create),"
    " inserted AS (INSERT INTO waybook_records (journal_id, seq, line, xact)"
    " SELECT r.journal_id, r.seq, r.line, m.xact FROM waybook_create AS m,"
    " (VALUES ('_catalog', %(catalog_seq)s + 1, %(entry)s::bytea), (%(journal)s, 1, %(header)s::bytea))"
    " AS r (journal_id, seq, line) WHERE r.line IS NOT NULL)"
    " SELECT t.outcome, NULL::bytea AS line, 0 AS o, 0::bigint AS seq FROM taken AS t"
    " UNION ALL SELECT 'created', NULL, 0, 0 FROM waybook_create"
    " UNION ALL SELECT 'stale', NULL, 0, 0 WHERE NOT EXISTS (SELECT FROM taken)"
    " AND NOT EXISTS (SELECT FROM waybook_create)"
    " UNION ALL SELECT 'line', r.line, 1, r.seq FROM waybook_records AS r"
    " WHERE r.journal_id = '_catalog' AND r.seq > %(catalog_seq)s"
    " AND NOT EXISTS (SELECT FROM taken) AND NOT EXISTS (SELECT FROM waybook_create)"
    " ORDER BY o, seq"
)
"""Create a journal in one statement (its CTE `waybook_create` names it in `pg_stat_statements`; no
function call: PL/pgSQL's per-call setup, as for appends), sending each line once (the head digests the
rows keep are the lines' tails). Unless the id is taken, append its `created` entry to the catalog
journal if the catalog's head is still the one the entry was sealed after (the catalog row is the lock
every catalog write takes, so a racing creator of the same id makes this wait, then find the head
moved), add the journal's row and insert its header (if any). Rows: ('created'); ('exists') or
('purged'), nothing written; ('stale'), nothing written, then ('line', bytes): the catalog records after
the head it was sealed after, as of the statement's snapshot (a racer's that committed while this waited
may be missing: the caller catches up on what it got and seals again)."""


@functools.cache
def _append_statement(n: int) -> str:
    """Compare-and-append of `n` records as one statement (no function call: PL/pgSQL's per-call
    setup cost the server more than the move and the insert themselves). The CTE moves the journal's
    head row only if it still is the head the batch was sealed after; a writer holding the row makes it
    wait, then see the new head and match nothing, so the insert, which takes its rows from the moved
    row, inserts nothing. A moved head also sets `synchronous_commit` for this transaction, which holds
    behind a pooler that resets session settings. Its parameters: the new head seq and digest, the
    journal, the expected head seq and digest, then each record's line (scalars: dumping Python lists
    as arrays costs the client more than the statement costs the server; no digest column: each line
    ends with its digest)."""
    moved = (
        "WITH waybook_append AS (UPDATE waybook_journals SET head_seq = %s, head_digest = %s"
        " WHERE journal_id = %s AND head_seq = %s AND head_digest = %s AND purged IS NULL"
        f" RETURNING journal_id, head_seq - {n} AS prior, set_config('synchronous_commit', 'on', true))"
        " INSERT INTO waybook_records (journal_id, seq, line, xact)"
    )
    xact = "pg_current_xact_id()::text::bigint"
    if n == 1:
        return f"{moved} SELECT m.journal_id, m.prior + 1, %s, {xact} FROM waybook_append AS m"
    rows = ", ".join(f"({i}, %s::bytea)" for i in range(1, n + 1))
    return (
        f"{moved} SELECT m.journal_id, m.prior + r.i, r.line, {xact}"
        f" FROM waybook_append AS m, (VALUES {rows}) AS r(i, line)"
    )
