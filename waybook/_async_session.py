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
import functools
import inspect
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from waybook._masking import Redact, secret_mask
from waybook._offload import DEFAULT_INLINE_LIMIT, offload
from waybook._session_core import Batch, Entry, ForkTarget, SessionCore, SubagentRequest, WriterOptions
from waybook._session_methods import SessionMethods
from waybook.journal import AsyncSessionJournal, JsonlJournal, SessionJournal, new_id
from waybook.model import GENESIS, AppendResult, Content, Header, InvalidRecordError, Record
from waybook.stores import ThreadedJournal

if TYPE_CHECKING:
    from waybook.stores import BlobStore

P = ParamSpec("P")
T = TypeVar("T")
W = TypeVar("W")

Either = AsyncSessionJournal | SessionJournal
"""What an AsyncSession writes to: an awaited journal, or a blocking one it runs in worker threads."""


def awaited(
    method: Callable[Concatenate[Any, P], Coroutine[Any, Any, T]],
) -> Callable[Concatenate[Any, P], Coroutine[Any, Any, T]]:
    """One of `SessionMethods`' methods, run when the call is awaited (as an `async def` runs): its
    checks too, so a bad argument raises where the call is awaited, and a call never awaited does
    nothing."""

    @functools.wraps(method)
    async def run(self: Any, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await method(self, *args, **kwargs)

    return run


def awaited_methods(cls: type[W]) -> type[W]:
    """`cls` with each public method of `SessionMethods` (`create` too) run when the call is awaited."""
    for name, member in vars(SessionMethods).items():
        if name.startswith("_"):
            continue
        if inspect.isfunction(member):
            setattr(cls, name, awaited(member))
        elif isinstance(member, classmethod):
            setattr(cls, name, classmethod(awaited(member.__func__)))
    return cls


def as_async(journal: Either) -> AsyncSessionJournal:
    """`journal` if its methods are awaited, else the blocking journal run in worker threads."""
    if inspect.iscoroutinefunction(journal.append):
        return journal  # type: ignore[return-value]
    return ThreadedJournal(journal)  # type: ignore[arg-type]


@awaited_methods
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
        redact: Redact = False,
    ) -> AsyncSession:
        """A session on `journal`, caught up with what it holds."""
        mask = secret_mask(redact, who=cls._WHO)
        options = WriterOptions(
            actor=actor, clock=clock, ids=ids, blobs=blobs, inline_limit=inline_limit, mask=mask
        )
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

    async def _write(self, entry: Entry) -> Record:
        content, big, found = self._core.masked_entry(entry)
        content = await self._offloaded(content) if big else content
        async with self._turn:
            core = self._core
            history = None
            if entry.reads_history and core.head.seq:
                history = [record async for record in self._journal.read(limit=core.head.seq)]
            new = core.stamp(core.masked_body(entry.build(core, content, history), found))
            return core.committed_one(await self._journal.append((new,), expected=core.head))

    async def _write_batch(self, batch: Batch) -> AppendResult:
        contents, big, found = self._core.masked_contents(batch)
        final = [
            await self._offloaded(content) if off else content
            for content, off in zip(contents, big, strict=True)
        ]
        async with self._turn:
            records = self._core.masked_records(batch.build(final), final, found)
            result = await self._journal.append(records, expected=self._core.head)
            self._core.committed(result)
            return result

    async def _fork(self, node_id: str, journal: Either, journal_id: str | None) -> AsyncSession:
        target = as_async(journal)
        head = await target.head()
        header = None
        if head.seq == 1:  # a journal holding only its own header: the fork may keep it
            async for record in target.read(limit=1):
                header = record.body
        async with self._turn:
            core = self._core
            fork = core.fork(
                node_id, into=target.name, into_head=head, journal_id=journal_id, into_header=header
            )
            source = [record async for record in self._journal.read(limit=core.head.seq)]
            records = fork.records(source)
        await target.append(records, expected=fork.expected)
        return await AsyncSession._opened(target, core.fork_options())

    async def _start_subagent(self, journal: Either, asked: SubagentRequest) -> AsyncSession:
        target = as_async(journal)
        own = None
        async for record in self._journal.read(limit=1):
            own = record.body
        core = self._core
        child_id, node, named = core.subagent(asked, own)
        if await target.head() != GENESIS:
            msg = f"a sub-agent's session starts in an empty journal; {target.name} has records already"
            raise InvalidRecordError(msg, journal=target.name)
        child = await AsyncSession._create(
            target, core.fork_options(), lambda sub: sub.header(child_id, "waybook", named, "session")
        )
        await self.link_subagent(
            child_id, at=node, call_id=asked.call_id, agent=asked.agent, reason=asked.reason
        )
        return child

    async def _fork_to(self, node_id: str, target: ForkTarget) -> AsyncSession:
        async with self._turn:
            core = self._core
            fork = core.fork(node_id, into=target.name, into_head=GENESIS, journal_id=target.journal_id)
            source = [record async for record in self._journal.read(limit=core.head.seq)]
            records = fork.records(source)  # decided before anything exists
        if target.path is not None:
            path = target.path
            journal: Either = await asyncio.to_thread(JsonlJournal.create_holding, path, records)
        else:
            store, journal_id = target.store, target.journal_id
            if inspect.iscoroutinefunction(store.create):
                journal = await store.create(journal_id, header=False)
            else:
                journal = await asyncio.to_thread(functools.partial(store.create, journal_id, header=False))
            await as_async(journal).append(records, expected=GENESIS)
        return await AsyncSession._opened(journal, core.fork_options())

    async def _offloaded(self, content: Content) -> Content:
        """`content` with its blocks over the inline limit stored as blobs, in a worker thread."""
        blobs, limit = self._core.blobs, self._core.inline_limit
        offloaded, _refs = await asyncio.to_thread(lambda: offload(content, blobs=blobs, limit=limit))
        return offloaded  # the refs' leases expire on their own: see waybook.stores._blobs
