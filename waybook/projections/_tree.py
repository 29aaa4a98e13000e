"""The tree projection: every node, its parent and children, the leaf, every branch and every leaf move.

The state is columnar: node i (in append order) has `parents[i]`, `seqs[i]`, and first-child /
next-sibling links, so children stay in append order without a list per node and a million-node
state is a handful of int lists. Applying a record is O(1).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

import attrs

from waybook.model import GENESIS_DIGEST, Compaction, ContextExclusion, CustomEntry, LeafMoved, Record, Reset
from waybook.projections._base import check_next

NONE: Final = -1


@attrs.frozen
class LeafMove:
    """One leaf movement: who moved it, from where, to where, why, and at which seq."""

    seq: int
    record_id: str
    from_leaf: str | None
    to_leaf: str | None
    reason: str
    actor: str | None
    at: str
    reset: bool = False


@attrs.frozen
class Branch:
    """A root-to-end path. `end` is a childless node or the current leaf; `active` if it ends at the leaf."""

    end: str
    path: tuple[str, ...]
    active: bool


@attrs.define
class TreeState:
    seq: int = 0
    digest: str = GENESIS_DIGEST
    ids: list[str] = attrs.Factory(list)
    kinds: list[str] = attrs.Factory(list)
    seqs: list[int] = attrs.Factory(list)
    parents: list[int] = attrs.Factory(list)
    first_child: list[int] = attrs.Factory(list)
    last_child: list[int] = attrs.Factory(list)
    next_sibling: list[int] = attrs.Factory(list)
    leaf: int = NONE
    moves: list[LeafMove] = attrs.Factory(list)
    # Context-relevant facts of the few nodes that carry them: compaction -> first kept node,
    # exclusion -> excluded node, custom entry shown in context -> itself.
    compactions: dict[int, int] = attrs.Factory(dict)
    exclusions: dict[int, int] = attrs.Factory(dict)
    in_context: set[int] = attrs.Factory(set)
    index: dict[str, int] = attrs.Factory(dict)

    # --- queries (all pure) -----------------------------------------------------------------------

    @property
    def node_count(self) -> int:
        return len(self.ids)

    @property
    def leaf_id(self) -> str | None:
        return None if self.leaf == NONE else self.ids[self.leaf]

    def position(self, node_id: str) -> int:
        """The node's position in append order; KeyError names an unknown node."""
        try:
            return self.index[node_id]
        except KeyError:
            msg = f"no node {node_id!r} in this session (at seq {self.seq})"
            raise KeyError(msg) from None

    def parent_of(self, node_id: str) -> str | None:
        parent = self.parents[self.position(node_id)]
        return None if parent == NONE else self.ids[parent]

    def children_of(self, node_id: str) -> tuple[str, ...]:
        return tuple(self.ids[c] for c in self._children(self.position(node_id)))

    def roots(self) -> tuple[str, ...]:
        return tuple(self.ids[i] for i, p in enumerate(self.parents) if p == NONE)

    def leaves(self) -> tuple[str, ...]:
        """Every branch end: each childless node, and the current leaf if it has children."""
        ends = [i for i, first in enumerate(self.first_child) if first == NONE]
        if self.leaf != NONE and self.first_child[self.leaf] != NONE:
            ends.append(self.leaf)
            ends.sort()
        return tuple(self.ids[i] for i in ends)

    def path_to(self, node_id: str | None) -> tuple[str, ...]:
        """Root-to-node ids (empty for None)."""
        if node_id is None:
            return ()
        return tuple(self.ids[i] for i in self.path_positions(self.position(node_id)))

    def path_positions(self, position: int) -> list[int]:
        path: list[int] = []
        while position != NONE:
            path.append(position)
            position = self.parents[position]
        path.reverse()
        return path

    def branches(self) -> tuple[Branch, ...]:
        leaf = self.leaf_id
        return tuple(Branch(end=end, path=self.path_to(end), active=end == leaf) for end in self.leaves())

    def seq_of(self, node_id: str) -> int:
        return self.seqs[self.position(node_id)]

    def children_positions(self, position: int) -> Iterator[int]:
        """Positions of a node's children, in append order."""
        return self._children(position)

    def _children(self, position: int) -> Iterator[int]:
        child = self.first_child[position]
        while child != NONE:
            yield child
            child = self.next_sibling[child]

    def check_invariants(self) -> None:
        """Assert the tree is well formed; stress tests call this after every step."""
        n = len(self.ids)
        lengths = {
            len(x)
            for x in (
                self.kinds,
                self.seqs,
                self.parents,
                self.first_child,
                self.last_child,
                self.next_sibling,
            )
        }
        assert lengths == {n}, "every column has one entry per node"
        assert self.index == {node_id: i for i, node_id in enumerate(self.ids)}, "the id index is exact"
        assert self.seqs == sorted(self.seqs), "nodes are in append order"
        assert self.leaf == NONE or 0 <= self.leaf < n, "the leaf is a node or none"
        for i in range(n):
            parent = self.parents[i]
            assert parent == NONE or parent < i, "a parent precedes its children"
            children = list(self._children(i))
            assert children == sorted(children), "children are in append order"
            assert all(self.parents[c] == i for c in children), "children name their parent"
            assert (children[-1] if children else NONE) == self.last_child[i]
        reachable = sum(1 for i in range(n) if self.parents[i] == NONE) + sum(
            len(list(self._children(i))) for i in range(n)
        )
        assert reachable == n, "every node is reachable from exactly one root"


def _link_child(state: TreeState, parent: int, child: int) -> None:
    """Make `child` (a new node, appended last) the last child of `parent`."""
    if state.first_child[parent] == NONE:
        state.first_child[parent] = child
    else:
        state.next_sibling[state.last_child[parent]] = child
    state.last_child[parent] = child


class TreeProjection:
    """Folds a session journal into a TreeState."""

    tag: Final = "waybook.projection.tree/1"

    def initial(self) -> TreeState:
        return TreeState()

    def extend_chain(
        self,
        state: TreeState,
        run: Sequence[Record],
        types: Sequence[type] | None = None,
        *,
        chained: bool = False,
    ) -> bool:
        """Apply `run`, plain nodes (no compaction, exclusion or custom entry) that each extend the
        leaf, column by column: the state `apply` one by one would give. Returns False, changing
        nothing, if the run does not directly follow the state's head (then `apply` names the error).
        `types`, if given, is the type of each record's body (a caller that has them already).
        `chained=True`: the caller has proved that each record of `run` follows the one before it
        (consecutive seqs, each `prev` the digest before it: a journal's open proved them), so only
        the run's ends are checked against the state's head.
        """
        count = len(run)
        seq = state.seq
        seqs = [record.seq for record in run]
        if chained:
            first = run[0]
            if first.seq != seq + 1 or first.prev != state.digest or seqs[-1] != seq + count:
                return False
        elif seqs != list(range(seq + 1, seq + 1 + count)) or [record.prev for record in run] != [
            state.digest,
            *[record.digest for record in run[:-1]],
        ]:
            return False
        start = len(state.ids)
        ids = [record.id for record in run]
        parent = state.leaf
        state.ids.extend(ids)
        if types is None:
            state.kinds.extend([record.body.KIND for record in run])
        else:
            state.kinds.extend([kind.KIND for kind in types])  # type: ignore[attr-defined]
        state.seqs.extend(seqs)
        state.parents.append(parent)
        state.parents.extend(range(start, start + count - 1))
        chain = [*range(start + 1, start + count), NONE]  # each new node's only child is the next one
        state.first_child.extend(chain)
        state.last_child.extend(chain)
        state.next_sibling.extend([NONE] * count)
        state.index.update(zip(ids, range(start, start + count), strict=True))
        if parent != NONE:
            _link_child(state, parent, start)
        state.leaf = start + count - 1
        state.seq = seq + count
        state.digest = run[-1].digest
        return True

    def apply(self, state: TreeState, record: Record) -> TreeState:
        check_next(state, record)
        body = record.body
        if body.IS_NODE:
            position = len(state.ids)
            parent = state.leaf
            state.ids.append(record.id)
            state.kinds.append(body.KIND)
            state.seqs.append(record.seq)
            state.parents.append(parent)
            state.first_child.append(NONE)
            state.last_child.append(NONE)
            state.next_sibling.append(NONE)
            state.index[record.id] = position
            if parent != NONE:
                _link_child(state, parent, position)
            state.leaf = position
            if isinstance(body, Compaction):
                state.compactions[position] = (
                    NONE if body.first_kept is None else state.index[body.first_kept]
                )
            elif isinstance(body, ContextExclusion):
                state.exclusions[position] = state.index[body.target]
            elif isinstance(body, CustomEntry) and body.in_context:
                state.in_context.add(position)
        elif isinstance(body, LeafMoved):
            state.leaf = NONE if body.to_leaf is None else state.index[body.to_leaf]
            state.moves.append(
                LeafMove(
                    record.seq, record.id, body.from_leaf, body.to_leaf, body.reason, body.actor, record.at
                )
            )
        elif isinstance(body, Reset):
            state.moves.append(
                LeafMove(
                    record.seq, record.id, state.leaf_id, None, body.reason, body.actor, record.at, reset=True
                )
            )
            state.leaf = NONE
        state.seq = record.seq
        state.digest = record.digest
        return state
