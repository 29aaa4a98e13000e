"""`PostgresStore` (`postgresql://...`): many journals on a PostgreSQL server that many machines share.

The engine-neutral `DatabaseStore` decides everything (planning and sealing with the journal's ledger,
the head compare in the same transaction as the insert, retries, the catalog, hiding and purging);
_engine.py runs it on PostgreSQL (with _connection.py, _transaction.py and _feed.py). See
docs/postgresql.md.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from collections.abc import Callable, Sequence
from typing import Any, Final

from waybook.codecs import decode_record
from waybook.journal import check_seconds, prove_lines
from waybook.model import AppendResult, Head, NewRecord, Record, RecordValidationError
from waybook.stores._base import store_clock, store_ids
from waybook.stores._catalog import CREATED, catalog_entry, check_position, check_timeout
from waybook.stores._database import DatabaseStore
from waybook.stores._database_journal import DatabaseJournal
from waybook.stores._engine import JournalRow
from waybook.stores._errors import (
    InvalidStoreUrlError,
    JournalExistsError,
    JournalPurgedError,
    StoreArgumentError,
)
from waybook.stores._header_id import check_first_header
from waybook.stores.postgres._blobs import PostgresBlobs
from waybook.stores.postgres._connection import RETRY_FOR, Backoff, public_url
from waybook.stores.postgres._engine import PostgresEngine
from waybook.stores.postgres._errors import ConnectionLostError

CREATE_ATTEMPTS: Final = 2
"""One-statement creates tried (catching up on the catalog between them) before the locked path."""

POOL_MAX: Final = 1000
"""The most connections one store object may pool (a server's max_connections is far below)."""

OPTIONS: Final = ("pool_size", "retry_for")
"""URL query options waybook reads itself (the rest go to libpq: sslmode, options, ...)."""


class PostgresJournal(DatabaseJournal):
    """A journal of a PostgreSQL store.

    Appends try the one-round-trip path first: when `expected` is the head this object knows, the batch
    is planned here and sent to `waybook_append`, which compares the head row and inserts in one
    statement. If the head has moved (another writer, or this very batch committed before a lost
    reply), the engine-neutral locked path takes over: it catches up, recognises a retry (R7) or raises
    StaleWriterError. An append whose connection fails is resent for up to the store's `retry_for`
    seconds; R7 makes that safe.
    """

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        self._check_open()
        batch = tuple(records)
        check_first_header(self._engine.url, self._id, batch, expected)  # a header names its journal
        engine = self._engine
        assert isinstance(engine, PostgresEngine)
        backoff = Backoff(engine.retry_for)
        while True:
            try:
                with self._mutex:
                    result = self._append_at_known_head(engine, batch, expected)
                if result is None:
                    result = super().append(batch, expected=expected)
                else:
                    engine.committed()
            except ConnectionLostError:
                if not backoff.pause():
                    raise
            else:
                return result

    def _append_at_known_head(
        self, engine: PostgresEngine, batch: Sequence[NewRecord], expected: Head
    ) -> AppendResult | None:
        if expected != self._ledger.head:
            return None
        try:
            plan = self._ledger.plan(batch, expected, _no_range)
        except RecordValidationError:
            return None  # judged against what this object last saw: let the locked path judge it current
        assert not isinstance(plan, AppendResult)  # expected is the head: a plan, or a refusal
        if not engine.append_now(self._id, plan):
            return None
        self._ledger.commit(plan)
        return plan.result


def _no_range(after: int, limit: int) -> list[Record]:
    msg = "a plan at the known head never looks for a retried batch"
    raise AssertionError(msg)


class PostgresStore(DatabaseStore):
    """Many journals in one PostgreSQL schema. See the module docstring and docs/postgresql.md.

    `conninfo` is a libpq URL or key=value string; the store lives in the connection's current schema
    (set it with `options=-c search_path=NAME`). `pool_size` caps this process's connections;
    `retry_for` is how long an operation keeps trying when the server is unreachable.
    """

    journal_type = PostgresJournal

    def __init__(
        self,
        conninfo: str,
        *,
        pool_size: int = 8,
        retry_for: float = RETRY_FOR,
        clock: Callable[[], str] = store_clock,
        ids: Callable[[], str] = store_ids,
    ) -> None:
        if type(pool_size) is not int or not 1 <= pool_size <= POOL_MAX:
            msg = f"pool_size={pool_size!r:.20} must be a whole number from 1 to {POOL_MAX}"
            raise StoreArgumentError(msg)
        retry_for = check_seconds(retry_for, what="retry_for", error=StoreArgumentError)
        self._pg = PostgresEngine(conninfo, pool_size=pool_size, retry_for=retry_for)
        try:
            super().__init__(self._pg, clock=clock, ids=ids)
        except BaseException:
            self._pg.close()
            raise

    @property
    def postgres_engine(self) -> PostgresEngine:
        return self._pg

    def scrub(self) -> None:
        """After an erasure (docs/erasure.md): rewrite the records table and the blobs tables (whose rows a
        collection removed: the blobs only erased content referenced) without their dead row versions
        (`VACUUM FULL`, an exclusive lock on each while it runs), then `CHECKPOINT`, switch to a new WAL
        segment and `CHECKPOINT` again, so the old rows leave the table's files and, with
        `wal_recycle = off`, the WAL. Archives, replication slots and standbys keep their copies.
        `CHECKPOINT` and `pg_switch_wal()` need a superuser (or `pg_checkpoint` and an explicit grant)."""
        with self._pg.connection("scrub the erased rows") as conn:
            conn.execute("VACUUM FULL waybook_records")
            conn.execute("VACUUM FULL waybook_blobs")  # the blobs a collection removed since
            conn.execute("VACUUM FULL waybook_blob_parts")
            conn.execute("CHECKPOINT")
            conn.execute("SELECT pg_switch_wal()")
            conn.execute("CHECKPOINT")

    def _create(
        self, journal_id: str, role: str, meta: dict[str, Any], line: bytes | None
    ) -> DatabaseJournal:
        """Create a journal in one round trip (`PostgresEngine.create_now`) when this process knows the
        catalog's head, in two when another process created or hid a journal since (the first reply brings the
        catalog records to catch up on). Under a storm of creators the generic locked path decides."""
        catalog = self._catalog
        if catalog._ledger.head.seq == 0:  # the first create of this store object: take in the catalog
            catalog.head()
        for _ in range(CREATE_ATTEMPTS):
            with self._catalog_mutex, catalog._mutex:
                known = catalog._ledger.head
                leaf = catalog._ledger.rules.leaf
                created = {"journal": journal_id, "role": role, "metadata": meta}
                entry = catalog_entry(CREATED, created, leaf, record_id=self._ids(), at=self._clock())
                plan = catalog._ledger.plan([entry], known, _no_range)
                assert not isinstance(plan, AppendResult)
                record = plan.result.records[0]
                row = JournalRow(journal_id, role, meta, record.seq, record.at, False, None)
                outcome, lines = self._pg.create_now(plan, journal_id, row, line)
                if outcome == "created":
                    catalog._ledger.commit(plan)
                elif outcome == "stale":
                    records, error = prove_lines(lines, known, catalog.name)
                    catalog._ledger.advance(records)
                    if error is not None:
                        raise error
                    if not any(r.id == record.id for r in records):
                        continue
                    # Our own entry: the statement committed and its reply was lost, then the engine
                    # sent it again (which found the catalog moved, by us). The create is done.
            if outcome == "exists":
                catalog.head()  # take in the catalog: is the journal there by this very create?
                if record.id not in catalog._ledger.rules.ids:
                    raise JournalExistsError(store=self.url, journal_id=journal_id)
                # It is: the statement committed, its reply was lost and the engine sent it again.
            if outcome == "purged":
                raise JournalPurgedError(store=self.url, journal_id=journal_id)
            self._pg.committed()
            journal = self.journal_type(self._engine, journal_id)
            if line is not None:
                journal._ledger.advance([decode_record(line, where=journal.name)])
            return journal
        return super()._create(journal_id, role, meta, line)

    def wait(self, after: int, timeout: float | None = None) -> bool:
        """True once a record after `after` is committed (the feed then has it), False at `timeout`.
        Waiting looks with `PostgresEngine.glance`, which numbers nothing: the reader's next `feed`
        read does that, so a tailing loop pays one numbering per batch of new records."""
        check_position(after)
        seconds = check_timeout(timeout)
        self._check_open()
        return self._pg.wait(after, seconds, self._pg.glance)

    def _set_up_catalog(self) -> None:
        backoff = Backoff(self._pg.retry_for)
        while True:  # safe to run again: it looks for the catalog first
            try:
                with contextlib.suppress(JournalExistsError):  # another process created it just now
                    super()._set_up_catalog()
            except ConnectionLostError:
                if not backoff.pause():
                    raise
            else:
                return

    def _blob_engine(self) -> PostgresBlobs:
        return PostgresBlobs(self._pg)

    def _after_purge(self) -> None:
        self._pg.vacuum_records()


def open_postgres(url: str) -> PostgresStore:
    """The store at a `postgresql://` (or `postgres://`) URL; `pool_size` and `retry_for` are read
    from its query string, everything else goes to libpq."""
    parts = urllib.parse.urlsplit(url)
    pairs = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in pairs if k in OPTIONS}
    rest = urllib.parse.urlencode(
        [(k, v) for k, v in pairs if k not in OPTIONS], quote_via=urllib.parse.quote
    )
    conninfo = urllib.parse.urlunsplit(parts._replace(query=rest))
    text = ours.get("pool_size", "8")
    pool_size = int(text) if text.isascii() and text.isdigit() and len(text) < 8 else -1
    if not 1 <= pool_size <= POOL_MAX:
        msg = f"{public_url(url)}: pool_size={text[:20]!r} must be a whole number from 1 to {POOL_MAX}"
        raise InvalidStoreUrlError(msg)
    given = ours.get("retry_for", str(RETRY_FOR))
    try:
        seconds: object = float(given)
    except ValueError:
        seconds = given
    retry_for = check_seconds(seconds, what="retry_for", error=InvalidStoreUrlError)
    return PostgresStore(conninfo, pool_size=pool_size, retry_for=retry_for)
