"""Fast time travel for the tree: snapshots that share the columns of a later state.

The tree projection only appends to most of its columns, and its link columns only change from "none"
to a position past the current end (a new child). So the tree as it was at seq s is the later tree with
every position at or past n(s) hidden: the first n(s) entries, with each link that points past n(s)
read as "none". A `Timeline` keeps one later state and, every `every` records, the few numbers that
define the prefix (node count, leaf, move count). Restoring a snapshot is then O(1): a TreeState whose
columns are copy-on-write views of the shared ones. Folding the records after the snapshot works on
those views unchanged. The result equals `replay(TreeProjection(), journal, at=seq)` (a property test
checks this for every seq of random sessions).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator
from typing import Any, Final

import attrs

from waybook.journal import SessionJournal
from waybook.projections._base import fold
from waybook.projections._tree import NONE, TreeProjection, TreeState

_MISSING: Final = object()


class _Prefix:
    """The first `n` entries of a shared list, copy-on-write: writes stay local, appends go on the end."""

    __slots__ = ("_base", "_ext", "_n", "_over")

    def __init__(self, base: list[Any], n: int) -> None:
        self._base = base
        self._n = n
        self._over: dict[int, Any] = {}
        self._ext: list[Any] = []

    def _shared(self, index: int) -> Any:
        return self._base[index]

    def __len__(self) -> int:
        return self._n + len(self._ext)

    def __getitem__(self, index: int) -> Any:
        if index < 0:
            index += len(self)
        if index < self._n:
            value = self._over.get(index, _MISSING)
            return self._shared(index) if value is _MISSING else value
        return self._ext[index - self._n]

    def __setitem__(self, index: int, value: Any) -> None:
        if index < self._n:
            self._over[index] = value
        else:
            self._ext[index - self._n] = value

    def append(self, value: Any) -> None:
        self._ext.append(value)

    def __iter__(self) -> Iterator[Any]:
        for index in range(len(self)):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        return list(self) == list(other) if isinstance(other, _Prefix | list) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


class _LinkPrefix(_Prefix):
    """A link column at a prefix: a shared link past the prefix did not exist yet."""

    __slots__ = ()

    def _shared(self, index: int) -> Any:
        value = self._base[index]
        return value if value < self._n else NONE


class _LastChildPrefix(_Prefix):
    """last_child at a prefix: the last of the node's children that existed then."""

    __slots__ = ("_first", "_next")

    def __init__(self, base: list[int], n: int, first: _Prefix, following: _Prefix) -> None:
        super().__init__(base, n)
        self._first = first
        self._next = following

    def _shared(self, index: int) -> Any:
        child, last = self._first[index], NONE
        while child != NONE and child < self._n:
            last, child = child, self._next[child]
        return last


class _IndexPrefix(dict[str, int]):
    """The id index at a prefix: shared entries at positions past the prefix are hidden."""

    def __init__(self, base: dict[str, int], n: int) -> None:
        super().__init__()
        self._base = base
        self._n = n

    def __missing__(self, key: str) -> int:
        position = self._base.get(key)
        if position is None or position >= self._n:
            raise KeyError(key)
        return position

    def get(self, key: str, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __contains__(self, key: object) -> bool:
        return dict.__contains__(self, key) or (
            isinstance(key, str) and self._base.get(key, self._n) < self._n
        )


@attrs.frozen
class _Mark:
    seq: int
    digest: str
    nodes: int
    leaf: int
    moves: int


class Timeline:
    """Snapshots of the tree every `every` records, restorable in O(1), over one shared later state."""

    def __init__(self, journal: SessionJournal, *, every: int) -> None:
        self.journal = journal
        projection = TreeProjection()
        state = projection.initial()
        marks = [_Mark(0, state.digest, 0, NONE, 0)]
        for record in journal.read():
            state = projection.apply(state, record)
            if state.seq % every == 0:
                marks.append(_Mark(state.seq, state.digest, state.node_count, state.leaf, len(state.moves)))
        self._state = state
        self._marks = marks
        self._seqs = [m.seq for m in marks]

    def __len__(self) -> int:
        return len(self._marks) - 1

    def at(self, seq: int) -> TreeState:
        """The tree as it was at `seq`: the nearest snapshot at or before it, then the records after it."""
        mark = self._marks[bisect_right(self._seqs, seq) - 1]
        state = self._restore(mark)
        return fold(TreeProjection(), self.journal.read(after=mark.seq, limit=max(seq - mark.seq, 0)), state)

    def _restore(self, mark: _Mark) -> TreeState:
        base, n = self._state, mark.nodes
        first = _LinkPrefix(base.first_child, n)
        following = _LinkPrefix(base.next_sibling, n)
        columns: dict[str, Any] = {
            "ids": _Prefix(base.ids, n),
            "kinds": _Prefix(base.kinds, n),
            "seqs": _Prefix(base.seqs, n),
            "parents": _Prefix(base.parents, n),
            "first_child": first,
            "next_sibling": following,
            "last_child": _LastChildPrefix(base.last_child, n, first, following),
        }
        return TreeState(
            seq=mark.seq,
            digest=mark.digest,
            leaf=mark.leaf,
            moves=base.moves[: mark.moves],
            compactions={k: v for k, v in base.compactions.items() if k < n},
            exclusions={k: v for k, v in base.exclusions.items() if k < n},
            in_context={p for p in base.in_context if p < n},
            index=_IndexPrefix(base.index, n),
            **columns,
        )
