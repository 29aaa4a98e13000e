"""`FedJournal`: a store's journal, telling the store's feed of every commit it makes."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import Any, Self

from waybook.journal._protocol import SessionJournal
from waybook.model._head import AppendResult, Head
from waybook.model._records import NewRecord, Record


class FedJournal:
    """Wraps the adapter's journal; after each append, `on_commit(journal_id, head seq)` feeds it.

    If the process dies between the two, the records are committed but not yet fed; the next commit
    or open of the journal feeds them (see runs.py), so the feed never loses a record for good.
    """

    def __init__(self, journal_id: str, inner: SessionJournal, on_commit: Callable[[str, int], None]) -> None:
        self.journal_id = journal_id
        self._inner = inner
        self._on_commit = on_commit

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def inner(self) -> SessionJournal:
        return self._inner

    def head(self) -> Head:
        return self._inner.head()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        result = self._inner.append(records, expected=expected)
        self._on_commit(self.journal_id, result.head.seq)
        return result

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        return self._inner.read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        return self._inner.read_lines(after, limit)

    def flush(self) -> None:
        self._inner.flush()

    def close(self) -> None:
        self._inner.close()

    def __getattr__(self, name: str) -> Any:
        """Optional abilities of the adapter underneath (`position`, `check_invariants`, ...), where it
        has them; a caller probing with getattr(journal, name, None) sees exactly what it offers."""
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._inner, name)

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"FedJournal({self.journal_id!r}, {self._inner!r})"
