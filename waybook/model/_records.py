"""The record model: frozen value types for every fact a session journal holds.

Records are frozen `msgspec.Struct`s rather than attrs classes because decoding them is the hot path
of every replay: msgspec builds them straight from JSON in C. Each type declares its stable wire tag
(`kind` for bodies, `type` for content blocks) and an explicit wire name for every field, so renaming a
Python attribute never changes the bytes on the wire (see docs/wire-format.md for the evolution rules).

A body is what a writer says (a message, a leaf move, ...). The journal wraps it in a `Record` with the
committed position, the timestamp, and the digest chain.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Final, TypeAlias

import msgspec
from msgspec import field

TERMINAL_STOP_REASONS: Final = frozenset(
    {"end_turn", "tool_use", "max_tokens", "stop_sequence", "refusal", "pause_turn", "error", "aborted"}
)
"""Why an assistant turn ended. A turn without one of these is a streaming partial and is refused."""


# --- content blocks -------------------------------------------------------------------------------


class _Block(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False, tag_field="type"
):
    """Base of content blocks; each subclass names its wire tag in the `type` field."""


class TextBlock(_Block, tag="text", frozen=True):
    text: str = field(name="text")


class ThinkingBlock(_Block, tag="thinking", frozen=True):
    thinking: str = field(name="thinking")
    signature: str | None = field(default=None, name="signature")
    redacted: bool = field(default=False, name="redacted")


class ImageBlock(_Block, tag="image", frozen=True):
    """A reference to an image kept outside the journal (a URI or a content digest), never its bytes."""

    source: str = field(name="source")
    media_type: str = field(name="media_type")


class ToolCallBlock(_Block, tag="tool_call", frozen=True):
    call_id: str = field(name="id")
    name: str = field(name="name")
    arguments: dict[str, Any] = field(default_factory=dict, name="arguments")


class BlobBlock(_Block, tag="blob", frozen=True):
    """Bytes kept in the store's blobs (`store.blobs`), not in the journal: their SHA-256, size and type.

    Sessions store a block over their inline limit this way; `name` is an optional label (a file name).
    """

    digest: str = field(name="digest")
    size: int = field(name="size")
    media_type: str = field(name="media_type")
    name: str | None = field(default=None, name="name")


Block: TypeAlias = TextBlock | ThinkingBlock | ImageBlock | ToolCallBlock | BlobBlock
Content: TypeAlias = tuple[Block, ...]


# --- bodies ---------------------------------------------------------------------------------------


class Body(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False, omit_defaults=True
):
    """Base of every record body. `KIND` mirrors the wire tag for fast dispatch without reflection.

    Fields equal to their default are left off the wire (`omit_defaults`), so adding an optional field
    never changes the bytes of records that do not use it.
    """

    KIND: ClassVar[str] = ""
    IS_NODE: ClassVar[bool] = False


JOURNAL_ROLES: Final = ("session", "working_memory", "canonical_memory", "pin", "catalog")
"""What a journal holds, declared in its header. Readers refuse a journal of the wrong role."""


SEALED_SCHEMA: Final = 2
"""The header schema from which a journal seals its records' content so that it can be erased without
breaking the digest chain (docs/erasure.md). Schema 1 (the default, absent on the wire) is every journal
written before: each record's digest covers its content's bytes, which therefore stay."""


class Header(Body, tag_field="kind", tag="waybook.header/1", frozen=True):
    """The first record of every journal. `schema` 2 (`SEALED_SCHEMA`) seals content; 1 does not."""

    KIND: ClassVar[str] = "waybook.header/1"
    journal: str = field(name="journal")
    creator: str = field(name="creator")
    schema: int = field(default=1, name="schema")
    metadata: dict[str, Any] = field(default_factory=dict, name="metadata")
    role: str = field(default="session", name="role")


class Node(Body, frozen=True):
    """An entry in the conversation tree. Appending a node makes it the leaf."""

    IS_NODE: ClassVar[bool] = True
    parent: str | None = field(name="parent")


class UserMessage(Node, tag_field="kind", tag="waybook.user/2", frozen=True):
    KIND: ClassVar[str] = "waybook.user/2"
    content: Content = field(name="content")
    details: dict[str, Any] | None = field(default=None, name="details")


class AssistantMessage(Node, tag_field="kind", tag="waybook.assistant/1", frozen=True):
    """A complete assistant turn. `stop_reason` must be one of TERMINAL_STOP_REASONS."""

    KIND: ClassVar[str] = "waybook.assistant/1"
    content: Content = field(name="content")
    stop_reason: str | None = field(default=None, name="stop_reason")
    model: str | None = field(default=None, name="model")
    usage: dict[str, int] | None = field(default=None, name="usage")
    details: dict[str, Any] | None = field(default=None, name="details")

    @property
    def tool_calls(self) -> tuple[ToolCallBlock, ...]:
        return tuple(b for b in self.content if isinstance(b, ToolCallBlock))


class SystemMessage(Node, tag_field="kind", tag="waybook.system/1", frozen=True):
    KIND: ClassVar[str] = "waybook.system/1"
    content: Content = field(name="content")
    details: dict[str, Any] | None = field(default=None, name="details")


class ToolResult(Node, tag_field="kind", tag="waybook.tool_result/1", frozen=True):
    """The outcome of one tool call, answering `call_id` of an assistant's ToolCallBlock."""

    KIND: ClassVar[str] = "waybook.tool_result/1"
    call_id: str = field(name="call_id")
    content: Content = field(name="content")
    tool_name: str | None = field(default=None, name="tool_name")
    is_error: bool = field(default=False, name="is_error")
    details: dict[str, Any] | None = field(default=None, name="details")


class Compaction(Node, tag_field="kind", tag="waybook.compaction/1", frozen=True):
    """A summary that replaces, in the model context, the path before `first_kept`."""

    KIND: ClassVar[str] = "waybook.compaction/1"
    summary: str = field(name="summary")
    first_kept: str | None = field(name="first_kept")
    tokens_before: int | None = field(default=None, name="tokens_before")
    details: dict[str, Any] | None = field(default=None, name="details")
    preamble: bool = field(default=True, name="preamble")
    """Whether the context shows the summary after waybook's COMPACTION_PREAMBLE (the default), or
    as written, for a summary that carries its own framing (one imported from another agent)."""


class ContextExclusion(Node, tag_field="kind", tag="waybook.exclusion/1", frozen=True):
    """Removes `target` from the model context of this path from here on; the target stays recorded."""

    KIND: ClassVar[str] = "waybook.exclusion/1"
    target: str = field(name="target")
    reason: str = field(default="", name="reason")


class CustomEntry(Node, tag_field="kind", tag="waybook.custom/1", frozen=True):
    """An extension's entry under a namespaced type such as `pi.model_change`.

    It stays out of the model context unless `in_context` is set, in which case `content` is shown to
    the model as a user message.
    """

    KIND: ClassVar[str] = "waybook.custom/1"
    type: str = field(name="type")
    data: Any = field(default=None, name="data")
    in_context: bool = field(default=False, name="in_context")
    content: Content = field(default=(), name="content")


class LeafMoved(Body, tag_field="kind", tag="waybook.leaf_moved/1", frozen=True):
    """Moves the active leaf. The only way to start a branch or go back; nothing is erased."""

    KIND: ClassVar[str] = "waybook.leaf_moved/1"
    from_leaf: str | None = field(name="from")
    to_leaf: str | None = field(name="to")
    reason: str = field(name="reason")
    actor: str | None = field(default=None, name="actor")


class SubagentLink(Body, tag_field="kind", tag="waybook.subagent_link/1", frozen=True):
    """Names the journal of a sub-agent that the node `node` (usually at its tool call `call_id`) started.

    Not a node: it does not move the leaf, so a runtime can record the link whenever it learns the
    sub-agent's journal. `journal` is that journal's id in the same store (or, for a single-file
    journal, its file name beside this one).
    """

    KIND: ClassVar[str] = "waybook.subagent_link/1"
    node: str = field(name="node")
    journal: str = field(name="journal")
    call_id: str | None = field(default=None, name="call_id")
    agent: str | None = field(default=None, name="agent")
    reason: str = field(default="", name="reason")


class Reset(Body, tag_field="kind", tag="waybook.reset/1", frozen=True):
    """Clears the leaf, so the next node starts a new root and the context starts empty."""

    KIND: ClassVar[str] = "waybook.reset/1"
    reason: str = field(default="", name="reason")
    actor: str | None = field(default=None, name="actor")


class Annotation(Body, tag_field="kind", tag="waybook.annotation/1", frozen=True):
    """An extension's data attached to an existing node, under a namespaced type; the leaf does not move.

    What a runtime records about a node after the fact (LangGraph's pending writes for a checkpoint,
    a checkpoint hidden by `delete_for_runs`). Never in the model context.
    """

    KIND: ClassVar[str] = "waybook.annotation/1"
    target: str = field(name="target")
    type: str = field(name="type")
    data: Any = field(default=None, name="data")


CONTENT_PARTS: Final = ("text", "thinking", "tool_arguments", "tool_output", "images", "files", "data")
"""The kinds of content a record may hold, as an erasure names them: message text and summaries, thinking,
tool calls (their arguments), tool results' output, images, other blobs, custom data and details."""


class ErasedRecord(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False):
    """One record an `Erasure` took the content of (docs/erasure.md).

    `state` is the SHA-256 state after the record's sealed content (64 hex digits): its salted
    commitment, from which the record's digest is finished over the bytes that stay. `blocks` is how
    many 64-byte blocks the sealed content took; `parts` what kinds of content it held (text,
    thinking, tool_arguments, tool_output, images, files, data).
    """

    seq: int = field(name="seq")
    state: str = field(name="state")
    blocks: int = field(name="blocks")
    parts: tuple[str, ...] = field(default=(), name="parts")


class Erasure(Body, tag_field="kind", tag="waybook.erasure/1", frozen=True):
    """The content of earlier records of this journal was erased: which records, why, by whom, and under
    which retention policy if one decided it. Not a node: the leaf does not move.

    Appended before any byte is removed; each record it names keeps its envelope, kind, tree links and
    usage, and its digest (docs/erasure.md). `parts` is what chose the records (empty: all content).
    """

    KIND: ClassVar[str] = "waybook.erasure/1"
    records: tuple[ErasedRecord, ...] = field(name="records")
    reason: str = field(name="reason")
    actor: str | None = field(default=None, name="actor")
    policy: str | None = field(default=None, name="policy")
    parts: tuple[str, ...] = field(default=(), name="parts")


# --- memory -----------------------------------------------------------------------------------------
# Working and canonical memory journals hold these (after their header); they are not tree nodes.


class MemoryWrite(Body, tag_field="kind", tag="waybook.memory.write/1", frozen=True):
    """A file's new content: created (prior None), superseded (prior = the digest it replaced), recreated."""

    KIND: ClassVar[str] = "waybook.memory.write/1"
    path: str = field(name="path")
    text: str = field(name="text")
    digest: str = field(name="digest")
    prior: str | None = field(default=None, name="prior")
    command: str = field(default="create", name="command")
    call_id: str | None = field(default=None, name="call_id")


class MemoryDelete(Body, tag_field="kind", tag="waybook.memory.delete/1", frozen=True):
    """Tombstones for files: deleted by a command, or evicted to make room (`reason`).

    `directories` names the directories the command deleted (each with every file below it in `paths`,
    which may then be empty): a directory outlives its last file until it is itself deleted or moved.
    """

    KIND: ClassVar[str] = "waybook.memory.delete/1"
    paths: tuple[str, ...] = field(name="paths")
    reason: str = field(default="delete", name="reason")
    call_id: str | None = field(default=None, name="call_id")
    directories: tuple[str, ...] = field(default=(), name="directories")


class MemoryRename(Body, tag_field="kind", tag="waybook.memory.rename/1", frozen=True):
    """Files moved to new paths, keeping their content, history and write order.

    `directories` names the directories the command moved (old, new), each with every file below it in
    `moves` (which may then be empty): the empty directories below move with it.
    """

    KIND: ClassVar[str] = "waybook.memory.rename/1"
    moves: tuple[tuple[str, str], ...] = field(name="moves")
    call_id: str | None = field(default=None, name="call_id")
    directories: tuple[tuple[str, str], ...] = field(default=(), name="directories")


class MemoryAdoption(Body, tag_field="kind", tag="waybook.memory.adoption/1", frozen=True):
    """Opens one adoption into canonical memory; the `writes` MemoryWrite records that follow complete it.

    Carries what a receipt is recomputed from: who adopted which nomination, under which binding, on
    top of which canonical head.
    """

    KIND: ClassVar[str] = "waybook.memory.adoption/1"
    operation: str = field(name="operation")
    actor: str = field(name="actor")
    binding: str = field(name="binding")
    nomination: str = field(name="nomination")
    source: str = field(name="source")
    source_seq: int = field(name="source_seq")
    source_digest: str = field(name="source_digest")
    prior_seq: int = field(name="prior_seq")
    prior_digest: str = field(name="prior_digest")
    writes: int = field(name="writes")
    replaced: tuple[str, ...] = field(default=(), name="replaced")


class MemoryPinMoved(Body, tag_field="kind", tag="waybook.memory.pin_moved/1", frozen=True):
    """In a session or pin journal: the outcome of one host call of a canonical memory authority, and
    the canonical head the agent reads from then on (`new`). The last one is the pin
    (docs/canonical-memory.md)."""

    KIND: ClassVar[str] = "waybook.memory.pin_moved/1"
    canonical: str = field(name="canonical")
    prior_seq: int = field(name="prior_seq")
    prior_digest: str = field(name="prior_digest")
    new_seq: int = field(name="new_seq")
    new_digest: str = field(name="new_digest")
    receipt: str = field(name="receipt")
    status: str = field(default="advanced", name="status")
    """The host call's outcome: advanced, unchanged, adopted or already-present (the pin may not move)."""
    binding: str | None = field(default=None, name="binding")
    actor: str | None = field(default=None, name="actor")
    nomination: str | None = field(default=None, name="nomination")
    operation: str | None = field(default=None, name="operation")
    operation_digest: str | None = field(default=None, name="operation_digest")


class MemoryUsed(Body, tag_field="kind", tag="waybook.memory.used/1", frozen=True):
    """In a session journal: what memory the next turn's prompt carried (per-turn provenance).

    Either the memory index rendered from journal `memory` at head (`seq`, `digest`) with the SHA-256 of
    its bytes (or the compiled block's, with each prompt layer's digest), or (`unavailable` set) the
    recorded decision to go on without memory under `policy`.
    """

    KIND: ClassVar[str] = "waybook.memory.used/1"
    memory: str | None = field(name="memory")
    seq: int | None = field(default=None, name="seq")
    digest: str | None = field(default=None, name="digest")
    index_sha256: str | None = field(default=None, name="index_sha256")
    unavailable: str | None = field(default=None, name="unavailable")
    policy: str = field(default="require", name="policy")
    block_sha256: str | None = field(default=None, name="block_sha256")
    """The SHA-256 of the compiled memory block the prompt carried (`waybook.memory.compile_block`)."""
    layers: tuple[tuple[str, str, str], ...] = field(default=(), name="layers")
    """The prompt's layers in order, each (name, authority, sha256): base, orientation, memory."""
    revisions: tuple[str, ...] = field(default=(), name="revisions")
    """The revision (record) ids of the notes the index showed, in order: with `memory`, `seq`, `limit`,
    what renders the same bytes again (`waybook.memory.replay_index`). Empty on older records."""
    limit: int | None = field(default=None, name="limit")
    """The index's entry limit (None on older records, which used the default, 50)."""
    pinned: bool | None = field(default=None, name="pinned")
    """True: rendered at a pin the host chose; False: live, at the memory journal's head when it was
    loaded; None: an older record that did not say."""


# --- reflection ---------------------------------------------------------------------------------
# A memory journal records its reflection scheduler's transitions (waybook.memory.tools.reflection).


class ReflectionReserved(Body, tag_field="kind", tag="waybook.reflection.reserved/1", frozen=True):
    """A reflection run reserved (pending) by a trigger: manual, compaction or step."""

    KIND: ClassVar[str] = "waybook.reflection.reserved/1"
    run: str = field(name="run")
    trigger: str = field(name="trigger")
    reason: str = field(default="", name="reason")


class ReflectionStarted(Body, tag_field="kind", tag="waybook.reflection.started/1", frozen=True):
    """The pending run became active; `windows` is what it may read: (session journal, after, through)."""

    KIND: ClassVar[str] = "waybook.reflection.started/1"
    run: str = field(name="run")
    windows: tuple[tuple[str, int, int], ...] = field(default=(), name="windows")


class ReflectionFinished(Body, tag_field="kind", tag="waybook.reflection.finished/1", frozen=True):
    """The active run ended: merged, no_changes (both advance the cursors to its windows) or failed."""

    KIND: ClassVar[str] = "waybook.reflection.finished/1"
    run: str = field(name="run")
    outcome: str = field(name="outcome")
    detail: str = field(default="", name="detail")


class MemorySynced(Body, tag_field="kind", tag="waybook.memory.synced/1", frozen=True):
    """In a working-memory journal: a sync with a git remote left its `main` at `commit`, whose tree is
    `tree` (both git object ids) and whose trailers name this journal's `seq`. The next sync finds that
    commit in the remote's history, or refuses the remote as rewritten (a force-push). `remote` names the
    remote as the sync was given it, its secrets masked. Changes no note."""

    KIND: ClassVar[str] = "waybook.memory.synced/1"
    remote: str = field(name="remote")
    commit: str = field(name="commit")
    tree: str = field(name="tree")
    seq: int = field(name="seq")


MemoryBody: TypeAlias = (
    MemoryWrite | MemoryDelete | MemoryRename | MemoryAdoption | MemoryPinMoved | MemoryUsed
)

NodeBody: TypeAlias = (
    UserMessage | AssistantMessage | SystemMessage | ToolResult | Compaction | ContextExclusion | CustomEntry
)
AnyBody: TypeAlias = (
    Header
    | NodeBody
    | LeafMoved
    | SubagentLink
    | Reset
    | Annotation
    | Erasure
    | MemoryWrite
    | MemoryDelete
    | MemoryRename
    | MemoryAdoption
    | MemoryPinMoved
    | MemoryUsed
    | ReflectionReserved
    | ReflectionStarted
    | ReflectionFinished
    | MemorySynced
)

NODE_TYPES: Final = (
    UserMessage,
    AssistantMessage,
    SystemMessage,
    ToolResult,
    Compaction,
    ContextExclusion,
    CustomEntry,
)
MEMORY_TYPES: Final = (MemoryWrite, MemoryDelete, MemoryRename, MemoryAdoption, MemoryPinMoved, MemoryUsed)
REFLECTION_TYPES: Final = (ReflectionReserved, ReflectionStarted, ReflectionFinished)
BODY_TYPES: Final = (
    Header,
    *NODE_TYPES,
    LeafMoved,
    SubagentLink,
    Reset,
    Annotation,
    Erasure,
    *MEMORY_TYPES,
    *REFLECTION_TYPES,
    MemorySynced,
)


# --- envelopes ------------------------------------------------------------------------------------


class NewRecord(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False, omit_defaults=True
):
    """A record a writer offers to a journal: its id, its UTC timestamp and its body. `salt` is for a
    verbatim copy of a sealed record (docs/erasure.md): the salt it was sealed with, so the copy's bytes
    and digest are the source's; None (every writer's case) draws a fresh one in a sealed journal."""

    id: str = field(name="id")
    at: str = field(name="at")
    body: AnyBody = field(name="body")
    salt: str | None = field(default=None, name="salt")


BatchPlace: TypeAlias = tuple[Annotated[int, msgspec.Meta(ge=1)], Annotated[int, msgspec.Meta(ge=2)]]
"""`(index, size)` of a record in a batch of `size` >= 2 records, `index` counting from 1."""


class Erased(msgspec.Struct, frozen=True, forbid_unknown_fields=True, array_like=True, gc=False):
    """Marks a record whose content was erased: the erasure record's seq (`by`), and the SHA-256 state
    and block count its sealed content left, from which its digest is finished (docs/erasure.md)."""

    by: int
    state: str
    blocks: int


class Record(
    msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, gc=False, omit_defaults=True
):
    """A committed record. `digest` is SHA-256 over the canonical bytes of every other field.

    Field order is part of the wire format: `digest` is last, so the bytes it covers are the line with
    its own field cut off (see waybook.codecs._wire). `batch` is the record's place in a multi-record
    batch, `(index, size)`; a record appended alone has none (and no `batch` on the wire), so a reader
    can tell a whole batch from one cut short by a crash (see waybook.journal._batches).

    In a journal whose header has schema 2, a record whose body holds content is *sealed*: its line
    starts with its `salt` and its content, so that the content can later be erased without changing
    the digest; an erased record has `erased` instead and its body's content is empty. Both are None on
    every other record (docs/erasure.md).
    """

    erased: Erased | None = field(default=None, name="erased")
    salt: str | None = field(default=None, name="salt")
    seq: int = field(name="seq")
    id: str = field(name="id")
    at: str = field(name="at")
    prev: str = field(name="prev")
    batch: BatchPlace | None = field(default=None, name="batch")
    body: AnyBody = field(name="body")
    digest: str = field(name="digest")

    @property
    def kind(self) -> str:
        return self.body.KIND


def text(value: str) -> Content:
    """Content made of one text block: `UserMessage(parent=..., content=text("hi"))`."""
    return (TextBlock(text=value),)


def plain_text(content: Content) -> str:
    """The text blocks of `content` joined by blank lines; other blocks are left out."""
    return "\n\n".join(b.text for b in content if isinstance(b, TextBlock))
