"""`CatalogStore`: what the memory and directory stores share.

Their journals are separate adapters (an `InMemoryJournal`, a `JsonlJournal` file); a catalog journal
lists them and a feed of runs (runs.py) orders their records. A subclass supplies storage: where raw
journals live, the store-wide lock, and where the runs are kept. The helpers every store's `create`
shares live in `_creation` (re-exported here for the stores that import them from this module).
"""

from __future__ import annotations

import abc
import builtins
import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Protocol, runtime_checkable

from waybook.codecs import decode_record, line_digest
from waybook.journal import ClosedOnExit, PositionedJournal, SessionJournal
from waybook.model import GENESIS, Head, Header, IntegrityError, JournalClosedError, NewRecord, Record
from waybook.stores._blobs import BlobEngine, Blobs
from waybook.stores._catalog import (
    CREATED,
    HIDDEN,
    PURGED,
    Catalog,
    catalog_entry,
    check_index,
    check_journal_id,
    check_position,
    check_reason,
    check_timeout,
    purge_data,
)
from waybook.stores._creation import (
    check_metadata,
    checked_creation,
    first_line,
    store_clock,
    store_ids,
)
from waybook.stores._errors import (
    JournalExistsError,
    JournalPurgedError,
    LostRecordsError,
    UnknownJournalError,
)
from waybook.stores._fed import FedJournal
from waybook.stores._holding import Committed, missing
from waybook.stores._protocol import CATALOG_ID
from waybook.stores._read_only import ReadOnlyJournal
from waybook.stores._runs import Run, Runs
from waybook.stores._subscribe import Filter, Subscription
from waybook.stores._values import FeedEntry, JournalInfo, JournalPage, PurgeReceipt

__all__ = [  # the creation helpers stay importable from here
    "FEED_WINDOW_RUNS",
    "READER_CACHE",
    "CatalogStore",
    "check_metadata",
    "checked_creation",
    "first_line",
    "store_clock",
    "store_ids",
]

READER_CACHE = 256
"""How many journals the feed keeps open for reading at once (least recently used are closed)."""
FEED_WINDOW_RUNS = 4096
"""Runs read together by `feed`: each journal with records among them is read once per window."""


def _first(runs: Iterator[tuple[int, Run]], limit: int | None) -> list[tuple[int, Run]]:
    """`runs` cut after `limit` records, taken from the iterator only as far as the cut: a page of the
    feed costs its own runs, not every run after it."""
    if limit is None:
        return list(runs)
    kept: list[tuple[int, Run]] = []
    left = max(limit, 0)
    for start, run in runs:
        if left <= 0:
            break
        size = min(run.last - run.first + 1, left)
        kept.append((start, Run(run.journal_id, run.first, run.first + size - 1)))
        left -= size
    return kept


class CatalogStore(ClosedOnExit, abc.ABC):
    """A JournalStore over separate journal adapters. Subclasses implement the abstract hooks (`_raw_*`,
    `_store_lock`, `_feed_lock`, `_feed_sync`, `_feed_write`, `_blob_engine`); everything else (the
    rules of create, open, list, hide, purge and the feed) lives here once.

    Lock order (always taken in this order, never the reverse): the store lock (`_store_lock`: this
    process's and, for a directory, other processes' catalog writers), then `_runs_mutex`, then the feed
    lock (`_feed_lock`), then the short mutexes (`_cat_mutex`, `_readers_mutex`, `_fed_signal`), under
    which only a journal adapter's own locks are taken (reading the catalog, closing a cached reader).
    """

    poll_interval: float | None = None
    """Longest sleep between checks for another process's commits in `wait` (None: this process only)."""

    def __init__(
        self,
        url: str,
        *,
        clock: Callable[[], str] = store_clock,
        ids: Callable[[], str] = store_ids,
    ) -> None:
        self._url = url
        self._clock = clock
        self._ids = ids
        self._cat = Catalog(url)
        self._cat_mutex = threading.Lock()
        """Guards `_cat`: folding catalog records in, from any thread."""
        self._runs = Runs()
        self._runs_mutex = threading.RLock()
        self._fed_signal = threading.Condition()
        self._readers: OrderedDict[str, SessionJournal] = OrderedDict()
        self._readers_mutex = threading.Lock()
        self._closed = False
        self._catalog_raw: SessionJournal | None = None
        self._catalog_fed: FedJournal | None = None
        self._blobs: Blobs | None = None
        self._catalog_lost: LostRecordsError | None = None
        """Set when the catalog holds less than the store committed to it: catalog writes are refused."""

    # --- hooks ------------------------------------------------------------------------------------

    @abc.abstractmethod
    def _store_lock(self) -> contextlib.AbstractContextManager[None]:
        """The store-wide lock of catalog writers (create, hide, purge, adopting an orphan)."""

    @abc.abstractmethod
    def _raw_exists(self, journal_id: str) -> bool:
        """Whether the journal's storage exists (catalogued or not)."""

    @abc.abstractmethod
    def _raw_create(self, journal_id: str, line: bytes | None) -> bool:
        """Create the journal holding `line` (or empty); False if it already exists."""

    @abc.abstractmethod
    def _raw_open(self, journal_id: str, *, readonly: bool = False) -> PositionedJournal:
        """Open the journal's adapter; UnknownJournalError if it has no storage."""

    @abc.abstractmethod
    def _raw_erase(self, journal_id: str) -> None:
        """Erase the journal's bytes (a purge, after its receipt is durable)."""

    @abc.abstractmethod
    def _feed_lock(self) -> contextlib.AbstractContextManager[None]:
        """The lock of feed writers (taken after `_runs_mutex`)."""

    @abc.abstractmethod
    def _blob_engine(self) -> BlobEngine:
        """The engine under `blobs`, built on first use."""

    @abc.abstractmethod
    def _feed_sync(self) -> None:
        """Take in runs that other processes wrote (called with `_runs_mutex` held)."""

    @abc.abstractmethod
    def _feed_write(self, run: Run) -> None:
        """Persist `run` (called with the feed lock held); `Runs.add` follows."""

    # --- set-up -------------------------------------------------------------------------------------

    def _attach_catalog(self, catalog: PositionedJournal) -> None:
        """Adopt the catalog journal, writing its header if it is new."""
        self._catalog_raw = catalog
        self._catalog_fed = FedJournal(CATALOG_ID, catalog, self._fed, store=self._url)
        with self._store_lock():
            try:
                self._check_holds(CATALOG_ID, catalog)
            except LostRecordsError as lost:
                if catalog.head() == GENESIS:
                    raise  # an emptied catalog is lost: never started again as a new, empty store
                self._catalog_lost = lost  # read and verify it; write nothing after what it lost
            if catalog.head() == GENESIS:
                body = Header(journal=CATALOG_ID, creator="waybook", role="catalog")
                new = NewRecord(id=self._ids(), at=self._clock(), body=body)
                self._catalog_fed.append([new], expected=GENESIS)
            self._sync_catalog()
            self._fed(CATALOG_ID, catalog.head())

    # --- the JournalStore protocol ------------------------------------------------------------------

    @property
    def url(self) -> str:
        return self._url

    def create(
        self,
        journal_id: str,
        *,
        role: str = "session",
        metadata: Mapping[str, Any] | None = None,
        header: bool = True,
    ) -> SessionJournal:
        meta, line = checked_creation(
            journal_id, role, metadata, header=header, ids=self._ids, clock=self._clock
        )
        with self._store_lock():
            self._sync_catalog()
            self._refuse_taken(journal_id)
            if self._catalog_lost is not None:
                raise self._catalog_lost  # before any file is made
            if not self._raw_create(journal_id, line):
                self._adopt_orphan(journal_id)
                raise JournalExistsError(store=self._url, journal_id=journal_id)
            self._append_catalog(CREATED, {"journal": journal_id, "role": role, "metadata": meta})
        journal = FedJournal(journal_id, self._raw_open(journal_id), self._fed, store=self._url)
        if line is not None:
            self._fed(journal_id, Head(1, line_digest(line) or ""))
        return journal

    def open(self, journal_id: str) -> SessionJournal:
        """The journal, to read and append. A journal that holds less than the store committed to it
        (LostRecordsError) is refused: appending would write new records where committed ones were."""
        check_journal_id(journal_id)
        self._sync_catalog()
        if journal_id in self._cat.purged:
            raise JournalPurgedError(store=self._url, journal_id=journal_id)
        if journal_id not in self._cat.journals:
            if not self._raw_exists(journal_id):
                raise UnknownJournalError(store=self._url, journal_id=journal_id)
            with self._store_lock():
                self._adopt_orphan(journal_id)
        raw = self._opened(journal_id)
        self._fed(journal_id, raw.head())  # feeds what a crashed writer committed but never fed
        return FedJournal(journal_id, raw, self._fed, store=self._url)

    def _opened(self, journal_id: str, *, readonly: bool = False) -> PositionedJournal:
        """The catalogued journal's adapter, once it is shown to hold what the store committed to it;
        LostRecordsError (naming what is there instead) when it does not, or its storage is gone."""
        if not self._raw_exists(journal_id):
            raise self._lost(journal_id, self._raw_missing(journal_id))
        raw = self._raw_open(journal_id, readonly=readonly)
        try:
            self._check_holds(journal_id, raw)
        except BaseException:
            raw.close()
            raise
        return raw

    def committed(self, journal_id: str) -> Committed:
        """The head the store committed to `journal_id` (what its feed holds of it)."""
        with self._runs_mutex:
            self._feed_sync()
            return self._runs.committed(journal_id)

    def _check_holds(self, journal_id: str, raw: PositionedJournal) -> None:
        """LostRecordsError if `raw` holds less than the store committed to `journal_id`."""
        committed = self.committed(journal_id)
        if committed.seq == 0:
            return
        problem = missing(committed, raw.head(), lambda seq: stored_digest(raw, seq))
        if problem is not None:
            raise self._lost(journal_id, problem)

    def _lost(self, journal_id: str, found: str) -> LostRecordsError:
        committed = self.committed(journal_id)
        return LostRecordsError(store=self._url, journal_id=journal_id, committed=committed.head, found=found)

    def _raw_missing(self, journal_id: str) -> str:
        """What is where a catalogued journal's storage should be (hook: the directory store says)."""
        return "its storage is gone"

    def open_catalog(self) -> SessionJournal:
        """The store's catalog journal (creations, hidings, purge and collection receipts), read-only, to
        prove it as any journal is proven (`waybook verify --store URL`). `append` on it raises
        ReservedJournalError; closing it leaves the store's catalog open."""
        assert self._catalog_raw is not None
        return ReadOnlyJournal(self._catalog_raw, on_close=lambda: None)

    def _existing(self, journal_id: str) -> None:
        """Raise what `open` raises for a journal that is not the store's now (an invalid id, unknown,
        purged, lost), without opening, adopting or feeding anything."""
        check_journal_id(journal_id)
        self._sync_catalog()
        if journal_id in self._cat.purged:
            raise JournalPurgedError(store=self._url, journal_id=journal_id)
        if not self._raw_exists(journal_id):
            if journal_id in self._cat.journals:
                raise self._lost(journal_id, self._raw_missing(journal_id))
            raise UnknownJournalError(store=self._url, journal_id=journal_id)

    def exists(self, journal_id: str) -> bool:
        """Whether `journal_id` is a journal of the store (catalogued, or an orphan a crashed creator
        left), lost ones included: their id is taken."""
        check_journal_id(journal_id)
        self._sync_catalog()
        if journal_id in self._cat.purged:
            return False
        return journal_id in self._cat.journals or self._raw_exists(journal_id)

    def list(
        self,
        *,
        role: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        hidden: bool = False,
        after: str | None = None,
        limit: int = 100,
    ) -> JournalPage:
        self._sync_catalog()
        with self._cat_mutex:
            return self._cat.page(role=role, metadata=metadata, hidden=hidden, after=after, limit=limit)

    def count(self, *, hidden: bool = False) -> int:
        """How many journals `list(hidden=hidden)` pages through (CountingStore). O(1)."""
        self._sync_catalog()
        with self._cat_mutex:
            return self._cat.count(hidden=hidden)

    def cursor_at(self, index: int, *, hidden: bool = False) -> str | None:
        """The cursor from which `list(hidden=hidden)` starts at its `index`-th journal (CountingStore)."""
        check_index(index)
        self._sync_catalog()
        with self._cat_mutex:
            return self._cat.cursor_at(index, hidden=hidden)

    def hide(self, journal_id: str, *, reason: str, actor: str | None = None) -> Record:
        check_journal_id(journal_id)
        check_reason(reason)
        with self._store_lock():
            self._sync_catalog()
            self._known(journal_id)
            data: dict[str, Any] = {"journal": journal_id, "reason": reason}
            if actor is not None:
                data["actor"] = actor
            return self._append_catalog(HIDDEN, data)

    def purge(self, journal_id: str, *, reason: str, actor: str | None = None) -> PurgeReceipt:
        check_journal_id(journal_id)
        check_reason(reason)
        with self._store_lock():
            self._sync_catalog()
            receipt = self._cat.purged.get(journal_id)
            if receipt is None:
                info = self._known(journal_id)
                head = self.committed(journal_id).head  # a lost journal's purge names what was committed
                if self._raw_exists(journal_id):
                    try:
                        raw = self._raw_open(journal_id, readonly=True)
                    except IntegrityError:  # damaged bytes are purged all the same: the committed head
                        pass
                    else:
                        try:
                            head = max(head, raw.head(), key=lambda h: h.seq)
                        finally:
                            raw.close()
                self._append_catalog(PURGED, purge_data(journal_id, info.role, head, reason, actor))
                assert self._catalog_fed is not None
                self._catalog_fed.flush()  # the receipt is on disk before any byte is erased
                receipt = self._cat.purged[journal_id]
            self._drop_reader(journal_id)
            self._raw_erase(journal_id)  # after the receipt: an interrupted purge is finished by the next
            return receipt

    def feed(self, after: int = 0, *, limit: int | None = None) -> Iterator[FeedEntry]:
        check_position(after, limit)
        self._check_open()
        self._sync_runs()
        with self._runs_mutex:
            return self._entries(_first(self._runs.after(after), limit))

    def _entries(self, pending: builtins.list[tuple[int, Run]]) -> Iterator[FeedEntry]:
        for i in range(0, len(pending), FEED_WINDOW_RUNS):
            yield from self._read_window(pending[i : i + FEED_WINDOW_RUNS])

    def subscribe(self, after: int = 0, *, filter: Filter = None) -> Subscription:
        """Deliveries of the feed after `after`, with acknowledgements (waybook.stores._subscribe)."""
        return Subscription(self, after, filter=filter)

    def feed_head(self) -> int:
        self._check_open()
        self._sync_runs()
        return self._runs.head

    def wait(self, after: int, timeout: float | None = None) -> bool:
        check_position(after)
        timeout = check_timeout(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        pause = 0.005
        while True:
            if self.feed_head() > after:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            step = left
            if self.poll_interval is not None:
                step = pause if left is None else min(pause, left)
                pause = min(pause * 2, self.poll_interval)
            with self._fed_signal:
                if self._runs.head <= after:
                    self._fed_signal.wait(step)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with self._readers_mutex:
            readers, self._readers = list(self._readers.values()), OrderedDict()
        for reader in readers:
            reader.close()
        if self._catalog_raw is not None:
            self._catalog_raw.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._url!r})"

    # --- internals ----------------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self._url}: the store is closed; open it again with open_store(url)"
            raise JournalClosedError(msg)

    def _sync_catalog(self) -> None:
        self._check_open()
        assert self._catalog_raw is not None
        with self._cat_mutex:
            self._cat.apply(self._catalog_raw.read(after=self._cat.seq))

    def _refuse_taken(self, journal_id: str) -> None:
        if journal_id in self._cat.purged:
            raise JournalPurgedError(store=self._url, journal_id=journal_id)
        if journal_id in self._cat.journals:
            raise JournalExistsError(store=self._url, journal_id=journal_id)

    def _known(self, journal_id: str) -> JournalInfo:
        if journal_id in self._cat.purged:
            raise JournalPurgedError(store=self._url, journal_id=journal_id)
        info = self._cat.journals.get(journal_id)
        if info is None and self._raw_exists(journal_id):
            self._adopt_orphan(journal_id)
            info = self._cat.journals.get(journal_id)
        if info is None:
            raise UnknownJournalError(store=self._url, journal_id=journal_id)
        return info

    def _adopt_orphan(self, journal_id: str) -> None:
        """List a journal whose creator died between writing it and cataloguing it (store lock held)."""
        self._sync_catalog()
        if journal_id in self._cat.journals or journal_id in self._cat.purged:
            return
        raw = self._raw_open(journal_id, readonly=True)
        try:
            first = next(iter(raw.read(limit=1)), None)
        finally:
            raw.close()
        header = first.body if first is not None and isinstance(first.body, Header) else None
        role = header.role if header is not None else "session"
        meta = dict(header.metadata) if header is not None else {}
        self._append_catalog(CREATED, {"journal": journal_id, "role": role, "metadata": meta})

    @property
    def blobs(self) -> Blobs:
        """The store's blobs, created on first use."""
        with self._cat_mutex:
            if self._blobs is None:
                self._blobs = Blobs(self._blob_engine(), self)
            return self._blobs

    def note_in_catalog(self, kind: str, data: dict[str, Any]) -> Record:
        """Append a store-level entry (a blob collection receipt) to the catalog journal."""
        self._check_open()
        with self._store_lock():
            self._sync_catalog()
            return self._append_catalog(kind, data)

    def _append_catalog(self, kind: str, data: dict[str, Any]) -> Record:
        """Append one catalog entry (store lock held, catalog synced)."""
        return self._append_catalog_batch([(kind, data)])[0]

    def _append_catalog_batch(self, entries: builtins.list[tuple[str, dict[str, Any]]]) -> tuple[Record, ...]:
        """Append catalog entries as one batch, each extending the one before (store lock held, catalog
        synced): one write (and, by the store's durability, one fsync) for many journals created."""
        if self._catalog_lost is not None:
            raise self._catalog_lost
        assert self._catalog_fed is not None
        cat = self._cat
        expected = Head.of(cat.last) if cat.last is not None else GENESIS
        batch, leaf = [], cat.leaf
        for kind, data in entries:
            new = catalog_entry(kind, data, leaf, record_id=self._ids(), at=self._clock())
            batch.append(new)
            leaf = new.id
        result = self._catalog_fed.append(batch, expected=expected)
        with self._cat_mutex:
            cat.apply(result.records)
        return result.records

    def _fed(self, journal_id: str, head: Head) -> None:
        """Feed `journal_id` through `head` (a head it has committed), then wake waiting readers."""
        with self._runs_mutex:
            if self._runs.fed.get(journal_id, 0) >= head.seq:
                self._feed_sync()
                if self._runs.fed.get(journal_id, 0) >= head.seq:
                    return
            with self._feed_lock():
                self._feed_sync()
                run = self._runs.catch_up(journal_id, head)
                if run is None:
                    return
                self._feed_write(run)
                self._runs.add(run)
        with self._fed_signal:
            self._fed_signal.notify_all()

    def _sync_runs(self) -> None:
        with self._runs_mutex:
            self._feed_sync()

    def _read_window(self, window: builtins.list[tuple[int, Run]]) -> Iterator[FeedEntry]:
        """The entries of consecutive runs, reading each journal's part of them with one read: a
        journal's runs in feed order cover consecutive seqs, so its part of a window is one range."""
        self._sync_catalog()  # learn of purges by other processes before reading anything
        spans: dict[str, tuple[int, int]] = {}
        for _, run in window:
            first, _last = spans.get(run.journal_id, (run.first, run.last))
            spans[run.journal_id] = (min(first, run.first), run.last)
        entries: dict[str, builtins.list[tuple[Record, bytes]]] = {}
        for journal_id, (first, last) in spans.items():
            reader = self._reader(journal_id)
            if reader is None:
                continue  # purged: its positions stay, empty
            got = list(_proved_pairs(reader, first - 1, last - first + 1))
            if len(got) != last - first + 1:
                held = first - 1 + len(got)
                raise self._lost(journal_id, f"its records end at seq {held}" if held else "it holds none")
            entries[journal_id] = got
        for start, run in window:
            journal_entries = entries.get(run.journal_id)
            if journal_entries is None:
                continue
            base = spans[run.journal_id][0]
            for offset in range(run.last - run.first + 1):
                seq = run.first + offset
                record, line = journal_entries[seq - base]
                if record.seq != seq:
                    where = f"{self._url} {run.journal_id}"
                    msg = f"{where}: the feed expected seq {seq}, the journal holds seq {record.seq}"
                    raise IntegrityError(msg)
                yield FeedEntry(start + offset, run.journal_id, seq, record, line)

    def _reader(self, journal_id: str) -> SessionJournal | None:
        """A reader of the journal for the feed; None for a purged one (its positions stay, empty). A
        journal whose storage is gone is not skipped: its loss is raised (LostRecordsError)."""
        if journal_id == CATALOG_ID:
            return self._catalog_raw
        if journal_id in self._cat.purged:
            self._drop_reader(journal_id)  # a reader opened before another process purged it
            return None
        with self._readers_mutex:
            reader = self._readers.get(journal_id)
            if reader is not None:
                self._readers.move_to_end(journal_id)
                return reader
        if not self._raw_exists(journal_id):
            self._gone(journal_id)
            return None
        try:
            reader = self._raw_open(journal_id, readonly=True)
        except (UnknownJournalError, FileNotFoundError):
            self._gone(journal_id)
            return None
        with self._readers_mutex:
            self._readers[journal_id] = reader
            while len(self._readers) > READER_CACHE:
                _, old = self._readers.popitem(last=False)
                old.close()
        return reader

    def _gone(self, journal_id: str) -> None:
        """For a journal whose storage is not there: None if another process purged it meanwhile (the
        receipt is committed before the bytes go), else its loss."""
        self._sync_catalog()
        if journal_id in self._cat.purged:
            return
        raise self._lost(journal_id, self._raw_missing(journal_id))

    def _drop_reader(self, journal_id: str) -> None:
        with self._readers_mutex:
            reader = self._readers.pop(journal_id, None)
        if reader is not None:
            reader.close()


def stored_digest(journal: SessionJournal, seq: int) -> str | None:
    """The digest of record `seq` as `journal` stores it (None if it holds no such record)."""
    line = next(iter(journal.read_lines(after=seq - 1, limit=1)), None)
    return None if line is None else line_digest(line)


@runtime_checkable
class _ProvedReading(Protocol):
    """A journal whose reads prove what they serve and give each record with its line (JsonlJournal)."""

    def read_proved(self, after: int = 0, limit: int | None = None) -> Iterator[tuple[Record, bytes]]: ...


def _proved_pairs(journal: SessionJournal, after: int, limit: int) -> Iterator[tuple[Record, bytes]]:
    """The records after `after` with their lines, as the journal proves them (decoded once)."""
    if isinstance(journal, _ProvedReading):
        return journal.read_proved(after, limit)
    where = journal.name
    return ((decode_record(line, where=where), line) for line in journal.read_lines(after, limit))
