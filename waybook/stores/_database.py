"""`DatabaseStore`: the engine-neutral database store, over any `Engine` (engine.py).

Everything that decides lives here and in database_journal.py, once, so an engine (SQLite, PostgreSQL)
is a thin adapter: journals and their compare-and-append, feed positions, the catalog journal, listing,
hiding and purging. create, hide and purge are each one transaction that also appends to the catalog, so
a journal exists exactly when its catalog entry does, and a purge's receipt and erasure commit together.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from waybook.codecs import decode_record, line_digest, seal
from waybook.journal import ClosedOnExit, Plan, SessionJournal, VerifyReport, verify
from waybook.model import (
    GENESIS_DIGEST,
    AppendResult,
    Head,
    Header,
    IntegrityError,
    JournalClosedError,
    JournalError,
    NewRecord,
    Record,
)
from waybook.stores._blobs import Blobs
from waybook.stores._catalog import (
    CREATED,
    HIDDEN,
    POSITION_MAX,
    PURGED,
    catalog_entry,
    check_index,
    check_journal_id,
    check_limit,
    check_position,
    check_reason,
    check_timeout,
    leaf_of,
    parse_cursor,
    purge_data,
    receipt_of,
)
from waybook.stores._creation import checked_creation, store_clock, store_ids
from waybook.stores._database_journal import DatabaseJournal
from waybook.stores._engine import PAGE, Engine, FeedRow, JournalRow, Transaction
from waybook.stores._errors import JournalExistsError, JournalPurgedError, UnknownJournalError
from waybook.stores._holding import Committed, checked_report
from waybook.stores._page import read_page
from waybook.stores._protocol import CATALOG_ID
from waybook.stores._read_only import ReadOnlyJournal, catalog_refusal, reader_refusal
from waybook.stores._subscribe import Filter, Subscription
from waybook.stores._values import FeedEntry, JournalInfo, JournalPage, PurgeReceipt

__all__ = ["DatabaseJournal", "DatabaseStore", "Engine", "FeedRow", "JournalRow", "Transaction"]


class DatabaseStore(ClosedOnExit):
    """A JournalStore over an Engine: every journal, the catalog and the feed in one database.

    create, hide and purge are each one transaction that also appends to the catalog journal, so a
    journal exists exactly when its catalog entry does, and a purge's receipt and erasure commit
    together.
    """

    journal_type: type[DatabaseJournal] = DatabaseJournal
    """What `create` and `open` return; an engine's store may return a subclass (PostgreSQL retries)."""

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
        self._blobs: Blobs | None = None
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
        meta, line = checked_creation(
            journal_id, role, metadata, header=header, ids=self._ids, clock=self._clock
        )
        return self._create(journal_id, role, meta, line)

    def _create(
        self, journal_id: str, role: str, meta: dict[str, Any], line: bytes | None
    ) -> DatabaseJournal:
        """Create a journal `create` checked, holding its header `line` (or empty), in one transaction with
        its catalog entry. An engine's store may override it with a faster path (PostgreSQL)."""
        with self._catalog_mutex, self._engine.transaction(write=True) as tx:
            self._lock_catalog(tx)
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
        journal = self.journal_type(self._engine, journal_id)
        journal.head()  # take in the header
        return journal

    def open(self, journal_id: str) -> DatabaseJournal:
        check_journal_id(journal_id)
        journal = self.journal_type(self._engine, journal_id)
        journal.head()  # refuses unknown and purged journals, and proves the chain
        return journal

    def open_catalog(self) -> SessionJournal:
        """The store's catalog journal (creations, hidings, purge and collection receipts), read-only, to
        prove it as any journal is proven (`waybook verify --store URL`). Its lines are proven as they
        are read, not when it is opened; `append` on it raises ReservedJournalError."""
        return ReadOnlyJournal(self.journal_type(self._engine, CATALOG_ID))

    def open_proven(self, journal_id: str, *, keep: bool) -> tuple[SessionJournal, VerifyReport]:
        """The journal (or the catalog) read-only and `verify`'s report on its stored lines, which are
        not proved on the way (the journal's own reads raise at damage; the report says where it is).
        Reading the journal proves its lines again (`keep` changes nothing: a database is read again)."""
        if journal_id != CATALOG_ID:
            check_journal_id(journal_id)
        with self._engine.transaction(write=False) as tx:
            if journal_id != CATALOG_ID:
                self._live(tx, journal_id, lock=False)
            committed = tx.head(journal_id)
        stored = self.journal_type(self._engine, journal_id)
        return _proven(stored, committed, catalog_refusal if journal_id == CATALOG_ID else reader_refusal)

    def open_page(self, journal_ids: Sequence[str]) -> Iterator[tuple[str, SessionJournal | JournalError]]:
        """Each of `journal_ids`, in order, opened read-only as `open` opens it, or the error its open
        raises: the page read together (waybook.stores._page: two statements for a page that fits)."""
        for journal_id, held in read_page(self._engine, journal_ids):
            try:
                if isinstance(held, JournalError):
                    raise held
                journal = self.open(journal_id) if held is None else DatabaseJournal(held, journal_id)
                journal.head()  # refuses unknown and purged journals, and proves the chain, as `open`
            except JournalError as exc:
                yield journal_id, exc
                continue
            yield journal_id, ReadOnlyJournal(journal, refusal=reader_refusal)

    def open_proven_page(
        self, journal_ids: Sequence[str]
    ) -> Iterator[tuple[str, tuple[SessionJournal, VerifyReport] | JournalError]]:
        """Each of `journal_ids`, in order, as `open_proven` gives it (the journal and `verify`'s report
        on its stored lines), or the error it raises: the page read together, as `open_page` reads it."""
        for journal_id, held in read_page(self._engine, journal_ids):
            try:
                if isinstance(held, JournalError):
                    raise held
                if held is None:
                    proven = self.open_proven(journal_id, keep=True)
                else:
                    with held.transaction(write=False) as tx:
                        self._live(tx, journal_id, lock=False)
                        committed = tx.head(journal_id)
                    proven = _proven(DatabaseJournal(held, journal_id), committed, reader_refusal)
            except JournalError as exc:
                yield journal_id, exc
                continue
            yield journal_id, proven

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
        size = PAGE if wanted_items else min(PAGE, limit + 1)  # unfiltered: one more tells a next page
        while True:
            with self._engine.transaction(write=False) as tx:
                rows = tx.journals(role=role, hidden=hidden, after=start, limit=size)
            for row in rows:
                if all(k in row.metadata and row.metadata[k] == v for k, v in wanted_items.items()):
                    if len(chosen) == limit:
                        return JournalPage(tuple(chosen), str(chosen[-1].created))
                    chosen.append(row.info())
            if len(rows) < size:
                return JournalPage(tuple(chosen), None)
            start = rows[-1].created

    def count(self, *, hidden: bool = False) -> int:
        """How many journals `list(hidden=hidden)` pages through (CountingStore): one query."""
        self._check_open()
        with self._engine.transaction(write=False) as tx:
            return tx.count_journals(hidden=hidden)

    def cursor_at(self, index: int, *, hidden: bool = False) -> str | None:
        """The cursor from which `list(hidden=hidden)` starts at its `index`-th journal (CountingStore):
        one query, without reading the journals before it."""
        check_index(index)
        self._check_open()
        if index == 0:
            return None
        with self._engine.transaction(write=False) as tx:
            created = tx.created_at_index(index - 1, hidden=hidden)
        return str(POSITION_MAX if created is None else created)

    def feed(self, after: int = 0, *, limit: int | None = None) -> Iterator[FeedEntry]:
        check_position(after, limit)
        self._check_open()
        return self._entries(after, limit)

    def _entries(self, after: int, limit: int | None) -> Iterator[FeedEntry]:
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

    def subscribe(self, after: int = 0, *, filter: Filter = None) -> Subscription:
        """Deliveries of the feed after `after`, with acknowledgements (waybook.stores._subscribe)."""
        return Subscription(self, after, filter=filter)

    def feed_head(self) -> int:
        self._check_open()
        with self._engine.transaction(write=False) as tx:
            return tx.feed_head()

    def wait(self, after: int, timeout: float | None = None) -> bool:
        check_position(after)
        self._check_open()
        return self._engine.wait(after, check_timeout(timeout), self.feed_head)

    @property
    def blobs(self) -> Blobs:
        """The store's blobs, created on first use."""
        with self._catalog_mutex:
            if self._blobs is None:
                self._blobs = Blobs(self._blob_engine(), self)
            return self._blobs

    def _blob_engine(self) -> Any:
        msg = f"{self.url}: this store keeps no blobs yet"
        raise NotImplementedError(msg)

    def note_in_catalog(self, kind: str, data: dict[str, Any]) -> Record:
        """Append a store-level entry (a blob collection receipt) to the catalog journal."""
        self._check_open()
        with self._catalog_mutex, self._engine.transaction(write=True) as tx:
            entry, plan = self._catalog_append(tx, kind, data)
            self._catalog.commit_plan(plan, tx)
        self._engine.committed()
        return entry

    def hide(self, journal_id: str, *, reason: str, actor: str | None = None) -> Record:
        check_journal_id(journal_id)
        check_reason(reason)
        with self._catalog_mutex, self._engine.transaction(write=True) as tx:
            self._lock_catalog(tx)
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
            self._lock_catalog(tx)
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
        with self._engine.transaction(write=False) as tx:  # a store that has one opens read-only too
            if tx.journal(CATALOG_ID, lock=False) is not None:
                return
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

    def _live(self, tx: Transaction, journal_id: str, *, lock: bool = True) -> JournalRow:
        row = tx.journal(journal_id, lock=lock)
        if row is None:
            raise UnknownJournalError(store=self.url, journal_id=journal_id)
        if row.purged is not None:
            raise JournalPurgedError(store=self.url, journal_id=journal_id)
        return row

    def _lock_catalog(self, tx: Transaction) -> None:
        """Lock the catalog's row first in every catalog-writing transaction, so creations, hidings and
        purges are serialised store-wide before anything is checked (two creators of one id cannot
        both see it free where the engine locks rows, as PostgreSQL does)."""
        self._catalog._sync(tx, lock=True)

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


def _proven(
    stored: DatabaseJournal, committed: Head, refusal: Callable[[str], JournalError]
) -> tuple[SessionJournal, VerifyReport]:
    """`stored` read-only and `verify`'s report on its stored lines, checked against its committed head."""
    journal = ReadOnlyJournal(stored, refusal=refusal)
    try:
        report = verify(_AsStored(stored))
        held = Committed(committed.seq, committed.digest)
        return journal, checked_report(report, held, lambda seq: _stored_digest(stored, seq))
    except BaseException:
        journal.close()
        raise


class _AsStored(ReadOnlyJournal):
    """A database journal as `verify` reads it: its stored lines, not proved on the way."""

    def __init__(self, journal: DatabaseJournal) -> None:
        super().__init__(journal, on_close=lambda: None, refusal=reader_refusal)
        self._stored = journal

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        return self._stored.stored_lines(after, limit)


def _stored_digest(journal: DatabaseJournal, seq: int) -> str | None:
    """The digest of record `seq` as its line is stored (None if there is no such line)."""
    line = next(iter(journal.stored_lines(seq - 1, 1)), None)
    return None if line is None else line_digest(line)
