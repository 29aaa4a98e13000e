"""`SessionMethods`: the methods `Session` and `AsyncSession` share, written once.

Each method has the session core (waybook._session_core) make an entry or a batch of its arguments and
hands it to the writer, which does the I/O: `Session` writes it at once and returns the record;
`AsyncSession` runs the method when the call is awaited (`awaited`: its checks too, as in an `async
def`) and awaits the write. The type parameters say which: the journal the writer takes, what an entry method
returns (a `Record`, or an awaitable of one), what a batch returns (an `AppendResult`, or an awaitable
of one) and what `create` and `fork` return (the writer, or an awaitable of it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Self, TypeVar

from waybook._masking import Redact, secret_mask
from waybook._offload import DEFAULT_INLINE_LIMIT
from waybook._session_core import (
    Batch,
    Entry,
    ForkTarget,
    SessionCore,
    SubagentRequest,
    ToolOutcome,
    WriterOptions,
    check_journal,
    fork_target,
)
from waybook.journal import new_id

if TYPE_CHECKING:
    from waybook.journal import AsyncSessionJournal, SessionJournal
    from waybook.model import AnyBody, Block, Head, Header
    from waybook.projections import RequestContext
    from waybook.stores import BlobStore

JournalT = TypeVar("JournalT", bound="SessionJournal | AsyncSessionJournal")
WrittenT = TypeVar("WrittenT")
BatchT = TypeVar("BatchT")
MadeT = TypeVar("MadeT")


def stored_id(journal: object) -> str | None:
    """The id of a store's journal (a `FedJournal`'s or `DatabaseJournal`'s `journal_id`, also under a
    `ThreadedJournal`), which its header must name; None for a journal of no store (a file, memory)."""
    inner = getattr(journal, "blocking", journal)
    value = getattr(inner, "journal_id", None)
    return value if type(value) is str else None


class SessionMethods(ABC, Generic[JournalT, WrittenT, BatchT, MadeT]):
    """Writes one conversation into a journal: the methods of `Session` and `AsyncSession`."""

    _WHO: ClassVar[str]
    """The writer's name in messages."""

    def __init__(
        self,
        journal: JournalT,
        *,
        actor: str | None = None,
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
        blobs: BlobStore | None = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        redact: Redact = False,
    ) -> None:
        """`clock` defaults to a SessionClock (UTC, never backwards); `ids` to `new_id`. `blobs` (a
        store's `store.blobs`) holds content blocks over `inline_limit` bytes; without it such a block
        is refused (waybook._offload). `redact` masks secrets before anything is written: True with the
        built-in detector (the one `export --redact` uses), or a list of extra regular expressions to
        mask too (waybook._masking; docs/journal-contract.md says where the record of it goes)."""
        check_journal(journal, self._WHO)
        mask = secret_mask(redact, who=self._WHO)
        self._core = SessionCore(journal.name, actor, clock, ids, blobs, inline_limit)
        self._core.mask = mask
        self._attach(journal)

    @classmethod
    def create(
        cls,
        journal: JournalT,
        *,
        journal_id: str | None = None,
        creator: str = "waybook",
        metadata: dict[str, Any] | None = None,
        role: str = "session",
        actor: str | None = None,
        clock: Callable[[], str] | None = None,
        ids: Callable[[], str] = new_id,
        blobs: BlobStore | None = None,
        inline_limit: int = DEFAULT_INLINE_LIMIT,
        redact: Redact = False,
    ) -> MadeT:
        """A session on `journal`, writing its header first if the journal is empty. The header names
        `journal_id`; by default a store's journal's own id (a store refuses a header naming another),
        else a fresh id."""
        mask = secret_mask(redact, who=cls._WHO)
        options = WriterOptions(
            actor=actor, clock=clock, ids=ids, blobs=blobs, inline_limit=inline_limit, mask=mask
        )
        named = journal_id if journal_id is not None else stored_id(journal)
        return cls._create(journal, options, lambda core: core.header(named, creator, metadata, role))

    @property
    def head(self) -> Head:
        """The head this session last saw (what it presents on its next append)."""
        return self._core.head

    @property
    def leaf(self) -> str | None:
        """The current leaf as of `head`: the parent of the next node."""
        return self._core.leaf

    def append(self, *bodies: AnyBody) -> BatchT:
        """Append bodies as one atomic batch at this session's head. Nodes must name their parents."""
        return self._write_batch(self._core.bodies(bodies))

    def turn(
        self,
        content: str | Sequence[Block],
        results: Sequence[ToolOutcome] = (),
        *,
        stop_reason: str | None = None,
        model: str | None = None,
        usage: dict[str, int] | None = None,
        request: RequestContext | None = None,
    ) -> BatchT:
        """Append one assistant message and the results of the tool calls in it, as one atomic batch.

        `request` is the plan of the request whose `usage` this is: its revision is recorded with the
        message (`details.request`), for `waybook.projections.context_usage`.

        The message extends the leaf; each result's parent is the record before it, in the order given.
        Every tool call in `content` needs exactly one result, and every result must answer one of
        them: otherwise ToolPairingError, and nothing is written. `stop_reason` defaults to "tool_use"
        when there are calls and "end_turn" when there are none. One write (and under the fsync
        policies one fsync) for the whole turn.
        """
        return self._write_batch(self._core.turn(content, results, stop_reason, model, usage, request))

    # --- one entry at a time; each returns the committed record -------------------------------------

    def user(self, content: str | Sequence[Block]) -> WrittenT:
        return self._write(self._core.user(content))

    def system(self, content: str | Sequence[Block]) -> WrittenT:
        return self._write(self._core.system(content))

    def assistant(
        self,
        content: str | Sequence[Block],
        *,
        stop_reason: str = "end_turn",
        model: str | None = None,
        usage: dict[str, int] | None = None,
        request: RequestContext | None = None,
    ) -> WrittenT:
        """One assistant message; `request` as for `turn`."""
        return self._write(self._core.assistant(content, stop_reason, model, usage, request))

    def tool_result(
        self,
        call_id: str,
        content: str | Sequence[Block],
        *,
        tool_name: str | None = None,
        is_error: bool = False,
        details: dict[str, Any] | None = None,
    ) -> WrittenT:
        return self._write(self._core.tool_result(call_id, content, tool_name, is_error, details))

    def compact(
        self,
        summary: str,
        *,
        first_kept: str | None,
        tokens_before: int | None = None,
        revision: str | None = None,
    ) -> WrittenT:
        """A compaction at the leaf. It records the request-context revision it summarized (`revision`,
        default: the last measured on the path, `context_usage`) in `details.summarized_revision`; the
        pinned memory is not touched, so the next request carries the same memory contribution."""
        return self._write(self._core.compact(summary, first_kept, tokens_before, revision))

    def exclude(self, target: str, *, reason: str = "") -> WrittenT:
        return self._write(self._core.exclude(target, reason))

    def custom(
        self, type: str, data: Any = None, *, in_context: bool = False, content: str | Sequence[Block] = ()
    ) -> WrittenT:
        """A custom entry of `type`. `data` is JSON data, or a value of a class registered with
        `waybook.codecs.register_value`, stored under its wire tag (read it back with
        `waybook.codecs.decode_value(record.body.data)`); any other object raises UnregisteredValueError
        and nothing is written."""
        return self._write(self._core.custom(type, data, in_context, content))

    def branch_from(self, node_id: str | None, *, reason: str) -> WrittenT:
        """Move the leaf to `node_id` (an earlier node, or None for a new root); nothing is erased."""
        return self._write(self._core.branch_from(node_id, reason))

    def link_subagent(
        self,
        journal: str,
        *,
        at: str | None = None,
        call_id: str | None = None,
        agent: str | None = None,
        reason: str = "",
    ) -> WrittenT:
        """Record that the node `at` (default: the leaf), at its tool call `call_id`, started a sub-agent
        whose session is the journal `journal`. Does not move the leaf; `waybook tree` and `show` follow it.
        """
        return self._write(self._core.link_subagent(journal, at, call_id, agent, reason))

    def start_subagent(
        self,
        journal: JournalT,
        *,
        journal_id: str | None = None,
        at: str | None = None,
        call_id: str | None = None,
        agent: str | None = None,
        reason: str = "",
        metadata: dict[str, Any] | None = None,
    ) -> MadeT:
        """A session for a sub-agent that the node `at` (default: the leaf), at its tool call `call_id`,
        starts, linked both ways: the empty `journal` gets a header (id `journal_id`, or a fresh one)
        whose metadata `subagent_of` names this journal, the node and the call; then this session
        records the link to it (`link_subagent`). Returns the sub-agent's session, with this one's
        options. `waybook verify --store` checks both ends (docs/import.md)."""
        check_journal(journal, f"{self._WHO}.start_subagent")
        asked = SubagentRequest(
            journal_id=journal_id, at=at, call_id=call_id, agent=agent, reason=reason, metadata=metadata
        )
        return self._start_subagent(journal, asked)

    def reset(self, *, reason: str = "") -> WrittenT:
        """Clear the leaf: the next node starts a new root and the model context starts empty."""
        return self._write(self._core.reset(reason))

    def fork(self, node_id: str, journal: JournalT, *, journal_id: str | None = None) -> MadeT:
        """A new session in the empty `journal` whose history is this one's up to the node `node_id`.

        The records up to and including the node are copied verbatim (same ids, timestamps and bodies, at
        the same seqs) behind a new header whose metadata `forked_from` names this journal and the node's
        seq and digest (`waybook.journal.check_fork` proves it against this journal). A `journal` that
        holds only its own session header (`JsonlJournal.create(path, journal_id=...)`, `store.create(id)`)
        keeps it: the fork takes its id, and an annotation of the node after the copies names the source.
        The leaf of the new session is the node. Everything is written in one batch; this journal is only
        read. Raises UnknownNodeError for an id that is not a node of this journal (as of `head`),
        InvalidRecordError for a `journal` that has more records. `fork_to` creates the journal itself.
        """
        check_journal(journal, f"{self._WHO}.fork")
        return self._fork(node_id, journal, journal_id)

    def fork_to(self, node_id: str, target: object, *, journal_id: str | None = None) -> MadeT:
        """`fork`, into a journal this call creates: `target` is the path of a new JSONL file (the
        fork's id defaults to its stem) or `(store, journal_id)` for a new journal of a store (the fork's
        id is that id). The fork is decided first (UnknownNodeError for an id that is not a node), then
        the target is created with the fork in it: a file all at once (InvalidArgumentError if the path
        exists), a store's journal in one append (JournalExistsError if the id is taken)."""
        return self._fork_to(node_id, fork_target(target, journal_id))

    @classmethod
    def _on(cls, journal: JournalT, options: WriterOptions) -> Self:
        """A writer of this class on `journal` with `options`."""
        return cls(
            journal,
            actor=options.actor,
            clock=options.clock,
            ids=options.ids,
            blobs=options.blobs,
            inline_limit=options.inline_limit,
            redact=options.mask or False,
        )

    # --- what each writer does: the I/O around the core ---------------------------------------------

    @abstractmethod
    def _attach(self, journal: JournalT) -> None:
        """Hold `journal` and learn where it stands (or leave that to the first `sync`)."""

    @classmethod
    @abstractmethod
    def _create(
        cls, journal: JournalT, options: WriterOptions, header: Callable[[SessionCore], Header]
    ) -> MadeT:
        """The writer on `journal`, caught up; if the journal is empty, with `header(core)` appended."""

    @abstractmethod
    def _write(self, entry: Entry) -> WrittenT:
        """Append `entry`: its content offloaded if it must be, then its body, in one append."""

    @abstractmethod
    def _write_batch(self, batch: Batch) -> BatchT:
        """Append `batch`: its contents offloaded where they must be, then its records, in one append."""

    @abstractmethod
    def _fork(self, node_id: str, journal: JournalT, journal_id: str | None) -> MadeT:
        """Write the core's fork into `journal` and return the writer on it."""

    @abstractmethod
    def _start_subagent(self, journal: JournalT, asked: SubagentRequest) -> MadeT:
        """Create the sub-agent's session in `journal` (its header naming this one), then link it here."""

    @abstractmethod
    def _fork_to(self, node_id: str, target: ForkTarget) -> MadeT:
        """Decide the core's fork, create `target` holding it, and return the writer on it."""
