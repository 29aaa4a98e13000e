"""`JournalStore` and `AsyncJournalStore`: many journals behind one interface (docs/stores.md).

A store creates, opens, lists, hides and purges journals, and keeps a feed: every committed record of
every journal (its catalog journal included) in one global commit order. Every store satisfies the
protocol structurally and passes tests/stores, and every journal it returns passes tests/conformance.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Protocol, Self, runtime_checkable

from waybook.journal import AsyncSessionJournal, SessionJournal, VerifyReport
from waybook.model import JournalError, Record
from waybook.stores._values import FeedEntry, JournalPage, PurgeReceipt, SealedJournal

if TYPE_CHECKING:
    from waybook.stores._blobs import Blobs

CATALOG_ID = "_catalog"
"""The id of every store's own catalog journal (role "catalog"). A user id cannot start with `_`."""


@runtime_checkable
class JournalStore(Protocol):
    """Many journals, one catalog, one feed. Thread-safe; safe across processes where the engine is."""

    @property
    def url(self) -> str:
        """Where the store is (`file:DIR`, `sqlite:FILE`, ...); never a credential."""
        ...

    def create(
        self,
        journal_id: str,
        *,
        role: str = "session",
        metadata: Mapping[str, Any] | None = None,
        header: bool = True,
    ) -> SessionJournal:
        """Create a journal and return it open. Its header (record 1) declares `journal_id`, `role` and
        `metadata`. `header=False` creates it empty instead, for a caller that appends its own header
        (copying a journal verbatim under its own id): a header naming another journal is refused with
        HeaderMismatchError, nothing written. Raises JournalExistsError, JournalPurgedError,
        InvalidJournalIdError.
        """
        ...

    def open(self, journal_id: str) -> SessionJournal:
        """Open an existing journal. Raises UnknownJournalError or JournalPurgedError."""
        ...

    def exists(self, journal_id: str) -> bool:
        """Whether `journal_id` is a journal of this store now (False once purged)."""
        ...

    def list(
        self,
        *,
        role: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        hidden: bool = False,
        after: str | None = None,
        limit: int = 100,
    ) -> JournalPage:
        """Journals in creation order, `limit` at a time, after the cursor of the previous page.

        `role` and `metadata` filter (every given metadata key must be equal); hidden journals are left
        out unless `hidden=True`. Purged journals are never listed.
        """
        ...

    def feed(self, after: int = 0, *, limit: int | None = None) -> Iterator[FeedEntry]:
        """Committed records of every journal with position > `after`, in position order."""
        ...

    @property
    def blobs(self) -> Blobs:
        """The store's blobs: large immutable bytes that records reference (docs/blobs.md)."""
        ...

    def feed_head(self) -> int:
        """The last position committed to the feed (0 when empty)."""
        ...

    def wait(self, after: int, timeout: float | None = None) -> bool:
        """Block until the feed has a position > `after` (True) or `timeout` seconds pass (False)."""
        ...

    def hide(self, journal_id: str, *, reason: str, actor: str | None = None) -> Record:
        """Leave the journal out of listings by appending a record to the catalog; nothing is erased and
        it still opens. Returns the catalog record."""
        ...

    def purge(self, journal_id: str, *, reason: str, actor: str | None = None) -> PurgeReceipt:
        """Erase a journal's bytes for good and leave a receipt in the catalog. For trusted code only.

        The receipt is committed first, then the bytes are removed; purging again finishes an interrupted
        purge and returns the same receipt. The id is retired: it cannot be created again.
        """
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


@runtime_checkable
class AsyncJournalStore(Protocol):
    """`JournalStore` for asyncio programs: the same methods and errors, awaited."""

    @property
    def url(self) -> str: ...

    async def create(
        self,
        journal_id: str,
        *,
        role: str = "session",
        metadata: Mapping[str, Any] | None = None,
        header: bool = True,
    ) -> AsyncSessionJournal: ...

    async def open(self, journal_id: str) -> AsyncSessionJournal: ...

    async def exists(self, journal_id: str) -> bool: ...

    async def list(
        self,
        *,
        role: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        hidden: bool = False,
        after: str | None = None,
        limit: int = 100,
    ) -> JournalPage: ...

    def feed(self, after: int = 0, *, limit: int | None = None) -> AsyncIterator[FeedEntry]: ...

    async def feed_head(self) -> int: ...

    async def wait(self, after: int, timeout: float | None = None) -> bool: ...

    def tail(self, after: int = 0) -> AsyncIterator[FeedEntry]:
        """Every feed entry after `after`, then each new one as it commits; never ends by itself."""
        ...

    async def hide(self, journal_id: str, *, reason: str, actor: str | None = None) -> Record: ...

    async def purge(self, journal_id: str, *, reason: str, actor: str | None = None) -> PurgeReceipt: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...


# --- abilities: what some stores can do beyond the protocol, checked with isinstance -----------------


@runtime_checkable
class JournalFiles(Protocol):
    """An ability: each journal of the store is a file of its own (the directory store), which a command
    on journal files (`waybook repair`) may work on."""

    def file_of(self, journal_id: str) -> Path:
        """The file of an existing journal. Raises UnknownJournalError, JournalPurgedError or
        InvalidJournalIdError, as `open` does."""
        ...


@runtime_checkable
class SealedCreating(Protocol):
    """An ability: the store creates journals whole from lines already sealed (the directory store), in
    one write and one batched fsync each instead of an append per record: what `waybook import` of a
    folder writes through (waybook.stores._sealed)."""

    def create_sealed(self, journals: Sequence[SealedJournal]) -> None:
        """Create every journal of `journals` (new ids, each named by its header), each proved before
        anything is written."""
        ...


@runtime_checkable
class NonBlockingStore(Protocol):
    """An ability: every call of the store runs in this process's memory and never waits on I/O (the
    in-process store), so a coroutine may make it without a worker thread."""

    @property
    def never_blocks(self) -> bool: ...


@runtime_checkable
class CatalogReading(Protocol):
    """An ability: the store shows its catalog journal (CATALOG_ID), read-only, to be proven."""

    def open_catalog(self) -> SessionJournal: ...


@runtime_checkable
class ReadingStore(Protocol):
    """An ability: the store opens a journal to read without `open`, which may write (adopting an orphan,
    feeding what a crashed writer committed); `waybook.stores.open_journal` uses it."""

    def open_to_read(self, journal_id: str) -> SessionJournal:
        """The journal, read-only, proven as `open` proves it. Raises as `open` does."""
        ...


@runtime_checkable
class ProvingStore(Protocol):
    """An ability: the store proves a journal (its catalog too) as it stores it, reporting damage rather
    than refusing it; `waybook.stores.prove` and `open_proven` use it."""

    def open_proven(self, journal_id: str, *, keep: bool) -> tuple[SessionJournal, VerifyReport]:
        """The journal read-only (the proven prefix of a damaged one) and the report of its proof, from
        one pass over its bytes; with `keep`, the journal's reads do not read the storage again."""
        ...


@runtime_checkable
class CountingStore(Protocol):
    """An ability: the store counts its journals and finds the n-th of its listing without reading the
    journals before it, so a page far into a big store costs no more than the first (`count_journals`,
    `list_from`)."""

    def count(self, *, hidden: bool = False) -> int:
        """How many journals `list(hidden=hidden)` pages through."""
        ...

    def cursor_at(self, index: int, *, hidden: bool = False) -> str | None:
        """The cursor from which `list(hidden=hidden)` starts at its `index`-th journal (from 0: None)."""
        ...


@runtime_checkable
class PageReadingStore(Protocol):
    """An ability: the store opens a page of journals together (a listing's page: `ls`, the viewer's front
    page) in a few statements rather than an open each (`open_journals`, `open_proven_journals`)."""

    def open_page(self, journal_ids: Sequence[str]) -> Iterator[tuple[str, SessionJournal | JournalError]]:
        """Each journal, in order, read-only and proven as `open_to_read` gives it, or its error."""
        ...

    def open_proven_page(
        self, journal_ids: Sequence[str]
    ) -> Iterator[tuple[str, tuple[SessionJournal, VerifyReport] | JournalError]]:
        """Each journal, in order, as `open_proven(journal_id, keep=True)` gives it, or its error."""
        ...
