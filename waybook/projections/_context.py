"""The model context at a leaf, and trajectories.

What the model sees at a leaf, after the last reset (a reset starts a new root, so a path never crosses
one):
1. If a compaction is on the path, only the latest one counts. Its summary comes first, as a user
   message that starts with COMPACTION_PREAMBLE, followed by the path from its first kept entry up to
   the compaction, then everything after the compaction.
2. Context exclusions on the path remove their target (and are not shown themselves).
3. Custom extension entries stay out unless they were written with `in_context`.
4. Leaf moves and resets are not nodes and never appear.

`ContextProjection` keeps the context of the active leaf current: an append at the leaf is O(1); a
compaction, exclusion or leaf move marks it stale, and it is recomputed from the tree (O(path length))
when it is next read. So a fold costs O(records) whatever the tree's shape (a session that moves its
leaf back at every level would otherwise walk its whole path at every move), and a context read after
any number of moves costs one walk of the path it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Literal

import attrs
import msgspec

from waybook.journal import SessionJournal, read_seqs, shown_records
from waybook.model import (
    AssistantMessage,
    Compaction,
    Content,
    ContextExclusion,
    CustomEntry,
    Record,
    SystemMessage,
    TextBlock,
    ToolResult,
    UserMessage,
    erasure_reasons,
    placeholder_records,
)
from waybook.projections._base import check_next
from waybook.projections._tree import NONE, TreeProjection, TreeState

COMPACTION_PREAMBLE: Final = (
    "The conversation before this point was compacted to save context. This summary replaces it:\n\n"
)
"""Starts the user message that carries a compaction summary into the context. Part of the format:
changing it changes every exported context, so it is versioned with the context projection tag."""

_SHOWN_KINDS: Final = frozenset(
    {UserMessage.KIND, AssistantMessage.KIND, SystemMessage.KIND, ToolResult.KIND}
)

_MESSAGE_TYPES: Final = frozenset({UserMessage, AssistantMessage, SystemMessage, ToolResult})
"""Bodies that are plain nodes shown in the context: the kinds `apply_many` folds a run of at once."""

Role = Literal["user", "assistant", "system", "tool"]
_ROLES: Final[dict[type, Role]] = {
    UserMessage: "user",
    AssistantMessage: "assistant",
    SystemMessage: "system",
    ToolResult: "tool",
}


@attrs.frozen
class ContextRefs:
    """The context at one leaf as node positions: the summarising compaction (or NONE) and the entries."""

    leaf: int
    summary: int
    entries: tuple[int, ...]


def context_refs(tree: TreeState, leaf: int) -> ContextRefs:
    """The context at node position `leaf` (NONE: empty), from the tree alone."""
    if leaf == NONE:
        return ContextRefs(NONE, NONE, ())
    path = tree.path_positions(leaf)
    summary = NONE
    kept = path
    for i in range(len(path) - 1, -1, -1):
        compaction = path[i]
        if compaction in tree.compactions:
            summary = compaction
            first_kept = tree.compactions[compaction]
            before = path[:i]
            start = before.index(first_kept) if first_kept in before else len(before)
            kept = before[start:] + path[i + 1 :]
            break
    excluded = {tree.exclusions[p] for p in path if p in tree.exclusions}
    entries = tuple(p for p in kept if p not in excluded and _shown(tree, p))
    return ContextRefs(leaf, summary, entries)


def _shown(tree: TreeState, position: int) -> bool:
    return tree.kinds[position] in _SHOWN_KINDS or position in tree.in_context


@attrs.define(eq=False, repr=False)
class ContextState:
    """The tree, plus the context of its active leaf (`summary` and `entries`, as in `ContextRefs`).

    After a leaf move, a compaction or an exclusion the context is stale: it is recomputed from the tree
    the first time `summary`, `entries` or `refs` is read, never at the move itself.
    """

    tree: TreeState = attrs.Factory(TreeState)
    _summary: int = NONE
    _entries: list[int] = attrs.Factory(list)
    _stale: bool = attrs.field(default=False, init=False)

    @property
    def summary(self) -> int:
        if self._stale:
            self._settle()
        return self._summary

    @summary.setter
    def summary(self, value: int) -> None:
        self._settle()
        self._summary = value

    @property
    def entries(self) -> list[int]:
        if self._stale:
            self._settle()
        return self._entries

    @entries.setter
    def entries(self, value: list[int]) -> None:
        self._settle()
        self._entries = value

    @property
    def stale(self) -> bool:
        """Whether the context waits to be recomputed from the tree (at the next read)."""
        return self._stale

    def mark_stale(self) -> None:
        """The leaf moved, or a compaction or exclusion changed what the leaf sees: recompute at the
        next read."""
        self._stale = True

    def _settle(self) -> None:
        if self._stale:
            refs = context_refs(self.tree, self.tree.leaf)
            self._summary, self._entries, self._stale = refs.summary, list(refs.entries), False

    @property
    def seq(self) -> int:
        return self.tree.seq

    @property
    def digest(self) -> str:
        return self.tree.digest

    @property
    def refs(self) -> ContextRefs:
        return ContextRefs(self.tree.leaf, self.summary, tuple(self.entries))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ContextState):
            return NotImplemented
        return (self.tree, self.summary, self.entries) == (other.tree, other.summary, other.entries)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ContextState(tree={self.tree!r}, summary={self.summary!r}, entries={self.entries!r})"


class ContextProjection:
    """Folds a session journal into its tree and the model context at the active leaf."""

    tag: Final = "waybook.projection.context/1"

    def __init__(self) -> None:
        self._tree = TreeProjection()

    def initial(self) -> ContextState:
        return ContextState()

    def apply(self, state: ContextState, record: Record) -> ContextState:
        check_next(state, record)
        tree = state.tree
        before = tree.leaf
        self._tree.apply(tree, record)
        body = record.body
        if body.KIND in _SHOWN_KINDS or (isinstance(body, CustomEntry) and body.in_context):
            if not state.stale:  # a node always extends the leaf it was appended at
                state.entries.append(tree.leaf)
        elif isinstance(body, Compaction | ContextExclusion) or (not body.IS_NODE and tree.leaf != before):
            state.mark_stale()
        return state

    def apply_many(
        self, state: ContextState, records: Sequence[Record], *, chained: bool = False
    ) -> ContextState:
        """Apply `records` in order, as `apply` one by one would. Each run of messages (nearly every
        record of a session) is applied column by column instead of record by record. `chained=True`:
        the caller proved that the records follow one another (a journal's open did; see
        `TreeProjection.extend_chain`)."""
        kinds = [type(record.body) for record in records]
        count = len(records)
        if count > 1 and _MESSAGE_TYPES.issuperset(kinds):  # all messages: one run, no list of flags
            tree = state.tree
            if self._tree.extend_chain(tree, records, kinds, chained=chained):
                if not state.stale:
                    state.entries.extend(range(tree.leaf - count + 1, tree.leaf + 1))
                return state
        plain = list(map(_MESSAGE_TYPES.__contains__, kinds))
        start = 0
        while start < count:
            try:
                stop = plain.index(False, start)  # the end of the run of messages (a C search)
            except ValueError:
                stop = count
            if stop - start > 1:
                run = records if stop - start == count else records[start:stop]
                tree = state.tree
                if self._tree.extend_chain(tree, run, kinds[start:stop], chained=chained):
                    if not state.stale:
                        state.entries.extend(range(tree.leaf - (stop - start) + 1, tree.leaf + 1))
                else:
                    for record in run:
                        self.apply(state, record)
            elif stop > start:
                self.apply(state, records[start])
            if stop < count:
                self.apply(state, records[stop])
            start = stop + 1
        return state


# --- rendering ------------------------------------------------------------------------------------


class ContextMessage(msgspec.Struct, frozen=True, gc=False):
    """One message the model sees. `source` is the id of the record it comes from.

    A frozen msgspec Struct like the records it wraps: a context is rendered one message per entry.
    """

    role: Role
    content: Content
    source: str
    record: Record


def render_context(tree: TreeState, refs: ContextRefs, journal: SessionJournal) -> tuple[ContextMessage, ...]:
    """The messages of `refs`, reading their records from `journal` (which `tree` was folded from)."""
    positions = _positions(refs)
    records = read_seqs(journal, sorted(tree.seqs[p] for p in positions))
    by_seq = {r.seq: r for r in records}
    ordered = shown_records(journal, [by_seq[tree.seqs[p]] for p in positions])
    pairs = zip(positions, ordered, strict=True)
    return tuple(_message(record, summary=p == refs.summary) for p, record in pairs)


def render_context_from(
    tree: TreeState, refs: ContextRefs, records: Sequence[Record]
) -> tuple[ContextMessage, ...]:
    """The messages of `refs`, taken from `records`: every record `tree` was folded from, in seq order
    from seq 1 (so record seq `s` is `records[s - 1]`). Nothing is read or decoded again."""
    seqs = tree.seqs
    wanted = [seqs[position] for position in _positions(refs)]
    chosen = [records[seq - 1] for seq in wanted]
    if [record.seq for record in chosen] != wanted:
        msg = "render_context_from needs every record from seq 1, in order, as `tree` was folded from"
        raise ValueError(msg)
    if any(map(_erased, chosen)):
        chosen = placeholder_records(chosen, _reasons_from(chosen, records))
    start = 0
    messages = []
    if refs.summary != NONE:
        messages.append(_message(chosen[0], summary=True))
        start = 1
    roles = _ROLES.get
    messages.extend(
        [
            ContextMessage(role, body.content, record.id, record)  # type: ignore[union-attr]
            if (role := roles(type(body := record.body))) is not None
            else _message(record, summary=False)
            for record in (chosen[start:] if start else chosen)
        ]
    )
    return tuple(messages)


def _erased(record: Record) -> bool:
    return record.erased is not None


def _reasons_from(chosen: Sequence[Record], records: Sequence[Record]) -> dict[int, str]:
    """The reasons of the erasures that took `chosen`'s content, where `records` (from seq 1) hold them."""
    wanted = {r.erased.by for r in chosen if r.erased is not None}
    return erasure_reasons(records[seq - 1] for seq in wanted if seq <= len(records))


def _positions(refs: ContextRefs) -> list[int]:
    return ([refs.summary] if refs.summary != NONE else []) + list(refs.entries)


def context_at(
    journal: SessionJournal, tree: TreeState, leaf: str | None = None
) -> tuple[ContextMessage, ...]:
    """The model context at `leaf` (default: the active leaf) of a folded tree."""
    position = tree.leaf if leaf is None else tree.position(leaf)
    return render_context(tree, context_refs(tree, position), journal)


def _message(record: Record, *, summary: bool) -> ContextMessage:
    body = record.body
    if summary:
        assert isinstance(body, Compaction)
        text = COMPACTION_PREAMBLE + body.summary if body.preamble else body.summary
        return ContextMessage("user", (TextBlock(text=text),), record.id, record)
    if isinstance(body, UserMessage | CustomEntry):
        return ContextMessage("user", body.content, record.id, record)
    if isinstance(body, AssistantMessage):
        return ContextMessage("assistant", body.content, record.id, record)
    if isinstance(body, SystemMessage):
        return ContextMessage("system", body.content, record.id, record)
    if isinstance(body, ToolResult):
        return ContextMessage("tool", body.content, record.id, record)
    msg = f"record {record.id} ({record.kind}) is not part of a model context"
    raise ValueError(msg)


# --- trajectories ---------------------------------------------------------------------------------


@attrs.frozen
class Trajectory:
    """One root-to-leaf path of a session, every node on it in order, with nothing from other branches."""

    leaf: str | None
    active: bool
    records: tuple[Record, ...]


def trajectory(journal: SessionJournal, tree: TreeState, leaf: str | None = None) -> Trajectory:
    """The path to `leaf` (default: the active leaf), read from `journal`."""
    target = tree.leaf_id if leaf is None else leaf
    if target is None:
        return Trajectory(None, True, ())
    seqs = [tree.seqs[p] for p in tree.path_positions(tree.position(target))]
    return Trajectory(target, target == tree.leaf_id, tuple(shown_records(journal, read_seqs(journal, seqs))))
