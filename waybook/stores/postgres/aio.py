"""`AsyncPostgresStore`: the PostgreSQL store for asyncio programs.

Journal and catalog calls run the blocking store in worker threads (`ThreadedStore`: one store, one
ledger per journal, the same decisions as the blocking API). Waiting on the feed does not: a task holds
one psycopg `AsyncConnection` that LISTENs on the store's channel, and every waiting coroutine sleeps on
an asyncio condition it signals, so a thousand tailing coroutines cost no threads and wake together at
the next commit of any process.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Final

import psycopg
from psycopg import sql

from waybook.stores._catalog import check_position, check_timeout
from waybook.stores._threaded import ThreadedStore
from waybook.stores.postgres.store import PostgresStore, open_postgres

POLL_FALLBACK: Final = 1.0
"""Longest a waiter sleeps without a notification before it looks at the feed head itself."""


class AsyncPostgresStore(ThreadedStore):
    """A PostgreSQL store for asyncio. Open it with `await open_async_postgres(url)` (or
    `open_async_store(url)`); close it with `await store.close()`."""

    def __init__(self, store: PostgresStore) -> None:
        super().__init__(store)
        self._postgres = store
        self._wake = asyncio.Condition()
        self._generation = 0
        self._listening = asyncio.Event()
        self._listener: asyncio.Task[None] | None = None

    async def wait(self, after: int, timeout: float | None = None) -> bool:
        check_position(after)
        timeout = check_timeout(timeout)
        self._listen()
        if not self._listening.is_set():
            with contextlib.suppress(TimeoutError):  # no listener yet: poll meanwhile
                await asyncio.wait_for(self._listening.wait(), 5.0)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while True:
            seen = self._generation
            if await self.feed_head() > after:
                return True
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return False
            pause = POLL_FALLBACK if left is None else min(POLL_FALLBACK, left)
            async with self._wake:
                if self._generation == seen:
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), pause)

    async def close(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._listener
            self._listener = None
        await super().close()

    def _listen(self) -> None:
        if self._listener is None:
            self._listener = asyncio.get_running_loop().create_task(self._run_listener())

    async def _signal(self) -> None:
        async with self._wake:
            self._generation += 1
            self._wake.notify_all()

    async def _run_listener(self) -> None:
        engine = self._postgres.postgres_engine
        listen = sql.SQL("LISTEN {}").format(sql.Identifier(engine.channel))
        while True:
            try:
                conn = await psycopg.AsyncConnection.connect(engine.conninfo, autocommit=True)
                async with conn:
                    await conn.execute(listen)
                    self._listening.set()
                    await self._signal()  # anything committed before LISTEN took effect: look again
                    async for _ in conn.notifies():
                        await self._signal()
            except psycopg.Error:
                self._listening.set()  # waiters poll until the listener is back
                await asyncio.sleep(0.5)


async def open_async_postgres(url: str) -> AsyncPostgresStore:
    """The PostgreSQL store at `url` for asyncio (the store is opened in a worker thread)."""
    return AsyncPostgresStore(await asyncio.to_thread(open_postgres, url))
