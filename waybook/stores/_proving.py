"""Reading and proving a store's journals: the one way the CLI, the viewer and `verify` go through.

- `open_journal(store, journal_id)`: a journal of a store (or of the store at a URL) to read, proven as
  every default open is; nothing is written, and a directory store's file is read from the disk once.
- `open_proven(store, journal_id)`: the journal read-only, every byte proved (the proven prefix of a
  damaged one), and the chain report, from one pass. `prove(store, journal_id)`: the report alone.
  Both take the store's catalog journal (CATALOG_ID) too.
- `open_journals(store, ids)`, `open_proven_journals(store, ids)`: a page of journals (a listing's), each
  as the calls above give it or its error; a `PageReadingStore` reads the page in a few statements.
- `blobs_for(journal)`: where a journal's blobs are read from.

A store whose own way is better says so with an ability (`ReadingStore`, `ProvingStore`,
`CatalogReading` in _protocol); any other `JournalStore` is read through `open` and proven by `verify`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from waybook.journal import Damage, DamageReporting, SessionJournal, VerifyReport, verify
from waybook.model import JournalError
from waybook.stores._blobs import BlobRef, NoBlobStoreError
from waybook.stores._errors import InvalidJournalIdError
from waybook.stores._passing import PassingJournal
from waybook.stores._protocol import (
    CATALOG_ID,
    CatalogReading,
    JournalStore,
    PageReadingStore,
    ProvingStore,
    ReadingStore,
)
from waybook.stores._read_only import ReadOnlyJournal, reader_refusal
from waybook.stores._url import open_store

T = TypeVar("T")

__all__ = [
    "BlobReader",
    "StoreJournal",
    "blobs_for",
    "open_journal",
    "open_journals",
    "open_proven",
    "open_proven_journals",
    "prove",
]


def open_journal(store: JournalStore | str, journal_id: str) -> StoreJournal:
    """A journal of `store` (an open store, or a store URL: then opened here with `create=False`, and
    closed with the journal), read-only, proven as every default open is: damage before its last record
    raises CorruptJournalError, a torn tail is reported as its `damage`. Nothing is written: no orphan is
    adopted, nothing is fed. A directory store's journal file is read from the disk once (its reads are
    served from the bytes its open read). Raises the store's errors: StoreNotFoundError,
    UnknownJournalError, JournalPurgedError, InvalidJournalIdError. To append, use `store.open`."""
    if not isinstance(store, str):
        return StoreJournal(_open_to_read(store, journal_id), store, owned=False)
    opened = open_store(store, create=False)
    try:
        return StoreJournal(_open_to_read(opened, journal_id), opened, owned=True)
    except BaseException:
        opened.close()
        raise


def open_proven(store: JournalStore, journal_id: str) -> tuple[SessionJournal, VerifyReport]:
    """The journal `journal_id` of `store` (or its catalog, CATALOG_ID) read-only, and the report of its
    proof (`verify`'s: chain, batches, rules, from seq 1), from one pass: a damaged journal opens as its
    proven prefix instead of raising. Its reads do not read the storage again where the store keeps
    files. Close the journal when done. Raises the store's errors for an id that is not a journal."""
    return _proven(store, journal_id, keep=True)


def prove(store: JournalStore, journal_id: str) -> VerifyReport:
    """The report of proving the journal `journal_id` of `store` (or its catalog, CATALOG_ID) from seq 1:
    what `waybook verify --store` prints. Never raises for bad data; raises the store's errors for an id
    that is not a journal. Holds no more than a chunk of the journal in memory."""
    journal, report = _proven(store, journal_id, keep=False)
    journal.close()
    return report


def open_journals(
    store: JournalStore, journal_ids: Sequence[str]
) -> Iterator[tuple[str, StoreJournal | JournalError]]:
    """Each of `journal_ids`, in order, as `open_journal(store, journal_id)` opens it, or the JournalError
    that open raises (a listing shows the others). A store that reads a page of journals together
    (`PageReadingStore`: the database stores) does, in a few statements instead of an open each; any
    other store opens them one by one. Lazy: a journal is opened when it is reached. Close each."""
    if isinstance(store, PageReadingStore):
        for journal_id, opened in store.open_page(journal_ids):
            if isinstance(opened, JournalError):
                yield journal_id, opened
            else:
                yield journal_id, StoreJournal(opened, store, owned=False)
        return
    yield from _each(journal_ids, lambda journal_id: open_journal(store, journal_id))


def open_proven_journals(
    store: JournalStore, journal_ids: Sequence[str]
) -> Iterator[tuple[str, tuple[SessionJournal, VerifyReport] | JournalError]]:
    """Each of `journal_ids`, in order, as `open_proven(store, journal_id)` gives it (the journal and the
    report of its proof, from one pass), or the JournalError it raises; a `PageReadingStore` reads the
    page together, as `open_journals` says. Lazy; close each journal."""
    if isinstance(store, PageReadingStore):
        yield from store.open_proven_page(journal_ids)
        return
    yield from _each(journal_ids, lambda journal_id: open_proven(store, journal_id))


def _each(journal_ids: Sequence[str], opener: Callable[[str], T]) -> Iterator[tuple[str, T | JournalError]]:
    """Each id with what `opener` gives for it, or the JournalError it raises (the others go on)."""
    for journal_id in journal_ids:
        try:
            opened = opener(journal_id)
        except JournalError as exc:
            yield journal_id, exc
            continue
        yield journal_id, opened


def _open_to_read(store: JournalStore, journal_id: str) -> SessionJournal:
    if isinstance(store, ReadingStore):
        return store.open_to_read(journal_id)
    return ReadOnlyJournal(store.open(journal_id), refusal=reader_refusal)


def _proven(store: JournalStore, journal_id: str, *, keep: bool) -> tuple[SessionJournal, VerifyReport]:
    if isinstance(store, ProvingStore):
        return store.open_proven(journal_id, keep=keep)
    if journal_id != CATALOG_ID:
        journal: SessionJournal = ReadOnlyJournal(store.open(journal_id), refusal=reader_refusal)
    elif isinstance(store, CatalogReading):
        journal = store.open_catalog()
    else:
        msg = f"{store.url}: this store cannot show its catalog journal {CATALOG_ID} to be proven"
        raise InvalidJournalIdError(msg)
    try:
        return journal, verify(journal)
    except BaseException:
        journal.close()
        raise


class StoreJournal(PassingJournal[SessionJournal]):
    """A journal of a store, read-only, that knows its store (where its blobs are) and, when it opened
    the store itself, closes it with the journal. Reports the damage of the journal under it."""

    def __init__(self, journal: SessionJournal, store: JournalStore, *, owned: bool) -> None:
        super().__init__(journal)
        self._store = store
        self._owned = owned

    @property
    def store(self) -> JournalStore:
        return self._store

    @property
    def damage(self) -> Damage | None:
        """The damage the open found (a torn tail), as the journal under it reports it; else None."""
        return self._journal.damage if isinstance(self._journal, DamageReporting) else None

    def close(self) -> None:
        try:
            self._journal.close()
        finally:
            if self._owned:
                self._store.close()


@runtime_checkable
class BlobReader(Protocol):
    """What reading a journal's blobs takes (`BlobStore.read`)."""

    def read(self, ref: BlobRef | str) -> bytes: ...


@runtime_checkable
class _InAFile(Protocol):
    @property
    def path(self) -> Path: ...


def blobs_for(journal: SessionJournal) -> BlobReader | None:
    """Where the blobs `journal` references are read from: its store's blobs for a journal from
    `open_journal`; for a journal file that lies in a directory store (a JsonlJournal of
    `DIR/journals/ID.jsonl`), that store's; otherwise None. A store's blobs are reached only when a blob
    is read, so a journal that references none never needs them."""
    if isinstance(journal, StoreJournal):
        return _StoreBlobs(journal.store)
    if isinstance(journal, _InAFile):
        from waybook.stores._directory import directory_store_of

        directory = directory_store_of(journal.path)
        if directory is not None:
            from waybook.stores._blob_files import FileBlobs

            return FileBlobs(directory)
    return None


class _StoreBlobs:
    """A store's blobs, reached on the first read."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store

    def read(self, ref: BlobRef | str) -> bytes:
        try:
            blobs = self._store.blobs
        except NotImplementedError as exc:
            digest = ref.digest if isinstance(ref, BlobRef) else ref
            msg = f"{exc}: the journal references blob sha256:{digest}, which cannot be read from this store"
            raise NoBlobStoreError(msg) from exc
        data: bytes = blobs.read(ref)
        return data
