"""`Session`: the high-level writer an agent runtime holds for one conversation.

It knows the head and the leaf it last saw, builds records with fresh ids and UTC timestamps, and
presents its head on every append. If another writer won, the append raises StaleWriterError and the
session is unchanged; `sync()` catches up and the caller decides again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from waybook.journal.clock import SessionClock, new_id, utc_now
from waybook.journal.errors import IntegrityError
from waybook.journal.head import GENESIS, AppendResult, Head
from waybook.journal.protocol import SessionJournal
from waybook.journal.records import (
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
    SystemMessage,
    ToolResult,
    UserMessage,
    text,
)
from waybook.journal.rules import next_leaf

__all__ = ["Session", "new_id", "utc_now"]


def _content(value: str | Sequence[Block]) -> Content:
    return text(value) if isinstance(value, str) else tuple(value)


class Session:
    """Writes one conversation into a journal. Not thread-safe: use one Session per writer."""

    def __init__(
        self,
        journal: SessionJournal,
        *,
        actor: str | None = None,
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
    ) -> None:
        """`clock` defaults to a SessionClock (UTC, never backwards); `ids` to `new_id`."""
        self._journal = journal
        self._actor = actor
        self._session_clock: SessionClock | None = None
        if clock is None:
            clock = self._session_clock = SessionClock()
        self._clock = clock
        self._ids = ids
        self._head: Head = GENESIS
        self._leaf: str | None = None
        self.sync()

    @classmethod
    def create(
        cls,
        journal: SessionJournal,
        *,
        journal_id: str | None = None,
        creator: str = "waybook",
        metadata: dict[str, Any] | None = None,
        role: str = "session",
        actor: str | None = None,
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
    ) -> Session:
        """A session on `journal`, writing its header first if the journal is empty."""
        session = cls(journal, actor=actor, clock=clock, ids=ids)
        if session.head == GENESIS:
            header = Header(
                journal=journal_id or ids(), creator=creator, metadata=dict(metadata or {}), role=role
            )
            session.append(header)
        return session

    @property
    def journal(self) -> SessionJournal:
        return self._journal

    @property
    def head(self) -> Head:
        """The head this session last saw (what it presents on its next append)."""
        return self._head

    @property
    def leaf(self) -> str | None:
        """The current leaf as of `head`: the parent of the next node."""
        return self._leaf

    def sync(self) -> int:
        """Catch up with records other writers committed; returns how many were read."""
        count = 0
        record = None
        for record in self._journal.read(after=self._head.seq):
            self._see(record)
            count += 1
        if record is not None and self._session_clock is not None:
            self._session_clock.observe(record.at)
        return count

    def append(self, *bodies: AnyBody) -> AppendResult:
        """Append bodies as one atomic batch at this session's head. Nodes must name their parents."""
        batch = [NewRecord(id=self._ids(), at=self._clock(), body=body) for body in bodies]
        result = self._journal.append(batch, expected=self._head)
        for record in result.records:
            self._see(record)
        return result

    # --- one entry at a time; each returns the committed record -------------------------------

    def user(self, content: str | Sequence[Block]) -> Record:
        return self._node(UserMessage(parent=self._leaf, content=_content(content)))

    def system(self, content: str | Sequence[Block]) -> Record:
        return self._node(SystemMessage(parent=self._leaf, content=_content(content)))

    def assistant(
        self,
        content: str | Sequence[Block],
        *,
        stop_reason: str = "end_turn",
        model: str | None = None,
        usage: dict[str, int] | None = None,
    ) -> Record:
        body = AssistantMessage(
            parent=self._leaf, content=_content(content), stop_reason=stop_reason, model=model, usage=usage
        )
        return self._node(body)

    def tool_result(
        self,
        call_id: str,
        content: str | Sequence[Block],
        *,
        tool_name: str | None = None,
        is_error: bool = False,
        details: dict[str, Any] | None = None,
    ) -> Record:
        body = ToolResult(
            parent=self._leaf,
            call_id=call_id,
            content=_content(content),
            tool_name=tool_name,
            is_error=is_error,
            details=details,
        )
        return self._node(body)

    def compact(self, summary: str, *, first_kept: str | None, tokens_before: int | None = None) -> Record:
        return self._node(
            Compaction(parent=self._leaf, summary=summary, first_kept=first_kept, tokens_before=tokens_before)
        )

    def exclude(self, target: str, *, reason: str = "") -> Record:
        return self._node(ContextExclusion(parent=self._leaf, target=target, reason=reason))

    def custom(
        self, type: str, data: Any = None, *, in_context: bool = False, content: str | Sequence[Block] = ()
    ) -> Record:
        body = CustomEntry(
            parent=self._leaf, type=type, data=data, in_context=in_context, content=_content(content)
        )
        return self._node(body)

    def branch_from(self, node_id: str | None, *, reason: str) -> Record:
        """Move the leaf to `node_id` (an earlier node, or None for a new root); nothing is erased."""
        body = LeafMoved(from_leaf=self._leaf, to_leaf=node_id, reason=reason, actor=self._actor)
        return self._node(body)

    def reset(self, *, reason: str = "") -> Record:
        """Clear the leaf: the next node starts a new root and the model context starts empty."""
        return self._node(Reset(reason=reason, actor=self._actor))

    def _node(self, body: AnyBody) -> Record:
        return self.append(body).records[0]

    def _see(self, record: Record) -> None:
        if record.seq != self._head.seq + 1:
            name = self._journal.name
            msg = f"{name}: read seq {record.seq} after seq {self._head.seq}; the journal skipped records"
            raise IntegrityError(msg)
        self._head = Head.of(record)
        self._leaf = next_leaf(self._leaf, record.id, record.body)
