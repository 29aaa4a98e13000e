"""Blocking journals and stores, awaited: each call runs in a worker thread (`asyncio.to_thread`).

`ThreadedJournal` satisfies `AsyncSessionJournal` and `ThreadedStore` satisfies `AsyncJournalStore` for
any blocking journal or store, so an asyncio program never blocks its event loop on a file or database.
The order of calls on one `AsyncSession` is kept by the session itself (it awaits one call at a time).
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import islice
from types import TracebackType
from typing import Any, Self, TypeVar

from waybook.journal import SessionJournal
from waybook.model import AppendResult, Head, NewRecord, Record
from waybook.stores._catalog import check_position, check_timeout
from waybook.stores._protocol import JournalStore
from waybook.stores._subscribe import AsyncSubscription, Filter
from waybook.stores._values import FeedEntry, JournalPage, PurgeReceipt

T = TypeVar("T")

CHUNK = 512
"""Records (or feed entries) fetched per worker-thread call when iterating."""


class _ClosedOnAsyncExit:
    """`async with thing:` awaits the thing's `close()` when the block ends."""

    async def close(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()


class ThreadedJournal(_ClosedOnAsyncExit):
    """A blocking `SessionJournal`, awaited."""

    def __init__(self, journal: SessionJournal) -> None:
        self._journal = journal

    @property
    def name(self) -> str:
        return self._journal.name

    @property
    def blocking(self) -> SessionJournal:
        """The journal underneath (for code that is not async)."""
        return self._journal

    async def head(self) -> Head:
        return await asyncio.to_thread(self._journal.head)

    async def append(self, records: Sequence[NewRecord], *, expected: Head) -> AppendResult:
        batch = tuple(records)
        return await asyncio.to_thread(lambda: self._journal.append(batch, expected=expected))

    async def read(self, after: int = 0, limit: int | None = None) -> AsyncIterator[Record]:
        async for record in _chunked(self._journal.read, after, limit, lambda r: r.seq):
            yield record

    async def read_lines(self, after: int = 0, limit: int | None = None) -> AsyncIterator[bytes]:
        position = [after]

        def advance(_line: bytes) -> int:
            position[0] += 1
            return position[0]

        async for line in _chunked(self._journal.read_lines, after, limit, advance):
            yield line

    async def flush(self) -> None:
        await asyncio.to_thread(self._journal.flush)

    async def close(self) -> None:
        await asyncio.to_thread(self._journal.close)

    def __repr__(self) -> str:
        return f"ThreadedJournal({self._journal!r})"


class ThreadedStore(_ClosedOnAsyncExit):
    """A blocking `JournalStore`, awaited; the journals it returns are `ThreadedJournal`s."""

    def __init__(self, store: JournalStore) -> None:
        self._store = store
        self._waiters: ThreadPoolExecutor | None = None
        """Threads that block in `wait`, apart from asyncio's default pool, so tailing tasks never
        starve the appends and reads that run there."""

    @property
    def url(self) -> str:
        return self._store.url

    @property
    def blocking(self) -> JournalStore:
        return self._store

    async def create(
        self,
        journal_id: str,
        *,
        role: str = "session",
        metadata: Mapping[str, Any] | None = None,
        header: bool = True,
    ) -> ThreadedJournal:
        journal = await asyncio.to_thread(
            lambda: self._store.create(journal_id, role=role, metadata=metadata, header=header)
        )
        return ThreadedJournal(journal)

    async def open(self, journal_id: str) -> ThreadedJournal:
        return ThreadedJournal(await asyncio.to_thread(self._store.open, journal_id))

    async def exists(self, journal_id: str) -> bool:
        return await asyncio.to_thread(self._store.exists, journal_id)

    async def list(
        self,
        *,
        role: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        hidden: bool = False,
        after: str | None = None,
        limit: int = 100,
    ) -> JournalPage:
        return await asyncio.to_thread(
            lambda: self._store.list(role=role, metadata=metadata, hidden=hidden, after=after, limit=limit)
        )

    async def feed(self, after: int = 0, *, limit: int | None = None) -> AsyncIterator[FeedEntry]:
        async for entry in _chunked(
            lambda a, n: self._store.feed(a, limit=n), after, limit, lambda e: e.position
        ):
            yield entry

    def subscribe(self, after: int = 0, *, filter: Filter = None) -> AsyncSubscription:
        """Deliveries of the feed after `after`, awaited, with acknowledgements (`Subscription`)."""
        return AsyncSubscription(self, after, filter=filter)

    async def feed_head(self) -> int:
        return await asyncio.to_thread(self._store.feed_head)

    async def wait(self, after: int, timeout: float | None = None) -> bool:
        """Wait for a position > `after`. Waits in slices of at most a second so a cancelled task
        frees its worker thread soon after."""
        check_position(after)
        timeout = check_timeout(timeout)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        if self._waiters is None:
            self._waiters = ThreadPoolExecutor(thread_name_prefix="waybook-feed-wait")
        while True:
            left = None if deadline is None else max(deadline - loop.time(), 0.0)
            step = 1.0 if left is None else min(left, 1.0)
            if await loop.run_in_executor(self._waiters, self._store.wait, after, step):
                return True
            if left is not None and left <= step:
                return False

    async def tail(self, after: int = 0) -> AsyncIterator[FeedEntry]:
        position = after
        while True:
            head = await self.feed_head()
            async for entry in self.feed(position):
                position = entry.position
                yield entry
            position = max(position, head)
            await self.wait(position)

    async def hide(self, journal_id: str, *, reason: str, actor: str | None = None) -> Record:
        return await asyncio.to_thread(lambda: self._store.hide(journal_id, reason=reason, actor=actor))

    async def purge(self, journal_id: str, *, reason: str, actor: str | None = None) -> PurgeReceipt:
        return await asyncio.to_thread(lambda: self._store.purge(journal_id, reason=reason, actor=actor))

    async def close(self) -> None:
        if self._waiters is not None:
            self._waiters.shutdown(wait=False, cancel_futures=True)
        await asyncio.to_thread(self._store.close)

    def __repr__(self) -> str:
        return f"ThreadedStore({self._store!r})"


async def _chunked(
    fetch: Callable[[int, int], Iterable[T]], after: int, limit: int | None, position_of: Callable[[T], int]
) -> AsyncIterator[T]:
    """Iterate `fetch(after, limit)` CHUNK items per worker-thread call, resuming after the last seen."""
    remaining = limit
    position = after
    while remaining is None or remaining > 0:
        size = CHUNK if remaining is None else min(CHUNK, remaining)

        def take(start: int = position, n: int = size) -> builtins.list[T]:
            return list(islice(fetch(start, n), n))

        items = await asyncio.to_thread(take)
        for item in items:
            position = position_of(item)
            yield item
        if remaining is not None:
            remaining -= len(items)
        if len(items) < size:
            return
