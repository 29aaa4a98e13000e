"""`open_async_store(url)`: a store for asyncio programs, chosen by its URL.

It sits above both the threaded wrapper and PostgreSQL's asyncio store, so neither imports the other's
opener: PostgreSQL waits on its feed in asyncio (no thread per waiter); every other store is wrapped in
a `ThreadedStore`.
"""

from __future__ import annotations

import asyncio

from waybook.stores._threaded import ThreadedStore
from waybook.stores._url import open_store

POSTGRES_SCHEMES = ("postgresql://", "postgres://")


async def open_async_store(url: str) -> ThreadedStore:
    """`open_store(url)` for asyncio programs; the store is opened in a worker thread."""
    if url.startswith(POSTGRES_SCHEMES):
        from waybook.stores.postgres import open_async_postgres  # the postgresql extra

        return await open_async_postgres(url)
    return ThreadedStore(await asyncio.to_thread(open_store, url))
