"""`Session.fork` and `AsyncSession.fork` into a journal of every store: the copy, its provenance, the
source untouched."""

from __future__ import annotations

import asyncio

from tests.helpers.sessions import branching_session
from waybook import AsyncSession, Session
from waybook.journal import check_fork
from waybook.stores import JournalStore, ThreadedStore


def test_a_session_forks_into_a_new_journal_of_the_store(store: JournalStore) -> None:
    source = branching_session(store.create("golden", header=False))
    before = list(source.read_lines())
    fork = Session(source).fork("e05", store.create("retry", header=False), journal_id="retry")
    fork.user("Try again, briefly.")
    point = check_fork(store.open("retry").read(), store.open("golden").read(), name="retry")
    assert (point.journal, point.seq, point.node) == ("golden", 6, "e05")
    assert list(store.open("golden").read_lines()) == before
    positions = [e.journal_id for e in store.feed() if e.journal_id in ("golden", "retry")]
    assert positions.count("retry") == 7  # the header, five copies and the new message


def test_an_async_session_forks_into_a_new_journal_of_the_store(store: JournalStore) -> None:
    source = branching_session(store.create("golden", header=False))
    before = list(source.read_lines())

    async def fork() -> None:
        session = await AsyncSession.open(store.open("golden"))  # a blocking journal, in worker threads
        target = await ThreadedStore(store).create("retry", header=False)
        forked = await session.fork("e05", target, journal_id="retry")
        await forked.user("Try again, briefly.")

    asyncio.run(fork())
    point = check_fork(store.open("retry").read(), store.open("golden").read(), name="retry")
    assert (point.journal, point.seq, point.node) == ("golden", 6, "e05")
    assert list(store.open("golden").read_lines()) == before
    positions = [e.journal_id for e in store.feed() if e.journal_id in ("golden", "retry")]
    assert positions.count("retry") == 7  # the header, five copies and the new message
