"""`ReadOnlyJournal`: a journal one may read and prove but never append to (the store's catalog, or a
journal opened to read)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from waybook.journal import SessionJournal
from waybook.model import AppendResult, Head, JournalError, NewRecord, StorageError
from waybook.stores._errors import ReservedJournalError
from waybook.stores._passing import PassingJournal


def catalog_refusal(name: str) -> JournalError:
    msg = f"{name}: the store's catalog is written by the store only; this view of it is read-only"
    return ReservedJournalError(msg)


def reader_refusal(name: str) -> JournalError:
    msg = f"{name}: opened to read only; open it with store.open(journal_id) to append"
    return StorageError(msg)


class ReadOnlyJournal(PassingJournal[SessionJournal]):
    """`journal`, read-only: `append` raises `refusal(name)` (by default ReservedJournalError, for the
    catalog) and writes nothing. Closing it calls `on_close` (default: closes `journal`); a view of a
    journal its store keeps open passes a no-op."""

    def __init__(
        self,
        journal: SessionJournal,
        *,
        on_close: Callable[[], None] | None = None,
        refusal: Callable[[str], JournalError] = catalog_refusal,
    ) -> None:
        super().__init__(journal)
        self._on_close = journal.close if on_close is None else on_close
        self._refusal = refusal

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        raise self._refusal(self.name)

    def flush(self) -> None:
        """Nothing to flush: nothing is written through this view."""

    def close(self) -> None:
        self._on_close()
