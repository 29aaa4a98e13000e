"""The engine-neutral half of a database store: journals and catalog over SQL transactions.

An engine (SQLite, PostgreSQL) supplies `Engine.transaction()` and a `Transaction` of a dozen small
statements; everything that decides (planning and sealing with the journal's `Ledger` and rules, the
head compare in the same transaction as the insert, recognising a retried batch (R7), feed positions,
the catalog, hiding and purging) lives here once, so an engine is a thin adapter.

Record bytes are stored verbatim (the sealed canonical line, never re-encoded) and proved again on
every read: each line's digest must cover its bytes and chain to the one before.

Tables an engine keeps (names and types are the engine's own):
    journals(journal_id PK, role, metadata JSON, created, created_at, hidden, purged)
        a projection of the catalog journal, kept in the same transactions, for listing by SQL
    records(journal_id, seq, position UNIQUE, digest, line; PK (journal_id, seq))
    whatever the engine needs so that a feed position is never reused, even after a purge
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from types import TracebackType
from typing import Any, NamedTuple, Protocol, Self

import msgspec

from waybook.codecs.wire import decode_record, line_digest, seal
from waybook.journal.errors import BrokenChainError, IntegrityError, JournalClosedError
from waybook.journal.head import GENESIS, GENESIS_DIGEST, AppendResult, Head
from waybook.journal.ledger import Ledger, Plan, prove_lines
from waybook.journal.records import Header, NewRecord, Record
from waybook.stores.base import check_metadata, first_line, store_clock, store_ids
from waybook.stores.catalog import (
    CREATED,
    HIDDEN,
    PURGED,
    catalog_entry,
    check_journal_id,
    check_limit,
    check_reason,
    check_role,
    leaf_of,
    parse_cursor,
    purge_data,
    receipt_of,
)
from waybook.stores.errors import JournalExistsError, JournalPurgedError, UnknownJournalError
from waybook.stores.protocol import CATALOG_ID
from waybook.stores.values import FeedEntry, JournalInfo, JournalPage, PurgeReceipt

PAGE = 1024
"""Rows fetched per read transaction when streaming a journal or the feed."""


class JournalRow(NamedTuple):
    """A journal's row in the `journals` table."""

    journal_id: str
    role: str
    metadata: dict[str, Any]
    created: int
    created_at: str
    hidden: bool
    purged: int | None
    """The catalog seq of its purge receipt, or None."""

    def info(self) -> JournalInfo:
        return JournalInfo(
            journal_id=self.journal_id,
            role=self.role,
            metadata=self.metadata,
            created=self.created,
            created_at=self.created_at,
            hidden=self.hidden,
        )


class FeedRow(NamedTuple):
    position: int
    journal_id: str
    seq: int
    line: bytes


class Transaction(Protocol):
    """The statements an engine runs inside one transaction. Writes happen only in write transactions,
    which the engine serialises at least per journal (SQLite: BEGIN IMMEDIATE)."""

    def journal(self, journal_id: str, *, lock: bool = False) -> JournalRow | None:
        """The journal's row (None if it never existed). `lock`: hold it until the transaction ends, so
        that the head read next is the one the insert follows (PostgreSQL: SELECT ... FOR UPDATE)."""
        ...

    def head(self, journal_id: str) -> Head:
        """(seq, digest) of the journal's last record; GENESIS when it has none."""
        ...

    def lines(self, journal_id: str, after: int, limit: int) -> builtins.list[bytes]:
        """The stored lines of records seq > `after`, in seq order, at most `limit`."""
        ...

    def allocate(self, count: int) -> int:
        """Reserve `count` feed positions; returns the first. Committed with the transaction, so
        positions are handed out in commit order and never reused."""
        ...

    def insert(self, journal_id: str, rows: Sequence[tuple[int, int, str, bytes]]) -> None:
        """Insert records `(seq, position, digest, line)`."""
        ...

    def add_journal(self, row: JournalRow) -> None: ...

    def set_hidden(self, journal_id: str) -> None: ...

    def set_purged(self, journal_id: str, receipt_seq: int) -> None:
        """Mark the journal purged and delete every record of it."""
        ...

    def journals(
        self, *, role: str | None, hidden: bool, after: int, limit: int
    ) -> builtins.list[JournalRow]:
        """Unpurged journals created after `after`, in creation order, at most `limit`."""
        ...

    def feed(self, after: int, limit: int) -> builtins.list[FeedRow]:
        """Records with position > `after` in position order, at most `limit`."""
        ...

    def feed_head(self) -> int:
        """The last position handed out and committed (0 when none)."""
        ...

    def after_commit(self, action: Callable[[], None]) -> None:
        """Run `action` once the transaction has committed (never if it rolls back)."""
        ...


class Engine(Protocol):
    """A database holding one store."""

    @property
    def url(self) -> str: ...

    def transaction(self, *, write: bool) -> AbstractContextManager[Transaction]:
        """A transaction, committed when the block ends normally and rolled back otherwise. Errors the
        engine cannot avoid (busy, I/O) surface as StorageError subclasses (StoreBusyError)."""
        ...

    def committed(self) -> None:
        """Called after this process commits records, to wake its waiting feed readers."""
        ...

    def wait(self, after: int, timeout: float | None, head: Callable[[], int]) -> bool:
        """Block until `head()` > `after` or `timeout` passes; the engine decides how to sleep."""
        ...

    def close(self) -> None: ...


# --- journals ---------------------------------------------------------------------------------------


class DatabaseJournal:
    """One journal of a database store. Thread-safe; other processes' commits are seen on each call.

    Cost: append is one write transaction (lock the journal row, read the head, insert); read and
    read_lines stream PAGE records per read transaction and prove each page's chain.
    """

    def __init__(self, engine: Engine, journal_id: str) -> None:
        self._engine = engine
        self._id = journal_id
        self._name = f"{engine.url} {journal_id}"
        self._ledger = Ledger.empty(self._name)
        self._mutex = threading.Lock()
        self._closed = False

    @property
    def name(self) -> str:
        return self._name

    @property
    def journal_id(self) -> str:
        return self._id

    def head(self) -> Head:
        self._check_open()
        with self._mutex, self._engine.transaction(write=False) as tx:
            self._sync(tx)
            return self._ledger.head

    def position(self) -> tuple[Head, str | None]:
        """The head and the leaf after it (the parent of the next node), read together."""
        self._check_open()
        with self._mutex, self._engine.transaction(write=False) as tx:
            self._sync(tx)
            return self._ledger.head, self._ledger.rules.leaf

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        self._check_open()
        with self._mutex:
            with self._engine.transaction(write=True) as tx:
                outcome = self.append_in(tx, records, expected)
            if isinstance(outcome, AppendResult):
                return outcome
            self._ledger.commit(outcome)  # only once the transaction has committed
        self._engine.committed()
        return outcome.result

    def append_in(self, tx: Transaction, records: Sequence[NewRecord], expected: Head) -> Plan | AppendResult:
        """Decide and insert a batch inside `tx` (the journal row locked, the head compared in the same
        transaction). Returns the Plan to `commit_plan` after the transaction commits, or the original
        result of an exact retry. Raises the journal's errors having inserted nothing."""
        self._sync(tx, lock=True)
        plan = self._ledger.plan(records, expected, lambda after, limit: self._committed(tx, after, limit))
        if isinstance(plan, AppendResult):
            return plan
        first = tx.allocate(len(plan.lines))
        rows = [
            (record.seq, first + i, record.digest, line)
            for i, (record, line) in enumerate(zip(plan.result.records, plan.lines, strict=True))
        ]
        tx.insert(self._id, rows)
        return plan

    def commit_plan(self, plan: Plan, tx: Transaction) -> None:
        """Take in a batch `append_in` inserted, once `tx` commits (nothing if it rolls back)."""

        def take() -> None:
            with self._mutex:
                self._ledger.commit(plan)

        tx.after_commit(take)

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        self._check_open()
        return (record for record, _ in self._proved(after, limit))

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        self._check_open()
        return (line for _, line in self._proved(after, limit))

    def flush(self) -> None:
        self._check_open()  # every commit is already as durable as the engine's policy makes it

    def close(self) -> None:
        self._closed = True

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"DatabaseJournal({self._name!r}, head={self._ledger.head})"

    def check_invariants(self) -> None:
        """Assert the stored chain proves and ends at this object's head (stress tests call this)."""
        with self._mutex:
            records = [record for record, _ in self._proved(0, None)]
            assert len(records) == self._ledger.rules.count == self._ledger.head.seq
            assert self._ledger.head == (Head.of(records[-1]) if records else GENESIS)
            assert len(self._ledger.rules.ids) == len(records)

    # --- internals ----------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self._name}: the journal is closed; open it again from its store"
            raise JournalClosedError(msg)

    def _sync(self, tx: Transaction, *, lock: bool = False) -> None:
        """Refuse a purged or vanished journal; take in records other writers committed, proving them."""
        row = tx.journal(self._id, lock=lock)
        if row is None:
            raise UnknownJournalError(store=self._engine.url, journal_id=self._id)
        if row.purged is not None:
            raise JournalPurgedError(store=self._engine.url, journal_id=self._id)
        head = tx.head(self._id)
        known = self._ledger.head
        while head.seq > known.seq:
            lines = tx.lines(self._id, known.seq, PAGE)
            records, error = prove_lines(lines, known, self._name)
            self._ledger.advance(records)
            if error is not None:
                raise error
            known = self._ledger.head
        if head != known:
            reason = f"the database's head is {head} but this journal committed through {known}"
            raise BrokenChainError(journal=self._name, seq=head.seq, reason=reason)

    def _committed(self, tx: Transaction, after: int, limit: int) -> list[Record]:
        return [decode_record(line, where=self._name) for line in tx.lines(self._id, after, limit)]

    def _proved(self, after: int, limit: int | None) -> Iterator[tuple[Record, bytes]]:
        """Committed records after `after` with their lines, each page proved against the one before.

        The first record's own digest is checked against its bytes and its `prev` against the stored
        digest of the record before it."""
        after = max(after, 0)
        remaining = limit
        start: Head | None = None
        while remaining is None or remaining > 0:
            size = PAGE if remaining is None else min(PAGE, remaining)
            with self._engine.transaction(write=False) as tx:
                if start is None:
                    row = tx.journal(self._id)
                    if row is None:
                        raise UnknownJournalError(store=self._engine.url, journal_id=self._id)
                    if row.purged is not None:
                        raise JournalPurgedError(store=self._engine.url, journal_id=self._id)
                    start = self._anchor(tx, after)
                lines = tx.lines(self._id, after, size)
            records, error = prove_lines(lines, start, self._name)
            yield from zip(records, lines, strict=False)
            if error is not None:
                raise error
            if len(lines) < size:
                return
            after += len(lines)
            start = Head.of(records[-1])
            if remaining is not None:
                remaining -= len(lines)

    def _anchor(self, tx: Transaction, seq: int) -> Head:
        """The head at `seq`, from that record's own bytes (proved to cover them)."""
        if seq == 0:
            return GENESIS
        lines = tx.lines(self._id, seq - 1, 1)
        if not lines:
            return Head(seq, GENESIS_DIGEST)  # beyond the end: nothing will be read
        digest = line_digest(lines[0])
        if digest is None:
            raise BrokenChainError(journal=self._name, seq=seq, reason="its digest does not cover its bytes")
        return Head(seq, digest)


# --- the store --------------------------------------------------------------------------------------


class DatabaseStore:
    """A JournalStore over an Engine: every journal, the catalog and the feed in one database.

    create, hide and purge are each one transaction that also appends to the catalog journal, so a
    journal exists exactly when its catalog entry does, and a purge's receipt and erasure commit
    together.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        clock: Callable[[], str] = store_clock,
        ids: Callable[[], str] = store_ids,
    ) -> None:
        self._engine = engine
        self._clock = clock
        self._ids = ids
        self._catalog = DatabaseJournal(engine, CATALOG_ID)
        self._catalog_mutex = threading.Lock()
        """Held across each catalog-writing transaction and the catalog ledger's update after it."""
        self._closed = False
        self._set_up_catalog()

    @property
    def url(self) -> str:
        return self._engine.url

    @property
    def engine(self) -> Engine:
        return self._engine

    def create(
        self,
        journal_id: str,
        *,
        role: str = "session",
        metadata: Mapping[str, Any] | None = None,
        header: bool = True,
    ) -> DatabaseJournal:
        check_journal_id(journal_id)
        check_role(role)
        meta = check_metadata(metadata)
        line = first_line(journal_id, role, meta, record_id=self._ids(), at=self._clock()) if header else None
        with self._catalog_mutex, self._engine.transaction(write=True) as tx:
            existing = tx.journal(journal_id, lock=True)
            if existing is not None:
                error = JournalPurgedError if existing.purged is not None else JournalExistsError
                raise error(store=self.url, journal_id=journal_id)
            created = {"journal": journal_id, "role": role, "metadata": meta}
            entry, plan = self._catalog_append(tx, CREATED, created)
            tx.add_journal(JournalRow(journal_id, role, meta, entry.seq, entry.at, False, None))
            if line is not None:
                digest = line_digest(line)
                assert digest is not None
                tx.insert(journal_id, [(1, tx.allocate(1), digest, line)])
            self._catalog.commit_plan(plan, tx)
        self._engine.committed()
        journal = DatabaseJournal(self._engine, journal_id)
        journal.head()  # take in the header
        return journal

    def open(self, journal_id: str) -> DatabaseJournal:
        check_journal_id(journal_id)
        journal = DatabaseJournal(self._engine, journal_id)
        journal.head()  # refuses unknown and purged journals, and proves the chain
        return journal

    def exists(self, journal_id: str) -> bool:
        check_journal_id(journal_id)
        with self._engine.transaction(write=False) as tx:
            row = tx.journal(journal_id)
        return row is not None and row.purged is None

    def list(
        self,
        *,
        role: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        hidden: bool = False,
        after: str | None = None,
        limit: int = 100,
    ) -> JournalPage:
        start = parse_cursor(after)
        limit = check_limit(limit)
        wanted = msgspec.json.encode(dict(metadata or {}), order="sorted")
        wanted_items = msgspec.json.decode(wanted)
        chosen: builtins.list[JournalInfo] = []
        while True:
            with self._engine.transaction(write=False) as tx:
                rows = tx.journals(role=role, hidden=hidden, after=start, limit=PAGE)
            for row in rows:
                if all(k in row.metadata and row.metadata[k] == v for k, v in wanted_items.items()):
                    if len(chosen) == limit:
                        return JournalPage(tuple(chosen), str(chosen[-1].created))
                    chosen.append(row.info())
            if len(rows) < PAGE:
                return JournalPage(tuple(chosen), None)
            start = rows[-1].created

    def feed(self, after: int = 0, *, limit: int | None = None) -> Iterator[FeedEntry]:
        self._check_open()
        remaining = limit
        while remaining is None or remaining > 0:
            size = PAGE if remaining is None else min(PAGE, remaining)
            with self._engine.transaction(write=False) as tx:
                rows = tx.feed(after, size)
            for row in rows:
                yield self._entry(row)
            if len(rows) < size:
                return
            after = rows[-1].position
            if remaining is not None:
                remaining -= len(rows)

    def feed_head(self) -> int:
        self._check_open()
        with self._engine.transaction(write=False) as tx:
            return tx.feed_head()

    def wait(self, after: int, timeout: float | None = None) -> bool:
        self._check_open()
        return self._engine.wait(after, timeout, self.feed_head)

    def hide(self, journal_id: str, *, reason: str, actor: str | None = None) -> Record:
        check_journal_id(journal_id)
        check_reason(reason)
        with self._catalog_mutex, self._engine.transaction(write=True) as tx:
            self._live(tx, journal_id)
            data: dict[str, Any] = {"journal": journal_id, "reason": reason}
            if actor is not None:
                data["actor"] = actor
            entry, plan = self._catalog_append(tx, HIDDEN, data)
            tx.set_hidden(journal_id)
            self._catalog.commit_plan(plan, tx)
        self._engine.committed()
        return entry

    def purge(self, journal_id: str, *, reason: str, actor: str | None = None) -> PurgeReceipt:
        check_journal_id(journal_id)
        check_reason(reason)
        with self._catalog_mutex, self._engine.transaction(write=True) as tx:
            row = tx.journal(journal_id, lock=True)
            if row is None:
                raise UnknownJournalError(store=self.url, journal_id=journal_id)
            if row.purged is not None:
                (line,) = tx.lines(CATALOG_ID, row.purged - 1, 1)
                return receipt_of(self.url, decode_record(line))
            head = tx.head(journal_id)
            data = purge_data(journal_id, row.role, head, reason, actor)
            entry, plan = self._catalog_append(tx, PURGED, data)
            tx.set_purged(journal_id, entry.seq)
            self._catalog.commit_plan(plan, tx)
        self._engine.committed()
        self._after_purge()
        return receipt_of(self.url, entry)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._engine.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    # --- internals ----------------------------------------------------------------------------------

    def _after_purge(self) -> None:
        """Hook: make the erased bytes unrecoverable where the engine keeps old copies (SQLite's WAL)."""

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self.url}: the store is closed; open it again with open_store(url)"
            raise JournalClosedError(msg)

    def _set_up_catalog(self) -> None:
        with self._engine.transaction(write=True) as tx:
            if tx.journal(CATALOG_ID, lock=True) is not None:
                return
            at = self._clock()
            tx.add_journal(JournalRow(CATALOG_ID, "catalog", {}, 0, at, True, None))
            body = Header(journal=CATALOG_ID, creator="waybook", role="catalog")
            _, line = seal(1, NewRecord(id=self._ids(), at=at, body=body), GENESIS_DIGEST)
            digest = line_digest(line)
            assert digest is not None
            tx.insert(CATALOG_ID, [(1, tx.allocate(1), digest, line)])
        self._engine.committed()

    def _live(self, tx: Transaction, journal_id: str) -> JournalRow:
        row = tx.journal(journal_id, lock=True)
        if row is None:
            raise UnknownJournalError(store=self.url, journal_id=journal_id)
        if row.purged is not None:
            raise JournalPurgedError(store=self.url, journal_id=journal_id)
        return row

    def _catalog_append(self, tx: Transaction, kind: str, data: dict[str, Any]) -> tuple[Record, Plan]:
        catalog = self._catalog
        catalog._sync(tx, lock=True)
        head = catalog._ledger.head
        last = catalog._committed(tx, head.seq - 1, 1)[0] if head.seq else None
        new = catalog_entry(kind, data, leaf_of(last), record_id=self._ids(), at=self._clock())
        outcome = catalog.append_in(tx, [new], head)
        assert not isinstance(outcome, AppendResult)
        return outcome.result.records[0], outcome

    def _entry(self, row: FeedRow) -> FeedEntry:
        where = f"{self.url} {row.journal_id} seq {row.seq}"
        record = decode_record(row.line, where=where)
        if record.seq != row.seq or line_digest(row.line) != record.digest:
            msg = f"{where}: the stored bytes are not the record committed there"
            raise IntegrityError(msg)
        return FeedEntry(row.position, row.journal_id, row.seq, record, row.line)
