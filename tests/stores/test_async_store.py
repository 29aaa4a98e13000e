"""Every store, awaited: AsyncSession and the async store twin keep the blocking semantics and errors."""

from __future__ import annotations

import asyncio

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
