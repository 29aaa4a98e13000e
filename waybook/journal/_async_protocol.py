"""`AsyncSessionJournal`: the `SessionJournal` contract for asyncio programs, every method awaited.

Same semantics and the same errors as the blocking protocol (docs/journal-contract.md). A blocking
journal becomes one with `waybook.stores.ThreadedJournal`, which runs each call in a worker thread.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from types import TracebackType
from typing import Protocol, Self, runtime_checkable

from waybook.model import AppendResult, Head, NewRecord, Record


@runtime_checkable
class AsyncSessionJournal(Protocol):
    """An append-only, digest-chained sequence of records, awaited. See `SessionJournal`."""

    @property
    def name(self) -> str: ...

    async def head(self) -> Head: ...

    async def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult: ...

    def read(self, after: int = 0, limit: int | None = None) -> AsyncIterator[Record]:
        """Committed records with seq > `after`, in commit order, at most `limit` of them."""
        ...

    def read_lines(self, after: int = 0, limit: int | None = None) -> AsyncIterator[bytes]: ...

    async def flush(self) -> None: ...

    async def close(self) -> None: ...

    async def __aenter__(self) -> Self: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...
