"""Snapshots of projection states, and time travel from the nearest one.

A snapshot is canonical JSON with a stable tag, like a record:

    {"kind":"waybook.snapshot/1","projection":"waybook.projection.tree/1","seq":N,"digest":"…","state":{…}}

The state is unstructured by explicit cattrs hooks with explicit field names, so renaming an attribute
does not change a stored snapshot. A snapshot is restored only if the journal still has `digest` at
`seq`; otherwise SnapshotMismatchError says it belongs to another history.
"""

from __future__ import annotations

from typing import Any, Final, Generic, TypeVar

import cattrs
import msgspec
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override
from sortedcontainers import SortedDict

from waybook.codecs import canonical_json
from waybook.journal import SessionJournal
from waybook.model import GENESIS_DIGEST, DecodeError, Head, SnapshotMismatchError
from waybook.projections._base import Projection, ProjectionState, fold
from waybook.projections._context import ContextProjection, ContextState
from waybook.projections._tree import LeafMove, TreeProjection, TreeState

SNAPSHOT_TAG: Final = "waybook.snapshot/1"

S = TypeVar("S", bound=ProjectionState)

_converter = cattrs.Converter(forbid_extra_keys=True)
_converter.register_unstructure_hook(
    LeafMove,
    make_dict_unstructure_fn(
        LeafMove,
        _converter,
        from_leaf=override(rename="from"),
        to_leaf=override(rename="to"),
        record_id=override(rename="id"),
    ),
)
_converter.register_structure_hook(
    LeafMove,
    make_dict_structure_fn(
        LeafMove,
        _converter,
        _cattrs_forbid_extra_keys=True,
        from_leaf=override(rename="from"),
        to_leaf=override(rename="to"),
        record_id=override(rename="id"),
    ),
)

# Wire names of TreeState columns; the int columns pass through without per-element hooks.
_TREE_COLUMNS: Final = {
    "ids": "ids",
    "kinds": "kinds",
    "seqs": "seqs",
    "parents": "parents",
    "first_child": "first_child",
    "last_child": "last_child",
    "next_sibling": "next_sibling",
}


def _unstructure_tree(tree: TreeState) -> dict[str, Any]:
    return {
        **{wire: list(getattr(tree, attr)) for attr, wire in _TREE_COLUMNS.items()},
        "seq": tree.seq,
        "digest": tree.digest,
        "leaf": tree.leaf,
        "moves": [_converter.unstructure(m) for m in tree.moves],
        "compactions": sorted(tree.compactions.items()),
        "exclusions": sorted(tree.exclusions.items()),
        "in_context": sorted(tree.in_context),
    }


class _TreeWire(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    ids: list[str]
    kinds: list[str]
    seqs: list[int]
    parents: list[int]
    first_child: list[int]
    last_child: list[int]
    next_sibling: list[int]
    seq: int
    digest: str
    leaf: int
    moves: list[dict[str, Any]]
    compactions: list[tuple[int, int]]
    exclusions: list[tuple[int, int]]
    in_context: list[int]


def _structure_tree(data: Any, _: type) -> TreeState:
    wire = data if isinstance(data, _TreeWire) else msgspec.convert(data, _TreeWire)
    columns = {attr: getattr(wire, w) for attr, w in _TREE_COLUMNS.items()}
    if len({len(c) for c in columns.values()}) > 1:
        msg = "tree snapshot columns have different lengths"
        raise ValueError(msg)
    return TreeState(
        **columns,
        seq=wire.seq,
        digest=wire.digest,
        leaf=wire.leaf,
        moves=[_converter.structure(m, LeafMove) for m in wire.moves],
        compactions=dict(wire.compactions),
        exclusions=dict(wire.exclusions),
        in_context=set(wire.in_context),
        index={node_id: i for i, node_id in enumerate(wire.ids)},
    )


def _unstructure_context(state: ContextState) -> dict[str, Any]:
    return {"tree": _unstructure_tree(state.tree), "summary": state.summary, "entries": list(state.entries)}


class _ContextWire(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    tree: _TreeWire
    summary: int
    entries: list[int]


def _structure_context(data: Any, _: type) -> ContextState:
    wire = data if isinstance(data, _ContextWire) else msgspec.convert(data, _ContextWire)
    return ContextState(
        tree=_structure_tree(wire.tree, TreeState), summary=wire.summary, entries=wire.entries
    )


_converter.register_unstructure_hook(TreeState, _unstructure_tree)
_converter.register_structure_hook(TreeState, _structure_tree)
_converter.register_unstructure_hook(ContextState, _unstructure_context)
_converter.register_structure_hook(ContextState, _structure_context)

_STATE_TYPES: Final[dict[str, tuple[type, type]]] = {
    TreeProjection.tag: (TreeState, _TreeWire),
    ContextProjection.tag: (ContextState, _ContextWire),
}


class _SnapshotWire(msgspec.Struct, forbid_unknown_fields=True):
    kind: str
    projection: str
    seq: int
    digest: str
    state: msgspec.Raw


def encode_snapshot(projection: Projection[S], state: S) -> bytes:
    """The canonical snapshot bytes of `state`, tagged with the projection and the head it was taken at."""
    return canonical_json(
        {
            "kind": SNAPSHOT_TAG,
            "projection": projection.tag,
            "seq": state.seq,
            "digest": state.digest,
            "state": _converter.unstructure(state),
        }
    )


def decode_snapshot(projection: Projection[S], data: bytes) -> S:
    """Decode snapshot bytes for `projection`; a foreign or damaged snapshot is a typed DecodeError."""
    try:
        wire = msgspec.json.decode(data, type=_SnapshotWire)
    except (msgspec.ValidationError, msgspec.DecodeError) as exc:
        msg = f"not a waybook snapshot: {exc}"
        raise DecodeError(msg) from None
    if wire.kind != SNAPSHOT_TAG or wire.projection != projection.tag:
        reason = f"snapshot is {wire.kind} of {wire.projection}, not {SNAPSHOT_TAG} of {projection.tag}"
        raise DecodeError(reason, tag=wire.kind)
    state_type, wire_type = _STATE_TYPES[projection.tag]
    try:
        state: S = _converter.structure(msgspec.json.decode(wire.state, type=wire_type), state_type)
    except (ValueError, TypeError, KeyError, msgspec.ValidationError, cattrs.BaseValidationError) as exc:
        msg = f"damaged {projection.tag} snapshot state: {exc}"
        raise DecodeError(msg, tag=wire.kind) from None
    if (state.seq, state.digest) != (wire.seq, wire.digest):
        msg = "the snapshot's head does not match its state"
        raise DecodeError(msg, tag=wire.kind)
    return state


def check_belongs(journal: SessionJournal, head: Head) -> None:
    """Raise SnapshotMismatchError unless `journal` has `head.digest` at `head.seq`."""
    found: str | None
    if head.seq == 0:
        found = GENESIS_DIGEST
    else:
        record = next(journal.read(after=head.seq - 1, limit=1), None)
        found = record.digest if record is not None else None
    if found != head.digest:
        msg = (
            f"{journal.name}: the snapshot was taken at seq {head.seq} ({head.digest[:12]}), but this "
            + ("journal has no such seq" if found is None else f"journal has {found[:12]} there")
            + "; it belongs to another history. Discard it and replay from the start."
        )
        raise SnapshotMismatchError(msg)


def restore(projection: Projection[S], data: bytes, journal: SessionJournal) -> S:
    """A state from snapshot bytes, after proving it belongs to `journal`'s history."""
    state = decode_snapshot(projection, data)
    check_belongs(journal, Head(state.seq, state.digest))
    return state


class SnapshotStore(Generic[S]):
    """Snapshots of one projection of one journal, by seq (sorted, O(log n) lookup of the nearest)."""

    def __init__(self, projection: Projection[S]) -> None:
        self.projection = projection
        self._by_seq: SortedDict = SortedDict()

    def __len__(self) -> int:
        return len(self._by_seq)

    def add(self, state: S) -> None:
        self._by_seq[state.seq] = encode_snapshot(self.projection, state)

    def nearest(self, seq: int) -> bytes | None:
        """The snapshot with the greatest seq at or before `seq`, if any."""
        index = self._by_seq.bisect_right(seq)
        return None if index == 0 else self._by_seq.values()[index - 1]

    @classmethod
    def build(cls, projection: Projection[S], journal: SessionJournal, *, every: int) -> SnapshotStore[S]:
        """Fold `journal` once, keeping a snapshot every `every` records."""
        store = cls(projection)
        state = projection.initial()
        for record in journal.read():
            state = projection.apply(state, record)
            if state.seq % every == 0:
                store.add(state)
        return store


def at_seq(
    projection: Projection[S], journal: SessionJournal, seq: int, store: SnapshotStore[S] | None = None
) -> S:
    """Time travel: the projection as it was at `seq`, folded from the nearest snapshot before it."""
    snapshot = store.nearest(seq) if store is not None else None
    state = restore(projection, snapshot, journal) if snapshot is not None else projection.initial()
    return fold(projection, journal.read(after=state.seq, limit=max(seq - state.seq, 0)), state)
