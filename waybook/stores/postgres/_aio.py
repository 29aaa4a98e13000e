"""`AsyncPostgresStore`: the PostgreSQL store for asyncio programs.

Journal and catalog calls run the blocking store in worker threads (`ThreadedStore`: one store, one
ledger per journal, the same decisions as the blocking API). Waiting on the feed shares one watcher
task per store: while any coroutine waits, it looks at the feed head (one index probe, in a worker
thread) every few milliseconds, backing off while the feed stands still, and signals an asyncio
condition when the head moves; so a thousand tailing coroutines cost one query at a time and no threads.
Writers notify no one (docs/postgresql.md, "Waking tailing readers").

Arrows point one way: this module imports the threaded store; `open_async_store` (stores/_async_open.py,
above both) chooses this one for a PostgreSQL URL.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

from waybook.model import JournalClosedError, StorageError
from waybook.stores._catalog import check_position, check_timeout
from waybook.stores._threaded import ThreadedStore
from waybook.stores.postgres._feed import WATCH_FAST, WATCH_SLOW
from waybook.stores.postgres._store import PostgresStore, open_postgres

POLL_FALLBACK: Final = 1.0
"""Longest a waiter sleeps without hearing from the watcher before it looks at the feed head itself."""


class AsyncPostgresStore(ThreadedStore):
    """A PostgreSQL store for asyncio. Open it with `await open_async_postgres(url)` (or
    `open_async_store(url)`); close it with `await store.close()`."""

    def __init__(self, store: PostgresStore) -> None:
        super().__init__(store)
        self._postgres = store
        self._wake = asyncio.Condition()
        self._generation = 0
        self._head = -1
        self._tailing = 0
        self._waiting = asyncio.Event()
        self._watcher: asyncio.Task[None] | None = None

    async def wait(self, after: int, timeout: float | None = None) -> bool:
        check_position(after)
        timeout = check_timeout(timeout)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        if self._watcher is None:
            self._watcher = loop.create_task(self._watch())
        self._tailing += 1
        self._waiting.set()
        try:
            look = True
            while True:
                seen = self._generation
                if self._head > after:
                    return True
                if look and await self._glance() > after:
                    return True
                left = None if deadline is None else deadline - loop.time()
                if left is not None and left <= 0:
                    return False
                pause = POLL_FALLBACK if left is None else min(POLL_FALLBACK, left)
                async with self._wake:
                    if self._generation == seen:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._wake.wait(), pause)
                look = self._generation == seen  # no word from the watcher in a whole pause
        finally:
            self._tailing -= 1
            if self._tailing == 0:
                self._waiting.clear()

    async def close(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None
        await super().close()

    async def _glance(self) -> int:
        """PostgresEngine.glance in a worker thread: the head, or one more while records await numbers."""
        return await asyncio.to_thread(self._postgres.postgres_engine.glance)

    async def _watch(self) -> None:
        pause = WATCH_FAST
        while True:
            await self._waiting.wait()
            try:
                now = await self._glance()
            except (StorageError, JournalClosedError):
                await asyncio.sleep(POLL_FALLBACK)  # waiters look themselves meanwhile
                continue
            if now != self._head:
                self._head = now
                pause = WATCH_FAST
                async with self._wake:
                    self._generation += 1
                    self._wake.notify_all()
            else:
                pause = min(pause * 2, WATCH_SLOW)
            await asyncio.sleep(pause)


async def open_async_postgres(url: str) -> AsyncPostgresStore:
    """The PostgreSQL store at `url` for asyncio (the store is opened in a worker thread)."""
    return AsyncPostgresStore(await asyncio.to_thread(open_postgres, url))
