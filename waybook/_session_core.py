"""`SessionCore`: the decisions of a session writer, without I/O (sans-I/O, as h11 is for HTTP).

A writer decides here, once: fresh ids and timestamps (a clock that never goes backwards), the head
and leaf it last saw, the body each entry makes from that leaf, which content stays inline and which
goes to the blobs, what a turn and a fork write, and every check a call fails before anything is
written. The core reads and writes nothing. `Session` and `AsyncSession` move records to and from the
journal (and blocks to the blobs) and feed back what they read and what committed: `join`, `saw`,
`caught_up`, `committed`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import attrs
import msgspec

from waybook._masking import Found, SecretMask
from waybook._offload import DEFAULT_INLINE_LIMIT
from waybook.codecs import NotJsonDataError, json_data
from waybook.journal import (
    FORK_KEY,
    PositionedJournal,
    SessionClock,
    new_id,
    next_leaf,
    plan_fork,
    provenance,
)
from waybook.model import (
    GENESIS,
    SEALED_SCHEMA,
    AnyBody,
    AppendResult,
    AssistantMessage,
    Block,
    Compaction,
    Content,
    ContextExclusion,
    CustomEntry,
    Head,
    Header,
    IntegrityError,
    InvalidArgumentError,
    InvalidRecordError,
    LeafMoved,
    NewRecord,
    Record,
    Reset,
    SubagentLink,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolPairingError,
    ToolResult,
    UserMessage,
    text,
)
from waybook.projections import RequestContext, SubagentParent, context_usage

if TYPE_CHECKING:
    from waybook.stores import BlobStore

__all__ = [
    "Batch",
    "Entry",
    "Fork",
    "SessionCore",
    "ToolOutcome",
    "WriterOptions",
    "check_journal",
    "knows_position",
]

Given = str | Sequence[Block]
"""Content as a caller gives it: text, or content blocks."""

History = Iterable[Record] | None
"""The records up to the head, read for an entry that asked for them (`Entry.reads_history`)."""

Build = Callable[["SessionCore", Content, History], AnyBody]
"""How an entry's body is made when it commits: from the core (its leaf then), the content (offloaded
if it had to be) and the history (if the entry asked for it)."""


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


@attrs.frozen
class WriterOptions:
    """What a writer is built with besides its journal (the keywords of `Session` and `AsyncSession`).

    `clock` None means a `SessionClock` of the writer's own (UTC, never backwards).
    """

    actor: str | None = None
    clock: Callable[[], str] | None = None
    ids: Callable[[], str] = new_id
    blobs: BlobStore | None = None
    inline_limit: int = DEFAULT_INLINE_LIMIT
    mask: SecretMask | None = None


class Entry(msgspec.Struct, frozen=True):
    """One record a writer appends: its content, as content blocks, and whether a block of it may be over
    the inline limit (`offloads`: then the writer runs `waybook._offload.offload` on it, which stores
    what is over the limit in the blobs, or refuses it, typed); and how its body is made from that
    content when it commits, so that its parent is the leaf at that moment. An entry that
    `reads_history` is given the records up to the head as well. (A msgspec struct: built on nearly
    every append, and built in C.)"""

    content: Content
    offloads: bool
    build: Build
    reads_history: bool = False


class Batch:
    """Records a writer appends together: their contents, each as content blocks with whether it
    `offloads` (as an `Entry`'s), and how the records are made from the contents when the batch
    commits."""

    __slots__ = ("build", "contents", "offloads")

    def __init__(
        self,
        given: Sequence[Given],
        inline_limit: int,
        build: Callable[[Sequence[Content]], list[NewRecord]],
    ) -> None:
        self.contents = [content_of(content) for content in given]
        self.offloads = [offloads(content, inline_limit) for content in self.contents]
        self.build = build


def offloads(content: Content, inline_limit: int) -> bool:
    """Whether a block of `content` may be over the inline limit (decided without encoding a thing)."""
    if type(content) is not tuple:
        return False  # not content at all: the journal refuses it, typed
    quarter = inline_limit >> 2  # a str of n characters is at most 4n bytes of UTF-8
    for block in content:  # noqa: SIM110 (a loop, not any(genexpr): this runs on nearly every append)
        if type(block) is not TextBlock or len(block.text) > quarter:
            return True
    return False  # nothing near the limit (nearly every message): nothing to measure


class Fork:
    """A fork the core decided to write: the head to append it at, and its records (a new header naming
    where it came from, then the source's records up to and including the node, verbatim), made from the
    source's records up to the head, which the writer reads."""

    __slots__ = ("expected", "records")

    def __init__(self, expected: Head, records: Callable[[Iterable[Record]], list[NewRecord]]) -> None:
        self.expected = expected
        self.records = records


_POSITIONED: set[type] = set()
"""Classes whose instances are `PositionedJournal`s, learned from the runtime protocol."""


def knows_position(journal: object) -> TypeGuard[PositionedJournal]:
    """Whether `journal` is a `PositionedJournal` (it has `position()`: head and leaf together).

    The runtime protocol's member-by-member check costs about 20 us; a class that defines `position`
    itself is asked once and remembered, so joining a journal of a known class costs a set look-up.
    """
    cls = type(journal)
    if cls in _POSITIONED:
        return True
    if not isinstance(journal, PositionedJournal):
        return False
    if callable(getattr(cls, "position", None)):
        _POSITIONED.add(cls)
    return True


def check_journal(journal: object, who: str) -> None:
    """Refuse (InvalidArgumentError) a `journal` that is not one: a path, a store, None."""
    if callable(getattr(journal, "read", None)) and callable(getattr(journal, "append", None)):
        return  # (two look-ups, not all(genexpr): a writer is built on every open)
    hint = " (open the file first: JsonlJournal(path), or waybook._resume(path))"
    hint = hint if isinstance(journal, (str, bytes)) or hasattr(journal, "__fspath__") else ""
    kind = type(journal).__name__
    msg = f"{who} takes a journal (JsonlJournal, InMemoryJournal, store.open(id)), not {kind}{hint}"
    raise InvalidArgumentError(msg)


class SessionCore:
    """What one writer knows and decides; fed what the journal holds, it returns what to write.

    `head` and `leaf` are what the writer last saw (the head it presents on its next append, and the
    parent of the next node); only the event methods (`join`, `saw`, `committed`) move them.
    """

    __slots__ = (
        "_session_clock",
        "actor",
        "blobs",
        "clock",
        "head",
        "ids",
        "inline_limit",
        "leaf",
        "mask",
        "name",
    )

    def __init__(
        self,
        name: str,
        actor: str | None,
        clock: Callable[[], str] | None,
        ids: Callable[[], str],
        blobs: BlobStore | None,
        inline_limit: int,
        /,
    ) -> None:
        """`name` is the journal's, for messages; the rest are `WriterOptions`' fields in order (given
        apart and by position: a writer is built on every open, and this halves the cost of building
        its core)."""
        self.name = name
        self.actor = actor
        self.blobs = blobs
        self.inline_limit = inline_limit
        self.ids = ids
        self._session_clock: SessionClock | None = None
        if clock is None:
            clock = self._session_clock = SessionClock()
        self.clock: Callable[[], str] = clock
        self.head: Head = GENESIS
        self.leaf: str | None = None
        self.mask: SecretMask | None = None
        """Masks secrets before anything is written (`redact=`); None: nothing is masked."""

    # --- events: what the journal holds --------------------------------------------------------------

    def join(self, head: Head, leaf: str | None) -> int | None:
        """Start at a journal's position instead of reading it. Returns the seq of the record whose time
        the clock must see before it stamps anything (None: nothing to read)."""
        self.head, self.leaf = head, leaf
        return head.seq if head.seq and self._session_clock is not None else None

    def saw(self, record: Record) -> None:
        """A record read or committed after `head`: it becomes the head. Raises IntegrityError when the
        journal skipped records."""
        if record.seq != self.head.seq + 1:
            msg = f"{self.name}: read seq {record.seq} after seq {self.head.seq}; the journal skipped records"
            raise IntegrityError(msg)
        self.head = Head.of(record)
        self.leaf = next_leaf(self.leaf, record.id, record.body)

    def caught_up(self, last: Record | None) -> None:
        """Reading stopped after `last` (None: nothing was read): never stamp a record earlier than it."""
        if last is not None and self._session_clock is not None:
            self._session_clock.observe(last.at)

    def committed(self, result: AppendResult) -> None:
        """A batch this writer appended committed."""
        for record in result.records:
            self.saw(record)

    def committed_one(self, result: AppendResult) -> Record:
        """One record this writer appended committed (`committed` without the loop: nearly every append)."""
        (record,) = result.records
        if record.seq != self.head.seq + 1:
            self.saw(record)  # raises: the journal skipped records
        self.head = result.head
        body = record.body
        self.leaf = record.id if body.IS_NODE else next_leaf(self.leaf, record.id, body)
        return record

    # --- decisions: what to write --------------------------------------------------------------------

    def stamp(self, body: AnyBody) -> NewRecord:
        """`body` as a new record: a fresh id, then the time."""
        return NewRecord(id=self.ids(), at=self.clock(), body=body)

    def header(
        self, journal_id: str | None, creator: str, metadata: dict[str, Any] | None, role: str
    ) -> Header:
        """The header a new journal starts with (`create`): `journal_id`, or a fresh id."""
        return Header(
            journal=journal_id or self.ids(),
            creator=creator,
            metadata=dict(metadata or {}),
            role=role,
            schema=SEALED_SCHEMA,
        )

    def bodies(self, bodies: Sequence[AnyBody]) -> Batch:
        """`append`'s bodies, each stamped in turn, as one batch."""
        return Batch((), 0, lambda _contents: [self.stamp(body) for body in bodies])

    def _entry(self, given: Given, build: Build) -> Entry:
        """An entry carrying `given` as content blocks, and whether they may be over the inline limit."""
        content = given if type(given) is tuple else content_of(given)
        return Entry(content, offloads(content, self.inline_limit), build)

    def user(self, content: Given) -> Entry:
        return self._entry(content, _user_message)

    def system(self, content: Given) -> Entry:
        return self._entry(content, _system_message)

    def assistant(
        self,
        content: Given,
        stop_reason: str,
        model: str | None,
        usage: dict[str, int] | None,
        request: RequestContext | None,
    ) -> Entry:
        request_details(request, None)  # a wrong type is refused before anything is stored or written
        return self._entry(
            content,
            lambda core, inlined, _: AssistantMessage(
                parent=core.leaf,
                content=inlined,
                stop_reason=stop_reason,
                model=model,
                usage=usage,
                details=request_details(request, core.leaf),
            ),
        )

    def tool_result(
        self,
        call_id: str,
        content: Given,
        tool_name: str | None,
        is_error: bool,
        details: dict[str, Any] | None,
    ) -> Entry:
        return self._entry(
            content,
            lambda core, inlined, _: ToolResult(
                parent=core.leaf,
                call_id=call_id,
                content=inlined,
                tool_name=tool_name,
                is_error=is_error,
                details=details,
            ),
        )

    def compact(
        self, summary: str, first_kept: str | None, tokens_before: int | None, revision: str | None
    ) -> Entry:
        """A compaction at the leaf, recording the request-context revision it summarized: `revision`, or
        the last measured on the path (read from the history)."""

        def build(core: SessionCore, _: Content, history: History) -> AnyBody:
            summarized = revision
            if summarized is None and history is not None:
                summarized = context_usage(history, core.leaf).revision
            details = None if summarized is None else {"summarized_revision": summarized}
            return Compaction(
                parent=core.leaf,
                summary=summary,
                first_kept=first_kept,
                tokens_before=tokens_before,
                details=details,
            )

        return Entry((), False, build, reads_history=revision is None)

    def exclude(self, target: str, reason: str) -> Entry:
        return Entry(
            (), False, lambda core, _, __: ContextExclusion(parent=core.leaf, target=target, reason=reason)
        )

    def custom(self, type: str, data: Any, in_context: bool, content: Given) -> Entry:
        """A custom entry. Its data is checked at every depth when the record is sealed, before a byte is
        written (the codec fails closed); when its content goes to the blobs first, the data is checked
        here, so that nothing is stored for an entry that will be refused."""
        given = [data]
        entry = self._entry(
            content,
            lambda core, inlined, _: CustomEntry(
                parent=core.leaf, type=type, data=given[0], in_context=in_context, content=inlined
            ),
        )
        if entry.offloads:
            given[0] = custom_data(data, self.name)
        return entry

    def branch_from(self, node_id: str | None, reason: str) -> Entry:
        if node_id is not None and type(node_id) is not str:
            hint = ": pass record.id" if isinstance(getattr(node_id, "id", None), str) else ""
            msg = f"branch_from takes a node id (a str) or None, not {type(node_id).__name__}{hint}"
            raise InvalidArgumentError(msg)
        return Entry(
            (),
            False,
            lambda core, _, __: LeafMoved(
                from_leaf=core.leaf, to_leaf=node_id, reason=reason, actor=core.actor
            ),
        )

    def link_subagent(
        self, journal: str, at: str | None, call_id: str | None, agent: str | None, reason: str
    ) -> Entry:
        def build(core: SessionCore, _: Content, __: History) -> AnyBody:
            node = core.leaf if at is None else at
            if node is None:
                msg = "a sub-agent link needs a node to hang from: append the tool call first, or pass at="
                raise InvalidRecordError(msg, journal=core.name)
            return SubagentLink(node=node, journal=journal, call_id=call_id, agent=agent, reason=reason)

        return Entry((), False, build)

    def subagent(self, asked: SubagentRequest, own_header: AnyBody | None) -> tuple[str, str, dict[str, Any]]:
        """A sub-agent's session this session starts at the node `asked.at` (default: the leaf): its
        journal id, the node, and its header's metadata naming this journal, the node and the call
        (`subagent_of`). `own_header` is this journal's first record's body (its id is the parent's)."""
        node = self.leaf if asked.at is None else asked.at
        if node is None:
            msg = "a sub-agent needs a node to hang from: append the tool call first, or pass at="
            raise InvalidRecordError(msg, journal=self.name)
        if not isinstance(own_header, Header):
            msg = "a sub-agent is started from a session with a header: create this session first"
            raise InvalidRecordError(msg, journal=self.name)
        named = SubagentParent(own_header.journal, node, asked.call_id).metadata()
        return asked.journal_id or self.ids(), node, {**(asked.metadata or {}), **named}

    def reset(self, reason: str) -> Entry:
        return Entry((), False, lambda core, _, __: Reset(reason=reason, actor=core.actor))

    def turn(
        self,
        content: Given,
        results: Sequence[ToolOutcome],
        stop_reason: str | None,
        model: str | None,
        usage: dict[str, int] | None,
        request: RequestContext | None,
    ) -> Batch:
        """An assistant message and the results of its tool calls, checked before anything is stored or
        written (`Session.turn`): the message extends the leaf, each result's parent is the record before
        it; one timestamp for all."""
        request_details(request, None)
        given = content_of(content)
        check_blocks(given, self.name)
        calls = {block.call_id: block for block in given if type(block) is ToolCallBlock}
        check_pairing(given, calls, results, self.name)

        def build(inlined: Sequence[Content]) -> list[NewRecord]:
            message_id = self.ids()
            message = AssistantMessage(
                parent=self.leaf,
                content=inlined[0],
                stop_reason=stop_reason or ("tool_use" if calls else "end_turn"),
                model=model,
                usage=usage,
                details=request_details(request, self.leaf),
            )
            at = self.clock()
            batch = [NewRecord(id=message_id, at=at, body=message)]
            parent = message_id
            for outcome, output in zip(results, inlined[1:], strict=True):
                rid = self.ids()
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
            return batch

        return Batch((given, *(outcome.content for outcome in results)), self.inline_limit, build)

    def fork(
        self,
        node_id: str,
        *,
        into: str,
        into_head: Head,
        journal_id: str | None,
        into_header: AnyBody | None = None,
    ) -> Fork:
        """A fork of this session at the node `node_id` into the journal named `into`, whose head is
        `into_head` (and, when it holds one record, `into_header` that record's body).

        An empty journal gets a new header naming the source (`forked_from`; its id `journal_id`, or a
        fresh one). A journal holding only its own session header keeps it, its id is the fork's, and an
        annotation of the node after the copies names the source (waybook.journal._fork). Anything else
        raises InvalidRecordError before anything is read; a `journal_id` other than the header's, an
        InvalidArgumentError.

        The writer reads this journal up to `head` and hands the records to `Fork.records`, which raises
        UnknownNodeError for an id that is not a node of it (waybook.journal._fork).
        """
        if into_head == GENESIS:

            def records(source: Iterable[Record]) -> list[NewRecord]:
                fork_id, at = journal_id or self.ids(), self.clock()
                plan = plan_fork(source, node_id, name=self.name, journal_id=fork_id, at=at)
                return [NewRecord(id=self.ids(), at=plan.header_at, body=plan.header), *plan.copies]

            return Fork(GENESIS, records)
        header = _own_header(into, into_head, into_header)
        if journal_id is not None and journal_id != header.journal:
            msg = (
                f"{into} already names itself {header.journal!r} in its header; a fork into it takes that id "
                f"(leave journal_id= out), not {journal_id!r}; nothing was written"
            )
            raise InvalidArgumentError(msg)

        def after_header(source: Iterable[Record]) -> list[NewRecord]:
            plan = plan_fork(source, node_id, name=self.name, journal_id=header.journal, at=self.clock())
            return [*plan.copies, provenance(plan, self.ids())]

        return Fork(into_head, after_header)

    def fork_options(self) -> WriterOptions:
        """The options of the session a fork returns: this one's, with a clock of its own unless this
        session was given one."""
        clock = None if self._session_clock is not None else self.clock
        return WriterOptions(self.actor, clock, self.ids, self.blobs, self.inline_limit, self.mask)

    # --- secrets masked before anything is written (waybook._masking) -------------------------------

    def masked_entry(self, entry: Entry) -> tuple[Content, bool, Found]:
        """An entry's content with its secrets masked (before it may be offloaded to a blob), whether it
        may need offloading, and what was masked where (for `masked_body`)."""
        mask = self.mask
        if mask is None:
            return entry.content, entry.offloads, []
        content, found = mask.content(entry.content)
        return content, (offloads(content, self.inline_limit) if found else entry.offloads), found

    def masked_contents(self, batch: Batch) -> tuple[list[Content], list[bool], list[Found]]:
        """`masked_entry` for each content of a batch."""
        if self.mask is None:
            return batch.contents, batch.offloads, [[] for _ in batch.contents]
        contents, big, found = [], [], []
        for content, offload in zip(batch.contents, batch.offloads, strict=True):
            masked, more = self.mask.content(content)
            contents.append(masked)
            big.append(offloads(masked, self.inline_limit) if more else offload)
            found.append(more)
        return contents, big, found

    def masked_body(self, body: AnyBody, found: Found) -> AnyBody:
        """`body` with every secret in it masked and the record of it in its details."""
        return body if self.mask is None else self.mask.body(body, found)

    def masked_records(
        self, records: list[NewRecord], contents: Sequence[Content], found: Sequence[Found]
    ) -> list[NewRecord]:
        """A built batch's records masked; each record made of one of `contents` (the very object) gets
        what masking that content found."""
        if self.mask is None:
            return records
        by_content = {id(content): more for content, more in zip(contents, found, strict=True) if more}
        masked = []
        for record in records:
            more = by_content.get(id(getattr(record.body, "content", None)), [])
            body = self.mask.body(record.body, more)
            masked.append(record if body is record.body else msgspec.structs.replace(record, body=body))
        return masked


@attrs.frozen(kw_only=True)
class SubagentRequest:
    """What `start_subagent` was asked, as its keywords say: the sub-agent journal's id, the node it
    hangs from, the tool call that started it, and the agent and reason its link records."""

    journal_id: str | None
    at: str | None
    call_id: str | None
    agent: str | None
    reason: str
    metadata: dict[str, Any] | None


@attrs.frozen
class ForkTarget:
    """Where `fork_to` creates a fork: a new JSONL file (`path`), or a new journal of `store`; and the
    id the fork's header takes."""

    journal_id: str
    path: Path | None = None
    store: Any = None

    @property
    def name(self) -> str:
        return str(self.path) if self.path is not None else self.journal_id


def fork_target(target: object, journal_id: str | None) -> ForkTarget:
    """`fork_to`'s target, checked before anything is read: a path (the header's id defaults to the
    file's stem), or `(store, journal_id)` (the header's id is that id)."""
    if isinstance(target, str | os.PathLike) and not isinstance(target, bytes):
        path = Path(target)
        return ForkTarget(journal_id or path.stem, path=path)
    if (
        isinstance(target, tuple)
        and len(target) == 2
        and isinstance(target[1], str)
        and callable(getattr(target[0], "create", None))
    ):
        store, store_id = target
        if journal_id is not None and journal_id != store_id:
            msg = (
                f"fork_to((store, {store_id!r})): the new journal's header takes its id in the store; leave "
                f"journal_id= out (not {journal_id!r}); nothing was written"
            )
            raise InvalidArgumentError(msg)
        return ForkTarget(store_id, store=store)
    msg = (
        "fork_to takes the path of a new JSONL file, or (store, journal_id) for a new journal of a store, "
        f"not {type(target).__name__}; nothing was written"
    )
    raise InvalidArgumentError(msg)


def _own_header(into: str, head: Head, body: AnyBody | None) -> Header:
    """The header of a journal a fork may keep: one that holds only its own session header (no fork's)."""
    header = body if head.seq == 1 and isinstance(body, Header) else None
    if header is not None and header.role == "session" and FORK_KEY not in header.metadata:
        return header
    msg = (
        f"a fork is written into an empty journal, or one that holds only its own session header; {into} "
        f"has {head.seq} records; nothing was written"
    )
    raise InvalidRecordError(msg, journal=into)


def _user_message(core: SessionCore, content: Content, _: History) -> AnyBody:
    return UserMessage(parent=core.leaf, content=content)


def _system_message(core: SessionCore, content: Content, _: History) -> AnyBody:
    return SystemMessage(parent=core.leaf, content=content)


def custom_data(data: Any, journal: str = "") -> Any:
    """`data` as a custom entry stores it: JSON data as given, registered values (at any depth) by their
    wire tags; anything else raises NotJsonDataError naming the journal and the path (`data.steps[0]`)."""
    try:
        return json_data(data)
    except NotJsonDataError as exc:
        raise type(exc)(exc.reason, path=exc.path, journal=journal) from None


def content_of(value: Given) -> Content:
    """Text or blocks as content; anything else is passed on for the journal to refuse, typed."""
    if isinstance(value, str):
        return text(value)
    return tuple(value) if isinstance(value, list | tuple) else value  # type: ignore[return-value]


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
