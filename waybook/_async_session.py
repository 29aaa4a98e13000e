"""`AsyncSession`: `Session` for asyncio programs. The same methods and errors, awaited.

Calls on one AsyncSession run one at a time in the order they were made (an `asyncio.Lock`, which is
first come, first served), so `await s.user(...)` from two tasks commits in call order. A blocking
journal (a `JsonlJournal`, a store's journal) is run in worker threads through `ThreadedJournal`.

The decisions are the session core's (waybook._session_core) and the methods are written once for both
writers (waybook._session_methods); this module is the awaited I/O around them. An entry's content goes
to the blobs before the call takes its turn; its body is made in its turn, so its parent is the leaf
when it commits.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from waybook._offload import DEFAULT_INLINE_LIMIT, offload
from waybook._session_core import Batch, Entry, SessionCore, WriterOptions, content_of
from waybook._session_methods import P, SessionMethods
from waybook.journal import AsyncSessionJournal, SessionJournal
from waybook.journal._clock import new_id
from waybook.model import GENESIS, AppendResult, Block, Content, Header, Record
from waybook.stores import ThreadedJournal

if TYPE_CHECKING:
    from waybook.stores._blobs import BlobStore

Either = AsyncSessionJournal | SessionJournal
"""What an AsyncSession writes to: an awaited journal, or a blocking one it runs in worker threads."""


def as_async(journal: Either) -> AsyncSessionJournal:
    """`journal` if its methods are awaited, else the blocking journal run in worker threads."""
    if inspect.iscoroutinefunction(journal.append):
        return journal  # type: ignore[return-value]
    return ThreadedJournal(journal)  # type: ignore[arg-type]


class AsyncSession(
    SessionMethods[
        Either,
        Coroutine[Any, Any, Record],
        Coroutine[Any, Any, AppendResult],
        Coroutine[Any, Any, "AsyncSession"],
    ]
):
    """Writes one conversation into a journal from asyncio code. Build it with `await AsyncSession.open`
    or `await AsyncSession.create` (both read the journal first, which is I/O); `AsyncSession(journal)`
    is a session at GENESIS that has read nothing yet: `await session.sync()` before writing to a
    journal that has records. `fork` takes either kind of journal, as the constructor does."""

    _WHO = "AsyncSession"

    @classmethod
    async def open(
        cls,
        journal: Either,
        *,
        actor: str | None = None,
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
        blobs: BlobStore | None = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> AsyncSession:
        """A session on `journal`, caught up with what it holds."""
        options = WriterOptions(actor=actor, clock=clock, ids=ids, blobs=blobs, inline_limit=inline_limit)
        return await cls._opened(journal, options)

    @property
    def journal(self) -> AsyncSessionJournal:
        return self._journal

    async def sync(self) -> int:
        """Catch up with records other writers committed; returns how many were read."""
        async with self._turn:
            core = self._core
            count = 0
            last = None
            async for last in self._journal.read(after=core.head.seq):
                core.saw(last)
                count += 1
            core.caught_up(last)
            return count

    def _attach(self, journal: Either) -> None:
        self._journal = as_async(journal)
        self._turn = asyncio.Lock()

    @classmethod
    async def _opened(cls, journal: Either, options: WriterOptions) -> AsyncSession:
        session = cls._on(journal, options)
        await session.sync()
        return session

    @classmethod
    async def _create(
        cls, journal: Either, options: WriterOptions, header: Callable[[SessionCore], Header]
    ) -> AsyncSession:
        session = await cls._opened(journal, options)
        if session.head == GENESIS:
            await session.append(header(session._core))
        return session

    async def _write(self, make: Callable[P, Entry], *args: P.args, **kwargs: P.kwargs) -> Record:
        entry = make(*args, **kwargs)
        inlined = await self._inline(entry.content)
        async with self._turn:
            core = self._core
            history = None
            if entry.reads_history and core.head.seq:
                history = [record async for record in self._journal.read(limit=core.head.seq)]
            new = core.stamp(entry.build(inlined, history))
            return core.committed_one(await self._journal.append((new,), expected=core.head))

    async def _write_batch(self, make: Callable[P, Batch], *args: P.args, **kwargs: P.kwargs) -> AppendResult:
        batch = make(*args, **kwargs)
        inlined = [await self._inline(content) for content in batch.contents]
        async with self._turn:
            result = await self._journal.append(batch.build(inlined), expected=self._core.head)
            self._core.committed(result)
            return result

    async def _fork(self, node_id: str, journal: Either, journal_id: str | None) -> AsyncSession:
        target = as_async(journal)
        async with self._turn:
            core = self._core
            fork = core.fork(node_id, into=target.name, into_head=await target.head(), journal_id=journal_id)
            source = [record async for record in self._journal.read(limit=core.head.seq)]
            records = fork.records(source)
        await target.append(records, expected=fork.expected)
        return await AsyncSession._opened(target, core.fork_options(self._options))

    async def _inline(self, value: str | Sequence[Block]) -> Content:
        """Session._inline: blocks over the inline limit go to the blobs (in a worker thread)."""
        content = content_of(value)
        core = self._core
        if not core.offloads(content):
            return content
        blobs, limit = core.blobs, core.inline_limit
        inlined, _refs = await asyncio.to_thread(lambda: offload(content, blobs=blobs, limit=limit))
        return inlined
