"""`Session`: the high-level writer an agent runtime holds for one conversation.

It knows the head and the leaf it last saw, builds records with fresh ids and UTC timestamps, and
presents its head on every append. If another writer won, the append raises StaleWriterError and the
session is unchanged; `sync()` catches up and the caller decides again.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from waybook._offload import DEFAULT_INLINE_LIMIT, offload
from waybook.journal import JsonlJournal
from waybook.journal._clock import SessionClock, new_id, utc_now
from waybook.journal._fork import plan_fork
from waybook.journal._in_memory import InMemoryJournal
from waybook.journal._protocol import PositionedJournal, SessionJournal
from waybook.journal._roles.session import next_leaf
from waybook.model._errors import IntegrityError, InvalidArgumentError, InvalidRecordError, ToolPairingError
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
    text,
)
from waybook.projections import Provider, ProviderContext, RequestContext, context_usage, provider_context

__all__ = ["Session", "ToolOutcome", "new_id", "utc_now"]

_POSITIONED = (JsonlJournal, InMemoryJournal)
"""The adapters known to have `position()`: checked with one C isinstance before the (slow)
runtime-checkable protocol, which still answers for any other journal."""


def custom_data(data: Any) -> Any:
    """`data` as a custom entry is given it. The codec checks it when the record is sealed, at every
    depth: JSON data is stored as given, a registered value by its wire tag, and anything else is
    refused naming the path to it (waybook.codecs._json_data), before anything is written."""
    return data


def content_of(value: str | Sequence[Block]) -> Content:
    """Text or blocks as content; anything else is passed on for the journal to refuse, typed."""
    if isinstance(value, str):
        return text(value)
    return tuple(value) if isinstance(value, list | tuple) else value  # type: ignore[return-value]


@attrs.frozen
class ToolOutcome:
    """What one tool call returned, for `Session.turn`: the call it answers and its output.

    `tool_name` defaults to the name the call gave.
    """

    call_id: str
    content: str | Sequence[Block]
    is_error: bool = False
    tool_name: str | None = None
    details: dict[str, Any] | None = None


def check_journal(journal: object, who: str) -> None:
    """Refuse (InvalidArgumentError) a `journal` that is not one: a path, a store, None."""
    if all(callable(getattr(journal, method, None)) for method in ("read", "append")):
        return
    hint = " (open the file first: JsonlJournal(path), or waybook._resume(path))"
    hint = hint if isinstance(journal, (str, bytes)) or hasattr(journal, "__fspath__") else ""
    kind = type(journal).__name__
    msg = f"{who} takes a journal (JsonlJournal, InMemoryJournal, store.open(id)), not {kind}{hint}"
    raise InvalidArgumentError(msg)


class Session:
    """Writes one conversation into a journal. Not thread-safe: use one Session per writer.

    A journal with a `position()` method (head and leaf together; both waybook adapters have one) is
    joined at its head without reading it; any other is read from the start to find the leaf.
    """

    def __init__(
        self,
        journal: SessionJournal,
        *,
        actor: str | None = None,
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
        blobs: Any = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> None:
        """`clock` defaults to a SessionClock (UTC, never backwards); `ids` to `new_id`. `blobs` (a
        store's `store.blobs`) holds content blocks over `inline_limit` bytes; without it such a block
        is refused (waybook._offload)."""
        check_journal(journal, "Session")
        self._journal = journal
        self._blobs = blobs
        self._inline_limit = inline_limit
        self._actor = actor
        self._session_clock: SessionClock | None = None
        if clock is None:
            clock = self._session_clock = SessionClock()
        self._clock = clock
        self._ids = ids
        self._head: Head = GENESIS
        self._leaf: str | None = None
        if not isinstance(journal, _POSITIONED) and not isinstance(journal, PositionedJournal):
            self.sync()
            return
        # The journal knows its head and leaf: start there instead of reading every record.
        self._head, self._leaf = journal.position()
        if self._session_clock is not None and self._head.seq:
            for last in journal.read(after=self._head.seq - 1, limit=1):
                self._session_clock.observe(last.at)

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
        blobs: Any = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
    ) -> Session:
        """A session on `journal`, writing its header first if the journal is empty."""
        session = cls(journal, actor=actor, clock=clock, ids=ids, blobs=blobs, inline_limit=inline_limit)
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

    def for_provider(self, provider: Provider) -> ProviderContext:
        """The model context at this session's leaf as `provider`'s request JSON, with every repair
        reported (waybook.projections.for_provider); the journal is not touched."""
        return provider_context(self._journal, provider, leaf=self._leaf, blobs=self._blobs)

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

    def turn(
        self,
        content: str | Sequence[Block],
        results: Sequence[ToolOutcome] = (),
        *,
        stop_reason: str | None = None,
        model: str | None = None,
        usage: dict[str, int] | None = None,
        request: RequestContext | None = None,
    ) -> AppendResult:
        """Append one assistant message and the results of the tool calls in it, as one atomic batch.

        `request` is the plan of the request whose `usage` this is: its revision is recorded with the
        message (`details.request`), for `waybook.projections.context_usage`.

        The message extends the leaf; each result's parent is the record before it, in the order given.
        Every tool call in `content` needs exactly one result, and every result must answer one of
        them: otherwise ToolPairingError, and nothing is written. `stop_reason` defaults to "tool_use"
        when there are calls and "end_turn" when there are none. One write (and under the fsync
        policies one fsync) for the whole turn.
        """
        given = content_of(content)
        check_blocks(given, self._journal.name)
        calls = {block.call_id: block for block in given if type(block) is ToolCallBlock}
        check_pairing(given, calls, results, self._journal.name)
        blocks = self._inline(given)  # only now may a block go to the blobs: the turn is valid
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
        for outcome in results:
            rid = self._ids()
            body = ToolResult(
                parent=parent,
                call_id=outcome.call_id,
                content=self._inline(outcome.content),
                tool_name=calls[outcome.call_id].name if outcome.tool_name is None else outcome.tool_name,
                is_error=outcome.is_error,
                details=outcome.details,
            )
            batch.append(NewRecord(id=rid, at=at, body=body))
            parent = rid
        result = self._journal.append(batch, expected=self._head)
        for record in result.records:
            self._see(record)
        return result

    # --- one entry at a time; each returns the committed record -------------------------------

    def user(self, content: str | Sequence[Block]) -> Record:
        return self._node(UserMessage(parent=self._leaf, content=self._inline(content)))

    def system(self, content: str | Sequence[Block]) -> Record:
        return self._node(SystemMessage(parent=self._leaf, content=self._inline(content)))

    def assistant(
        self,
        content: str | Sequence[Block],
        *,
        stop_reason: str = "end_turn",
        model: str | None = None,
        usage: dict[str, int] | None = None,
        request: RequestContext | None = None,
    ) -> Record:
        """One assistant message; `request` as for `turn`."""
        body = AssistantMessage(
            parent=self._leaf,
            content=self._inline(content),
            stop_reason=stop_reason,
            model=model,
            usage=usage,
            details=request_details(request, self._leaf),
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
            content=self._inline(content),
            tool_name=tool_name,
            is_error=is_error,
            details=details,
        )
        return self._node(body)

    def compact(
        self,
        summary: str,
        *,
        first_kept: str | None,
        tokens_before: int | None = None,
        revision: str | None = None,
    ) -> Record:
        """A compaction at the leaf. It records the request-context revision it summarized (`revision`,
        default: the last measured on the path, `context_usage`) in `details.summarized_revision`; the
        pinned memory is not touched, so the next request carries the same memory contribution."""
        if revision is None and self._head.seq:
            revision = context_usage(self._journal.read(limit=self._head.seq), self._leaf).revision
        details = None if revision is None else {"summarized_revision": revision}
        return self._node(
            Compaction(
                parent=self._leaf,
                summary=summary,
                first_kept=first_kept,
                tokens_before=tokens_before,
                details=details,
            )
        )

    def exclude(self, target: str, *, reason: str = "") -> Record:
        return self._node(ContextExclusion(parent=self._leaf, target=target, reason=reason))

    def custom(
        self, type: str, data: Any = None, *, in_context: bool = False, content: str | Sequence[Block] = ()
    ) -> Record:
        """A custom entry of `type`. `data` is JSON data, or a value of a class registered with
        `waybook.codecs.register_value`, stored under its wire tag (read it back with
        `waybook.codecs.decode_value(record.body.data)`); any other object raises UnregisteredValueError
        and nothing is written."""
        body = CustomEntry(
            parent=self._leaf,
            type=type,
            data=custom_data(data),
            in_context=in_context,
            content=self._inline(content),
        )
        return self._node(body)

    def branch_from(self, node_id: str | None, *, reason: str) -> Record:
        """Move the leaf to `node_id` (an earlier node, or None for a new root); nothing is erased."""
        body = LeafMoved(from_leaf=self._leaf, to_leaf=node_id, reason=reason, actor=self._actor)
        return self._node(body)

    def link_subagent(
        self,
        journal: str,
        *,
        at: str | None = None,
        call_id: str | None = None,
        agent: str | None = None,
        reason: str = "",
    ) -> Record:
        """Record that the node `at` (default: the leaf), at its tool call `call_id`, started a sub-agent
        whose session is the journal `journal`. Does not move the leaf; `waybook tree` and `show` follow it.
        """
        node = self._leaf if at is None else at
        if node is None:
            msg = "a sub-agent link needs a node to hang from: append the tool call first, or pass at="
            raise InvalidRecordError(msg, journal=self._journal.name)
        return self._node(
            SubagentLink(node=node, journal=journal, call_id=call_id, agent=agent, reason=reason)
        )

    def reset(self, *, reason: str = "") -> Record:
        """Clear the leaf: the next node starts a new root and the model context starts empty."""
        return self._node(Reset(reason=reason, actor=self._actor))

    def fork(self, node_id: str, journal: SessionJournal, *, journal_id: str | None = None) -> Session:
        """A new session in the empty `journal` whose history is this one's up to the node `node_id`.

        The records up to and including the node are copied verbatim (same ids, timestamps and bodies, at
        the same seqs) behind a new header whose metadata `forked_from` names this journal and the node's
        seq and digest (`waybook.journal.check_fork` proves it against this journal). The leaf of the new
        session is the node. Everything is written in one batch; this journal is only read. Raises
        UnknownNodeError for an id that is not a node of this journal (as of `head`).
        """
        if journal.head() != GENESIS:
            msg = f"a fork is written into an empty journal; {journal.name} has records already"
            raise InvalidRecordError(msg, journal=journal.name)
        source = self._journal.read(limit=self._head.seq) if self._head.seq else iter(())
        plan = plan_fork(
            source, node_id, name=self._journal.name, journal_id=journal_id or self._ids(), at=self._clock()
        )
        batch = [NewRecord(id=self._ids(), at=plan.header_at, body=plan.header), *plan.copies]
        journal.append(batch, expected=GENESIS)
        return Session(
            journal,
            actor=self._actor,
            clock=self._fork_clock(),
            ids=self._ids,
            blobs=self._blobs,
            inline_limit=self._inline_limit,
        )

    def _fork_clock(self) -> Callable[[], str] | None:
        return None if self._session_clock is not None else self._clock

    def _inline(self, value: str | Sequence[Block]) -> Content:
        """The content as given, with blocks over the inline limit stored as blobs (waybook._offload)."""
        content = value if type(value) is tuple else content_of(value)
        if type(content) is not tuple:
            return content  # not content at all: the journal refuses it, typed
        quarter = self._inline_limit >> 2  # a str of n characters is at most 4n bytes of UTF-8
        for block in content:  # (a loop, not all(genexpr): this runs on nearly every append)
            if type(block) is not TextBlock or len(block.text) > quarter:
                break
        else:
            return content  # nothing near the limit (nearly every message): nothing to measure
        content, _refs = offload(content, blobs=self._blobs, limit=self._inline_limit)
        return content  # the refs' leases expire on their own: see waybook.stores._blobs

    def _node(self, body: AnyBody) -> Record:
        """Append one body: `append` without the batch loop (this is nearly every append)."""
        head = self._head
        new = NewRecord(id=self._ids(), at=self._clock(), body=body)
        result = self._journal.append((new,), expected=head)
        (record,) = result.records
        if record.seq != head.seq + 1:
            self._see(record)  # raises: the journal skipped records
        self._head = result.head
        self._leaf = record.id if body.IS_NODE else next_leaf(self._leaf, record.id, body)
        return record

    def _see(self, record: Record) -> None:
        if record.seq != self._head.seq + 1:
            name = self._journal.name
            msg = f"{name}: read seq {record.seq} after seq {self._head.seq}; the journal skipped records"
            raise IntegrityError(msg)
        self._head = Head.of(record)
        self._leaf = next_leaf(self._leaf, record.id, record.body)


def request_details(request: RequestContext | None, leaf: str | None) -> dict[str, Any] | None:
    """An assistant message's `details` naming the request context its usage measured."""
    if request is None:
        return None
    if not isinstance(request, RequestContext):
        msg = f"request= takes a waybook.projections.RequestContext, not {type(request).__name__}"
        raise InvalidRecordError(msg)
    return {"request": request.describe(leaf)}


def check_blocks(blocks: object, journal: str) -> None:
    """A turn's content must be text or content blocks: refused typed before anything is written."""
    if not isinstance(blocks, tuple):
        msg = f"a turn's content must be text or a list of content blocks, not {type(blocks).__name__}"
        raise InvalidRecordError(msg, journal=journal)


def check_pairing(
    blocks: Content, calls: dict[str, ToolCallBlock], results: Sequence[ToolOutcome], journal: str
) -> None:
    """Refuse a turn whose results do not answer its calls one for one, naming what is wrong."""
    if len(calls) != sum(1 for block in blocks if type(block) is ToolCallBlock):
        msg = "the assistant message has two tool calls with the same id; give each call its own id"
        raise ToolPairingError(msg, journal=journal)
    answered: set[str] = set()
    for outcome in results:
        if type(outcome) is not ToolOutcome:
            msg = f"turn results are ToolOutcome values, got {type(outcome).__name__}"
            raise ToolPairingError(msg, journal=journal)
        if outcome.call_id not in calls:
            msg = (
                f"a result answers call {outcome.call_id!r}, which is not a tool call of this message "
                f"(its calls: {sorted(calls)}); nothing was written"
            )
            raise ToolPairingError(msg, journal=journal)
        if outcome.call_id in answered:
            msg = f"call {outcome.call_id!r} has two results; give each call exactly one; nothing was written"
            raise ToolPairingError(msg, journal=journal)
        answered.add(outcome.call_id)
    missing = [call_id for call_id in calls if call_id not in answered]
    if missing:
        msg = (
            f"tool calls {missing} have no result; a turn appends every call's result with its message "
            "(use Session.assistant and Session.tool_result to write them apart); nothing was written"
        )
        raise ToolPairingError(msg, journal=journal)
