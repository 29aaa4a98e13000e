"""The `SessionJournal` protocol that every adapter satisfies structurally."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from waybook.model._head import AppendResult, Head
from waybook.model._records import NewRecord, Record


@runtime_checkable
class SessionJournal(Protocol):
    """An append-only, digest-chained sequence of records. See docs/journal-contract.md.

    `name` identifies the journal in messages and receipts (a path or an in-memory label; never a
    credential).
    """

    @property
    def name(self) -> str: ...

    def head(self) -> Head:
        """The last committed record's position; GENESIS when empty."""
        ...

    def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        """Commit `records` atomically after `expected`, or raise StaleWriterError having written nothing.

        Resending a batch that already committed right after `expected` returns the original result.
        """
        ...

    def read(self, after: int = 0, limit: int | None = None) -> Iterator[Record]:
        """Committed records with seq > `after`, in commit order, at most `limit` of them."""
        ...

    def read_lines(self, after: int = 0, limit: int | None = None) -> Iterator[bytes]:
        """The committed canonical bytes of the same records, without newlines, exactly as stored."""
        ...

    def flush(self) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
