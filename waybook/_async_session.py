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

from waybook._offload import DEFAULT_INLINE_LIMIT, offload
from waybook._session import (
    ToolOutcome,
    check_blocks,
    check_journal,
    check_pairing,
    content_of,
    custom_data,
    new_id,
    request_details,
)
from waybook.journal._async_protocol import AsyncSessionJournal
from waybook.journal._clock import SessionClock
from waybook.journal._protocol import SessionJournal
from waybook.journal._roles.session import next_leaf
from waybook.model._errors import IntegrityError, InvalidRecordError
from waybook.model._head import GENESIS, AppendResult, Head
from waybook.model._records import (
    AnyBody,
    AssistantMessage,
    Block,
    Compaction,
    Content,
    ContextExclusion,
    CustomEntry,
    Header,
    LeafMoved,
    NewRecord,
    Record,
    Reset,
    SubagentLink,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.projections import RequestContext
from waybook.stores._threaded import ThreadedJournal


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
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
        blobs: Any = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> None:
        """A session at GENESIS that has read nothing yet; `await session.sync()` before writing to a
        journal that has records (`open` and `create` do it for you). `clock`, `ids`, `blobs` and
        `inline_limit` are Session's."""
        check_journal(journal, "AsyncSession")
        self._journal = as_async(journal)
        self._actor = actor
        self._session_clock: SessionClock | None = None
        if clock is None:
            clock = self._session_clock = SessionClock()
        self._clock = clock
        self._ids = ids
        self._blobs = blobs
        self._inline_limit = inline_limit
        self._head: Head = GENESIS
        self._leaf: str | None = None
        self._turn = asyncio.Lock()

    @classmethod
    async def open(
        cls,
        journal: AsyncSessionJournal | SessionJournal,
        *,
        actor: str | None = None,
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
        blobs: Any = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> AsyncSession:
        """A session on `journal`, caught up with what it holds."""
        session = cls(journal, actor=actor, clock=clock, ids=ids, blobs=blobs, inline_limit=inline_limit)
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
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
        blobs: Any = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> AsyncSession:
        """A session on `journal`, writing its header first if the journal is empty."""
        session = await cls.open(
            journal, actor=actor, clock=clock, ids=ids, blobs=blobs, inline_limit=inline_limit
        )
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
            last = None
            async for last in self._journal.read(after=self._head.seq):
                self._see(last)
                count += 1
            if last is not None and self._session_clock is not None:
                self._session_clock.observe(last.at)
            return count

    async def append(self, *bodies: AnyBody) -> AppendResult:
        """Append bodies as one atomic batch at this session's head. Nodes must name their parents."""
        async with self._turn:
            return await self._append(bodies)

    # --- one entry at a time; each returns the committed record -------------------------------------
    # Bodies that name a parent are built inside the turn, so the parent is the leaf when they commit.

    async def user(self, content: str | Sequence[Block]) -> Record:
        inlined = await self._inline(content)
        return await self._node(lambda: UserMessage(parent=self._leaf, content=inlined))

    async def system(self, content: str | Sequence[Block]) -> Record:
        inlined = await self._inline(content)
        return await self._node(lambda: SystemMessage(parent=self._leaf, content=inlined))

    async def assistant(
        self,
        content: str | Sequence[Block],
        *,
        stop_reason: str = "end_turn",
        model: str | None = None,
        usage: dict[str, int] | None = None,
        request: RequestContext | None = None,
    ) -> Record:
        inlined = await self._inline(content)
        request_details(request, None)  # a wrong type is refused before anything is written
        return await self._node(
            lambda: AssistantMessage(
                parent=self._leaf,
                content=inlined,
                stop_reason=stop_reason,
                model=model,
                usage=usage,
                details=request_details(request, self._leaf),
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
        inlined = await self._inline(content)
        return await self._node(
            lambda: ToolResult(
                parent=self._leaf,
                call_id=call_id,
                content=inlined,
                tool_name=tool_name,
                is_error=is_error,
                details=details,
            )
        )

    async def turn(
        self,
        content: str | Sequence[Block],
        results: Sequence[ToolOutcome] = (),
        *,
        stop_reason: str | None = None,
        model: str | None = None,
        usage: dict[str, int] | None = None,
        request: RequestContext | None = None,
    ) -> AppendResult:
        """One assistant message and the results of its tool calls, as one atomic batch (Session.turn)."""
        request_details(request, None)  # a wrong type is refused before anything is written
        given = content_of(content)
        check_blocks(given, self._journal.name)
        calls = {block.call_id: block for block in given if type(block) is ToolCallBlock}
        check_pairing(given, calls, results, self._journal.name)
        blocks = await self._inline(given)  # only now may a block go to the blobs: the turn is valid
        outputs = [await self._inline(outcome.content) for outcome in results]
        async with self._turn:
            message_id = self._ids()
            message = AssistantMessage(
                parent=self._leaf,
                content=blocks,
                stop_reason=stop_reason or ("tool_use" if calls else "end_turn"),
                model=model,
                usage=usage,
                details=request_details(request, self._leaf),
            )
            at = self._clock()
            batch = [NewRecord(id=message_id, at=at, body=message)]
            parent = message_id
            for outcome, output in zip(results, outputs, strict=True):
                rid = self._ids()
                name = calls[outcome.call_id].name if outcome.tool_name is None else outcome.tool_name
                body = ToolResult(
                    parent=parent,
                    call_id=outcome.call_id,
                    content=output,
                    tool_name=name,
                    is_error=outcome.is_error,
                    details=outcome.details,
                )
                batch.append(NewRecord(id=rid, at=at, body=body))
                parent = rid
            result = await self._journal.append(batch, expected=self._head)
            for record in result.records:
                self._see(record)
            return result

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
        data = custom_data(data)  # an unregistered object is refused before anything is written
        inlined = await self._inline(content)
        return await self._node(
            lambda: CustomEntry(
                parent=self._leaf, type=type, data=data, in_context=in_context, content=inlined
            )
        )

    async def link_subagent(
        self,
        journal: str,
        *,
        at: str | None = None,
        call_id: str | None = None,
        agent: str | None = None,
        reason: str = "",
    ) -> Record:
        """Record that node `at` (default: the leaf) started a sub-agent whose session is `journal`."""

        def build() -> AnyBody:
            node = self._leaf if at is None else at
            if node is None:
                msg = "a sub-agent link needs a node to hang from: append the tool call first, or pass at="
                raise InvalidRecordError(msg, journal=self._journal.name)
            return SubagentLink(node=node, journal=journal, call_id=call_id, agent=agent, reason=reason)

        return await self._node(build)

    async def branch_from(self, node_id: str | None, *, reason: str) -> Record:
        """Move the leaf to `node_id` (an earlier node, or None for a new root); nothing is erased."""
        return await self._node(
            lambda: LeafMoved(from_leaf=self._leaf, to_leaf=node_id, reason=reason, actor=self._actor)
        )

    async def reset(self, *, reason: str = "") -> Record:
        """Clear the leaf: the next node starts a new root and the model context starts empty."""
        return await self._node(lambda: Reset(reason=reason, actor=self._actor))

    async def _inline(self, value: str | Sequence[Block]) -> Content:
        """Session._inline: blocks over the inline limit go to the blobs (in a worker thread)."""
        content = content_of(value)
        if type(content) is not tuple:
            return content  # not content at all: the journal refuses it, typed
        quarter = self._inline_limit >> 2
        if all(type(block) is TextBlock and len(block.text) <= quarter for block in content):
            return content
        blobs, limit = self._blobs, self._inline_limit
        inlined, _refs = await asyncio.to_thread(lambda: offload(content, blobs=blobs, limit=limit))
        return inlined

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
