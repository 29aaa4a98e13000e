"""`InProcessStore` (`memory:`): a store held in this process, for tests and short-lived programs.

"memory" in waybook means agent memory; this store is named for where it lives. `MemoryStore` stays
as an alias.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence

from waybook.journal import (
    ClosedOnExit,
    ErasingJournal,
    ErasureReceipt,
    ErasureRequest,
    InMemoryJournal,
    PositionedJournal,
)
from waybook.model import AppendResult, Head, JournalClosedError, NewRecord, Record
from waybook.stores._base import CatalogStore, store_clock, store_ids
from waybook.stores._blob_tables import MemoryBlobs
from waybook.stores._errors import UnknownJournalError
from waybook.stores._protocol import CATALOG_ID
from waybook.stores._runs import Run


class _Handle(ErasingJournal, ClosedOnExit):
    """One caller's handle on a shared in-memory journal: closing it leaves the journal to the others."""

    def __init__(self, journal: InMemoryJournal) -> None:
        self._journal = journal
        self._closed = False

    @property
    def name(self) -> str:
        return self._journal.name

    def head(self) -> Head:
        self._check_open()
        return self._journal.head()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        self._check_open()
        return self._journal.append(records, expected=expected)

    def erase_checked(self, request: ErasureRequest) -> ErasureReceipt:
        self._check_open()
        return self._journal.erase_checked(request)

    def finish_erasures(self) -> tuple[int, ...]:
        self._check_open()
        return self._journal.finish_erasures()

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        self._check_open()
        return self._journal.read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        self._check_open()
        return self._journal.read_lines(after, limit)

    def flush(self) -> None:
        self._check_open()

    def close(self) -> None:
        self._closed = True

    def position(self) -> tuple[Head, str | None]:
        self._check_open()
        return self._journal.position()

    def check_invariants(self) -> None:
        self._journal.check_invariants()

    def _check_open(self) -> None:
        if self._closed:
            msg = f"{self.name}: the journal is closed; open it again from its store"
            raise JournalClosedError(msg)


class InProcessStore(CatalogStore):
    """Journals, catalog and feed in this process's memory; gone when it exits."""

    never_blocks = True
    """The NonBlockingStore ability: no call waits on I/O."""

    def _blob_engine(self) -> MemoryBlobs:
        return MemoryBlobs()

    def __init__(
        self,
        name: str = "memory:",
        *,
        clock: Callable[[], str] = store_clock,
        ids: Callable[[], str] = store_ids,
    ) -> None:
        super().__init__(name, clock=clock, ids=ids)
        self._lock = threading.RLock()
        self._journals: dict[str, InMemoryJournal] = {}
        self._attach_catalog(InMemoryJournal(f"{name}{CATALOG_ID}"))

    def _store_lock(self) -> contextlib.AbstractContextManager[None]:
        return _locked(self._lock)

    def _feed_lock(self) -> contextlib.AbstractContextManager[None]:
        return contextlib.nullcontext()

    def _feed_sync(self) -> None:
        """Nothing to take in: no other process writes this store's feed."""

    def _feed_write(self, run: Run) -> None:
        """Nothing to persist: the runs live in memory (`Runs.add` keeps them)."""

    def _raw_exists(self, journal_id: str) -> bool:
        return journal_id in self._journals

    def _raw_create(self, journal_id: str, line: bytes | None) -> bool:
        with self._lock:
            if journal_id in self._journals:
                return False
            name = f"{self._url}{journal_id}"
            lines = [] if line is None else [line]
            journal = InMemoryJournal(name)
            if lines:
                journal = InMemoryJournal.from_lines(lines, name=name)
            self._journals[journal_id] = journal
            return True

    def _raw_open(self, journal_id: str, *, readonly: bool = False) -> PositionedJournal:
        journal = self._journals.get(journal_id)
        if journal is None:
            raise UnknownJournalError(store=self._url, journal_id=journal_id)
        return _Handle(journal)

    def _raw_erase(self, journal_id: str) -> None:
        journal = self._journals.pop(journal_id, None)
        if journal is not None:
            journal.close()  # every handle now refuses; the records are unreachable


@contextlib.contextmanager
def _locked(lock: threading.RLock) -> Iterator[None]:
    with lock:
        yield


MemoryStore = InProcessStore  # the name before it was InProcessStore; `memory:` URLs open one too
