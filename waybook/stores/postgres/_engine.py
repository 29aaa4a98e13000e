"""The PostgreSQL engine under `DatabaseStore`: a connection pool, transactions, and feed wake-ups.

Round trips: a write transaction sends `BEGIN` with its first statement, and its inserts with its
`COMMIT`, so the locked path of an append is two round trips (lock the journal row and read its head;
insert and commit). A read runs its statements on their own, outside any transaction.

Feed order: writers insert records without a feed position and share no row, lock or notification.
Readers number committed records first (`waybook_sequence`, one sequencer at a time, under the feed
clock row, durable before anyone reads the numbers), then read by position; docs/postgresql.md, "Feed
order", has the argument that no reader misses, repeats or reorders a record.

Wake-ups: writers notify no one. A process with feed waiters runs one watcher thread that glances at
the feed (`glance`: the clock and whether anything awaits a number; no write) every few milliseconds
while anything waits, and not at all otherwise.

Connections fail: a read statement, and the first statement of a write, run again on a fresh
connection for up to `retry_for` seconds. A write that fails later raises ConnectionLostError; the
journal then resends the batch, which R7 makes safe (see store.py).
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

import msgspec
import psycopg
from psycopg_pool import ConnectionPool, PoolTimeout

from waybook.journal._ledger import Plan
from waybook.model._errors import IntegrityError, JournalClosedError, StorageError
from waybook.model._head import GENESIS, Head
from waybook.stores._engine import FeedRow, JournalRow
from waybook.stores._errors import JournalExistsError, JournalPurgedError
from waybook.stores.postgres._errors import ConnectionLostError
from waybook.stores.postgres._schema import migrate

RETRY_FOR: Final = 30.0
"""Seconds an operation keeps trying fresh connections (a server restart takes a few)."""

POLL_FALLBACK: Final = 1.0
"""Longest a feed waiter sleeps without hearing from the watcher before it looks at the feed head itself."""

SCALAR_BATCH: Final = 32
"""Batches up to this many records are sent as scalar parameters (the server builds the arrays)."""

WATCH_FAST: Final = 0.002
"""Seconds between the watcher's looks at the feed head right after it moved (or this process committed)."""

WATCH_SLOW: Final = 0.05
"""Longest pause between the watcher's looks while the feed stands still (each empty look grows it)."""


Connection = psycopg.Connection[tuple[Any, ...]]
Statement = tuple[str, Sequence[object] | None]

_JOURNAL: Final = (
    "SELECT journal_id, role, metadata, created, created_at, hidden, purged, head_seq, head_digest"
    " FROM waybook_journals WHERE journal_id = %s"
)
_SETTINGS: Final = (
    # An acknowledged append must survive a crash, and a reader must never see a commit that a crash
    # could take back (a position would be handed out again). Every waybook function also sets
    # synchronous_commit in its own transaction, which is what holds behind a pooler (PgBouncer). A
    # client that stalls inside a transaction must not hold a journal's row for long.
    "SELECT set_config('synchronous_commit', 'on', false),"
    " set_config('idle_in_transaction_session_timeout', '60s', false)"
)


class Backoff:
    """Growing pauses between attempts, until `seconds` have passed."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds
        self.delay = 0.02

    def pause(self) -> bool:
        """Sleep before the next attempt; False (without sleeping) when the time is spent."""
        remaining = self.deadline - time.monotonic()
        if remaining <= 0:
            return False
        time.sleep(min(self.delay, remaining))
        self.delay = min(self.delay * 2, 1.0)
        return True


def public_url(conninfo: str) -> str:
    """`conninfo` with any password removed: what messages and journal names show."""
    if "://" not in conninfo:
        return " ".join(p for p in conninfo.split() if not p.lower().startswith("password="))
    parts = urllib.parse.urlsplit(conninfo)
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if parts.port:
        netloc = f"{netloc}:{parts.port}"
    if parts.username:
        netloc = f"{parts.username}@{netloc}"
    query = [(k, v) for k, v in urllib.parse.parse_qsl(parts.query) if k.lower() != "password"]
    encoded = urllib.parse.urlencode(query, quote_via=urllib.parse.quote)
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, encoded, ""))


def _transient(exc: BaseException) -> bool:
    """A failure of the connection or the server (not of the statement): trying again may succeed."""
    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


class PostgresTransaction:
    """The statements of `database.Transaction` in PostgreSQL (see the module docstring)."""

    def __init__(self, engine: PostgresEngine, conn: Connection, *, write: bool) -> None:
        self._engine = engine
        self.conn = conn
        self._write = write
        self._begun = False
        self._pending: list[Statement] = []
        self._heads: dict[str, Head] = {}
        self._after: list[Callable[[], None]] = []

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

    def feed(self, after: int, limit: int) -> builtins.list[FeedRow]:
        rows = self._query("SELECT * FROM waybook_feed(%s, %s)", (after, limit))
        return [FeedRow(*row) for row in rows]

    def feed_head(self) -> int:
        return int(self._query("SELECT waybook_sequence()", None)[0][0])

    def after_commit(self, action: Callable[[], None]) -> None:
        self._after.append(action)

    def statement(self, query: str, params: Sequence[object] | None = None) -> builtins.list[tuple[Any, ...]]:
        """Run one statement that returns rows in this transaction (BEGIN, first in a write, goes with
        it, and a first statement is retried on a fresh connection); its rows. For the blob tables."""
        return self._query(query, params)

    # --- sending ------------------------------------------------------------------------------------

    def _query(self, query: str, params: Sequence[object] | None) -> builtins.list[tuple[Any, ...]]:
        """Send the pending writes (and BEGIN, first in a write) with `query`; return its rows."""
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
                rows = self._send(statements)
                break
            except Exception as exc:
                if not (retry and _transient(exc)):
                    raise
                stale -= 1
                if stale < 0 and not backoff.pause():
                    raise
                self.conn = self._engine.replace(self.conn)
        self._begun = True
        self._pending.clear()
        return rows

    def _send(self, statements: Sequence[Statement], *, rows: bool = True) -> builtins.list[tuple[Any, ...]]:
        """Run `statements` in one round trip; the rows of the last one (which must return rows)."""
        conn = self.conn
        if len(statements) == 1:
            query, params = statements[0]
            cursor = conn.execute(query.encode(), params, binary=True)
        else:
            with conn.pipeline():
                for query, params in statements:
                    cursor = conn.execute(query.encode(), params, binary=True)
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
            min_size=1,
            max_size=self.pool_size,
            # No server-side prepared statements: a pooler in transaction mode (PgBouncer) hands each
            # transaction to any server connection, where a statement prepared on another is unknown.
            kwargs={"autocommit": True, "prepare_threshold": None},
            configure=_configure,
            timeout=max(retry_for, 0.1),
            reconnect_timeout=max(retry_for, 1.0),
            num_workers=1,
            open=False,
        )
        self._wake = threading.Condition()
        self._generation = 0
        self._watcher: _Watcher | None = None
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
        for action in tx._after:
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
        """Compare-and-append `plan` in one round trip; False (nothing written) if the head has moved.

        Safe to run again after a lost reply: the second run finds the head moved and says False."""
        prior = plan.result.prior
        digests = [record.digest for record in plan.result.records]
        head = (journal_id, prior.seq, prior.digest)
        if len(digests) <= SCALAR_BATCH:
            query, params = _append_statement(len(digests)), (*head, *digests, *plan.lines)
        else:
            query, params = "SELECT waybook_append(%s, %s, %s, %s, %s)", (*head, digests, list(plan.lines))
        with self.transaction(write=False) as tx:
            rows = tx._query(query, params)
        return bool(rows[0][0])

    def replace(self, conn: Connection) -> Connection:
        """A fresh connection in place of `conn`, which failed (the pool drops it if it is broken)."""
        self._pool.putconn(conn)
        return self._pool.getconn()

    def create_now(
        self,
        catalog: Plan,
        journal_id: str,
        row: JournalRow,
        header: tuple[str, bytes] | None,
    ) -> tuple[str, builtins.list[bytes]]:
        """Create a journal in one statement (waybook_create): the catalog entry `catalog` (sealed after
        the catalog head this process knows), the journal's row and its header. Returns the outcome
        ('created', 'exists', 'purged', or 'stale' with the catalog lines to catch up on)."""
        (entry,) = catalog.result.records
        prior = catalog.result.prior
        metadata = msgspec.json.encode(row.metadata, order="sorted").decode()
        digest, line = header if header is not None else (None, None)
        with self.transaction(write=False) as tx:
            rows = tx._query(
                "SELECT outcome, line FROM waybook_create(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                (
                    prior.seq,
                    prior.digest,
                    entry.digest,
                    catalog.lines[0],
                    journal_id,
                    row.role,
                    metadata,
                    row.created_at,
                    digest,
                    line,
                ),
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
        with self._wake:
            self._generation += 1
            self._wake.notify_all()

    def wait(self, after: int, timeout: float | None, head: Callable[[], int]) -> bool:
        """Sleep until the watcher (one thread per engine, looking at `head()` every few milliseconds
        while anything waits) sees the feed head pass `after`; False when `timeout` is spent. Waiters
        look at the head themselves at least every POLL_FALLBACK seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        watcher = self._watch(head)
        with self._wake:
            watcher.waiters += 1
            self._wake.notify_all()
        try:
            first = True
            while True:
                with self._wake:
                    seen = watcher.generation
                    known = watcher.head
                if known > after:
                    return True
                if first or watcher.failed:
                    first = False
                    if head() > after:
                        return True
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                pause = POLL_FALLBACK if left is None else min(POLL_FALLBACK, left)
                with self._wake:
                    if watcher.generation == seen:
                        self._wake.wait(pause)
                    if watcher.generation == seen:
                        first = True  # nothing from the watcher in a whole pause: look ourselves
        finally:
            with self._wake:
                watcher.waiters -= 1

    def _watch(self, head: Callable[[], int]) -> _Watcher:
        with self._wake:
            if self._watcher is None:
                self._watcher = _Watcher(self, head)
            return self._watcher

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._watcher is not None:
            self._watcher.stop()
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
        except PoolTimeout as exc:
            raise ConnectionLostError(store=self._url, doing=doing, cause=exc) from exc
        except psycopg.Error as exc:
            if _transient(exc):
                raise ConnectionLostError(store=self._url, doing=doing, cause=exc) from exc
            if exc.sqlstate in ("WB409", "WB400"):
                msg = f"{self._url}: could not {doing}: {exc.diag.message_primary}; nothing was written"
                raise IntegrityError(msg) from exc
            msg = f"{self._url}: could not {doing}: {' '.join(str(exc).split())}"
            raise StorageError(msg) from exc


@functools.cache
def _append_statement(n: int) -> str:
    """`SELECT waybook_append(...)` for a batch of `n`, its arrays built by the server from scalar
    parameters (dumping Python lists as arrays costs the client more than the statement costs the
    server)."""
    each = ", ".join(["%s"] * n)
    return f"SELECT waybook_append(%s, %s, %s, ARRAY[{each}]::text[], ARRAY[{each}]::bytea[])"


def _configure(conn: Connection) -> None:
    conn.execute(_SETTINGS.encode())


class _Watcher:
    """A thread that, while any feed waiter of its engine waits, looks at the feed head: again after
    WATCH_FAST seconds when it moved or this process committed, backing off to WATCH_SLOW while the
    feed stands still. Each change wakes every waiter. Writers pay nothing for it."""

    def __init__(self, engine: PostgresEngine, head: Callable[[], int]) -> None:
        self._engine = engine
        self._head = head
        self.waiters = 0
        self.head = -1
        self.generation = 0
        self.failed = False
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="waybook-pg-feed-watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._engine._wake:
            self._stopping = True
            self._engine._wake.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        wake = self._engine._wake
        pause = WATCH_FAST
        while True:
            with wake:
                while self.waiters == 0 and not self._stopping:
                    wake.wait()
                if self._stopping:
                    return
                commits = self._engine._generation
            try:
                now = self._head()
                failed = False
            except (StorageError, JournalClosedError):
                now, failed = self.head, True
            with wake:
                moved = now != self.head
                if moved or failed != self.failed:
                    self.head, self.failed = now, failed
                    self.generation += 1
                    wake.notify_all()
                pause = WATCH_FAST if moved else min(pause * 2, WATCH_SLOW)
                if failed:
                    pause = POLL_FALLBACK
                if self._engine._generation == commits and not self._stopping:
                    wake.wait(pause)
                if self._engine._generation != commits:
                    pause = WATCH_FAST
