"""`AsyncSession`: `Session` for asyncio programs. The same methods and errors, awaited.

Calls on one AsyncSession run one at a time in the order they were made (an `asyncio.Lock`, which is
first come, first served), so `await s.user(...)` from two tasks commits in call order. A blocking
journal (a `JsonlJournal`, a store's journal) is run in worker threads through `ThreadedJournal`.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Sequence
from typing import Any

from waybook.journal.async_protocol import AsyncSessionJournal
from waybook.journal.errors import IntegrityError
from waybook.journal.head import GENESIS, AppendResult, Head
from waybook.journal.protocol import SessionJournal
from waybook.journal.records import (
    AnyBody,
    AssistantMessage,
    Block,
    Compaction,
    ContextExclusion,
    CustomEntry,
    Header,
    LeafMoved,
    NewRecord,
    Record,
    Reset,
    SystemMessage,
    ToolResult,
    UserMessage,
)
from waybook.journal.rules import next_leaf
from waybook.session import _content, new_id, utc_now
from waybook.stores.threaded import ThreadedJournal


def as_async(journal: AsyncSessionJournal | SessionJournal) -> AsyncSessionJournal:
    """`journal` if its methods are awaited, else the blocking journal run in worker threads."""
    if inspect.iscoroutinefunction(journal.append):
        return journal  # type: ignore[return-value]
    return ThreadedJournal(journal)  # type: ignore[arg-type]


class AsyncSession:
    """Writes one conversation into a journal from asyncio code. Build it with `await AsyncSession.open`
    or `await AsyncSession.create` (both read the journal first, which is I/O)."""

    def __init__(
        self,
        journal: AsyncSessionJournal | SessionJournal,
        *,
        actor: str | None = None,
        clock: Callable[[], str] = utc_now,
        ids: Callable[[], str] = new_id,
    ) -> None:
        """A session at GENESIS that has read nothing yet; `await session.sync()` before writing to a
        journal that has records (`open` and `create` do it for you)."""
        self._journal = as_async(journal)
        self._actor = actor
        self._clock = clock
        self._ids = ids
        self._head: Head = GENESIS
        self._leaf: str | None = None
        self._turn = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        journal: AsyncSessionJournal | SessionJournal,
        *,
        actor: str | None = None,
        clock: Callable[[], str] = utc_now,
        ids: Callable[[], str] = new_id,
    ) -> AsyncSession:
        """A session on `journal`, caught up with what it holds."""
        session = cls(journal, actor=actor, clock=clock, ids=ids)
        await session.sync()
        return session

    @classmethod
    async def create(
        cls,
        journal: AsyncSessionJournal | SessionJournal,
        *,
        journal_id: str | None = None,
        creator: str = "waybook",
        metadata: dict[str, Any] | None = None,
        role: str = "session",
        actor: str | None = None,
        clock: Callable[[], str] = utc_now,
        ids: Callable[[], str] = new_id,
    ) -> AsyncSession:
        """A session on `journal`, writing its header first if the journal is empty."""
        session = await cls.open(journal, actor=actor, clock=clock, ids=ids)
        if session.head == GENESIS:
            header = Header(
                journal=journal_id or ids(), creator=creator, metadata=dict(metadata or {}), role=role
            )
            await session.append(header)
        return session

    @property
    def journal(self) -> AsyncSessionJournal:
        return self._journal

    @property
    def head(self) -> Head:
        """The head this session last saw (what it presents on its next append)."""
        return self._head

    @property
    def leaf(self) -> str | None:
        """The current leaf as of `head`: the parent of the next node."""
        return self._leaf

    async def sync(self) -> int:
        """Catch up with records other writers committed; returns how many were read."""
        async with self._turn:
            count = 0
            async for record in self._journal.read(after=self._head.seq):
                self._see(record)
                count += 1
            return count

    async def append(self, *bodies: AnyBody) -> AppendResult:
        """Append bodies as one atomic batch at this session's head. Nodes must name their parents."""
        async with self._turn:
            return await self._append(bodies)

    # --- one entry at a time; each returns the committed record -------------------------------------
    # Bodies that name a parent are built inside the turn, so the parent is the leaf when they commit.

    async def user(self, content: str | Sequence[Block]) -> Record:
        return await self._node(lambda: UserMessage(parent=self._leaf, content=_content(content)))

    async def system(self, content: str | Sequence[Block]) -> Record:
        return await self._node(lambda: SystemMessage(parent=self._leaf, content=_content(content)))

    async def assistant(
        self,
        content: str | Sequence[Block],
        *,
        stop_reason: str = "end_turn",
        model: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> Record:
        return await self._node(
            lambda: AssistantMessage(
                parent=self._leaf,
                content=_content(content),
                stop_reason=stop_reason,
                model=model,
                usage=usage,
            )
        )

    async def tool_result(
        self,
        call_id: str,
        content: str | Sequence[Block],
        *,
        tool_name: str | None = None,
        is_error: bool = False,
        details: dict[str, Any] | None = None,
    ) -> Record:
        return await self._node(
            lambda: ToolResult(
                parent=self._leaf,
                call_id=call_id,
                content=_content(content),
                tool_name=tool_name,
                is_error=is_error,
                details=details,
            )
        )

    async def compact(
        self, summary: str, *, first_kept: str | None, tokens_before: int | None = None
    ) -> Record:
        return await self._node(
            lambda: Compaction(
                parent=self._leaf, summary=summary, first_kept=first_kept, tokens_before=tokens_before
            )
        )

    async def exclude(self, target: str, *, reason: str = "") -> Record:
        return await self._node(lambda: ContextExclusion(parent=self._leaf, target=target, reason=reason))

    async def custom(
        self, type: str, data: Any = None, *, in_context: bool = False, content: str | Sequence[Block] = ()
    ) -> Record:
        return await self._node(
            lambda: CustomEntry(
                parent=self._leaf, type=type, data=data, in_context=in_context, content=_content(content)
            )
        )

    async def branch_from(self, node_id: str | None, *, reason: str) -> Record:
        """Move the leaf to `node_id` (an earlier node, or None for a new root); nothing is erased."""
        return await self._node(
            lambda: LeafMoved(from_leaf=self._leaf, to_leaf=node_id, reason=reason, actor=self._actor)
        )

    async def reset(self, *, reason: str = "") -> Record:
        """Clear the leaf: the next node starts a new root and the model context starts empty."""
        return await self._node(lambda: Reset(reason=reason, actor=self._actor))

    async def _node(self, build: Callable[[], AnyBody]) -> Record:
        async with self._turn:
            return (await self._append((build(),))).records[0]

    async def _append(self, bodies: Sequence[AnyBody]) -> AppendResult:
        batch = [NewRecord(id=self._ids(), at=self._clock(), body=body) for body in bodies]
        result = await self._journal.append(batch, expected=self._head)
        for record in result.records:
            self._see(record)
        return result

    def _see(self, record: Record) -> None:
        if record.seq != self._head.seq + 1:
            name = self._journal.name
            msg = f"{name}: read seq {record.seq} after seq {self._head.seq}; the journal skipped records"
            raise IntegrityError(msg)
        self._head = Head.of(record)
        self._leaf = next_leaf(self._leaf, record.id, record.body)
