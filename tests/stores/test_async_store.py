"""Every store, awaited: AsyncSession and the async store twin keep the blocking semantics and errors."""

from __future__ import annotations

import asyncio
import threading

import pytest

from waybook import AsyncSession, StaleWriterError
from waybook.stores import (
    CATALOG_ID,
    AsyncJournalStore,
    JournalExistsError,
    JournalPurgedError,
    UnknownJournalError,
    open_async_store,
)


def test_sessions_written_concurrently_keep_each_sessions_call_order(url: str) -> None:
    async def scenario() -> dict[str, list[int]]:
        store = await open_async_store(url)
        assert isinstance(store, AsyncJournalStore)
        sessions = [await AsyncSession.open(await store.create(f"s{i}")) for i in range(3)]
        await asyncio.gather(*(s.user(f"{n}") for n in range(20) for s in sessions))
        fed: dict[str, list[int]] = {}
        async for entry in store.feed():
            if entry.journal_id != CATALOG_ID:
                fed.setdefault(entry.journal_id, []).append(entry.seq)
        texts = [
            [r.body.content[0].text async for r in s.journal.read(after=1)]  # type: ignore[union-attr]
            for s in sessions
        ]
        assert texts == [[str(n) for n in range(20)]] * 3
        await store.close()
        return fed

    assert asyncio.run(scenario()) == {f"s{i}": list(range(1, 22)) for i in range(3)}


def test_the_async_store_raises_the_blocking_stores_errors(url: str) -> None:
    async def scenario() -> None:
        store = await open_async_store(url)
        first = await AsyncSession.open(await store.create("s1"))
        second = await AsyncSession.open(await store.open("s1"))
        await first.user("first")
        with pytest.raises(StaleWriterError):
            await second.user("stale")
        with pytest.raises(JournalExistsError):
            await store.create("s1")
        with pytest.raises(UnknownJournalError):
            await store.open("nobody")
        await store.purge("s1", reason="erasure")
        with pytest.raises(JournalPurgedError):
            await store.open("s1")
        assert not await store.exists("s1")
        await store.close()

    asyncio.run(scenario())


def test_tailing_tasks_wait_off_the_pool_that_appends_run_in(url: str) -> None:
    """Waits block a thread for up to a second each; in asyncio's default pool, a few tailing tasks
    would hold every thread and appends would queue behind them."""
    waiting_threads: set[str] = set()

    async def scenario() -> int:
        store = await open_async_store(url)
        blocking = store.blocking
        wait = blocking.wait

        def recording_wait(after: int, timeout: float | None = None) -> bool:
            waiting_threads.add(threading.current_thread().name)
            return wait(after, timeout)

        blocking.wait = recording_wait  # type: ignore[method-assign]
        session = await AsyncSession.open(await store.create("s1"))
        start = await store.feed_head()

        async def follow() -> int:
            async for entry in store.tail(start):
                if entry.journal_id == "s1" and entry.seq == 4:
                    return entry.seq
            return 0

        followers = [asyncio.create_task(follow()) for _ in range(16)]  # more than asyncio's pool
        for text in ("one", "two", "three"):
            await asyncio.sleep(0)
            await session.user(text)
        seen = await asyncio.wait_for(asyncio.gather(*followers), timeout=120)
        await store.close()
        return min(seen)

    assert asyncio.run(scenario()) == 4
    # The PostgreSQL store waits in asyncio itself (an async LISTEN connection): no thread at all.
    assert waiting_threads or url.startswith("postgresql:")
    assert all(name.startswith("waybook-feed-wait") for name in waiting_threads)
