"""`PassingJournal`: a journal over another one, passing every call to it; what a subclass changes is
all it writes (a store's fed journal, a read-only view, a journal that knows its store)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

from waybook.journal import ClosedOnExit, SessionJournal
from waybook.model import AppendResult, Head, NewRecord, Record

J = TypeVar("J", bound=SessionJournal)


class PassingJournal(ClosedOnExit, Generic[J]):
    """`journal` under another name: name, head, append, reads, flush and close are its own."""

    def __init__(self, journal: J) -> None:
        self._journal = journal

    @property
    def name(self) -> str:
        return self._journal.name

    def head(self) -> Head:
        return self._journal.head()

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        return self._journal.append(records, expected=expected)

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        return self._journal.read(after, limit)

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        return self._journal.read_lines(after, limit)

    def flush(self) -> None:
        self._journal.flush()

    def close(self) -> None:
        self._journal.close()
