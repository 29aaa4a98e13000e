"""Containers that fork in O(1): what lets the canonical pin advance at the cost of its changes.

The canonical authority keeps the memory state at its pin and, on each advance, folds the records since
the pin onto a fork of it (the pin's view stays whole for the agent calls reading it meanwhile). With
plain dicts that fork is a copy of the whole state; with these containers it is O(1), and each change
after it copies only the few small nodes on its path (a hash-array mapped trie of 32-way nodes, depth
log32 n). Nodes a map created since its last fork are its own and change in place, so folding a long
journal into a fresh map costs about what a dict does.

`SharedMap` and `SharedSet` are ordinary mutable mappings and sets to the fold (waybook.memory.working
._state): the fold is one function whatever containers its state holds.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, MutableMapping, MutableSet
from typing import Any, Final, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
T = TypeVar("T", bound=Hashable)

BITS: Final = 5
WIDTH: Final = 1 << BITS
MASK: Final = WIDTH - 1
BUCKET: Final = 8
"""Keys a leaf holds before it splits into a node (unless the hash bits are used up)."""
MAX_SHIFT: Final = 64


class _Edit:
    """The ownership token of one map between two forks (identity only)."""

    __slots__ = ()


class _Node:
    __slots__ = ("edit", "slots")

    def __init__(self, edit: _Edit, slots: list[Any]) -> None:
        self.edit = edit
        self.slots = slots


class _Bucket(dict[Any, Any]):
    __slots__ = ("edit",)

    edit: _Edit


def _bucket(edit: _Edit, items: Iterable[tuple[Any, Any]] = ()) -> _Bucket:
    bucket = _Bucket(items)
    bucket.edit = edit
    return bucket


class SharedMap(MutableMapping[K, V], Generic[K, V]):
    """A mutable mapping whose `fork()` is O(1): both sides share every node until one of them writes."""

    __slots__ = ("_edit", "_fresh", "_root", "_size")

    def __init__(self, items: Iterable[tuple[K, V]] = ()) -> None:
        self._edit = _Edit()
        self._root = _Node(self._edit, [None] * WIDTH)
        self._size = 0
        self._fresh: set[K] = set()
        for key, value in items:
            self[key] = value

    def fork(self) -> SharedMap[K, V]:
        """An independent copy in O(1). Neither side owns the shared nodes any more: the first write to
        one of them, on either side, copies it."""
        other: SharedMap[K, V] = SharedMap.__new__(SharedMap)
        other._root, other._size, other._edit, other._fresh = self._root, self._size, _Edit(), set()
        self._edit, self._fresh = _Edit(), set()
        return other

    def fresh(self, key: K) -> bool:
        """Whether `key` was set since the last fork (its value is this map's own, not shared)."""
        return key in self._fresh

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, key: K) -> V:
        code = hash(key)
        node = self._root
        shift = 0
        while True:
            child = node.slots[(code >> shift) & MASK]
            if child is None:
                raise KeyError(key)
            if type(child) is _Bucket:
                value: V = child[key]
                return value
            node = child
            shift += BITS

    def __contains__(self, key: object) -> bool:
        try:
            self[key]  # type: ignore[index]
        except KeyError:
            return False
        return True

    def get(self, key: K, default: Any = None) -> Any:
        try:
            return self[key]
        except KeyError:
            return default

    def __setitem__(self, key: K, value: V) -> None:
        self._fresh.add(key)
        node, index, bucket, shift = self._own_path(key)
        if bucket is None:
            node.slots[index] = _bucket(self._edit, ((key, value),))
            self._size += 1
            return
        if key not in bucket:
            self._size += 1
        bucket[key] = value
        if len(bucket) > BUCKET and shift + BITS < MAX_SHIFT:
            node.slots[index] = self._split(bucket, shift + BITS)

    def _own_path(self, key: K) -> tuple[_Node, int, _Bucket | None, int]:
        """Walk `key`'s hash path down to the slot of its leaf, copying every node (and the leaf) that
        this map does not own: (the node, the slot's index, the leaf or None if empty, the shift)."""
        edit = self._edit
        node = self._root
        if node.edit is not edit:
            node = self._root = _Node(edit, list(node.slots))
        code = hash(key)
        shift = 0
        while True:
            index = (code >> shift) & MASK
            child = node.slots[index]
            if child is None:
                return node, index, None, shift
            if type(child) is _Bucket:
                if child.edit is not edit:
                    child = node.slots[index] = _bucket(edit, child.items())
                return node, index, child, shift
            if child.edit is not edit:
                child = node.slots[index] = _Node(edit, list(child.slots))
            node = child
            shift += BITS

    def _split(self, bucket: _Bucket, shift: int) -> _Node:
        """A node in place of a full leaf: its keys spread by the next bits of their hashes."""
        node = _Node(self._edit, [None] * WIDTH)
        groups: dict[int, list[tuple[Any, Any]]] = {}
        for key, value in bucket.items():
            groups.setdefault((hash(key) >> shift) & MASK, []).append((key, value))
        for index, items in groups.items():
            leaf = _bucket(self._edit, items)
            split = len(leaf) > BUCKET and shift + BITS < MAX_SHIFT
            node.slots[index] = self._split(leaf, shift + BITS) if split else leaf
        return node

    def __delitem__(self, key: K) -> None:
        if key not in self:
            raise KeyError(key)
        self._fresh.discard(key)
        node, index, bucket, _ = self._own_path(key)
        assert bucket is not None, "a key this map holds is in a leaf"
        del bucket[key]
        if not bucket:
            node.slots[index] = None
        self._size -= 1

    def __iter__(self) -> Iterator[K]:
        stack = [self._root]
        while stack:
            for child in stack.pop().slots:
                if child is None:
                    continue
                if type(child) is _Bucket:
                    yield from list(child)
                else:
                    stack.append(child)

    def __repr__(self) -> str:
        return f"SharedMap({dict(self.items())!r})"


class SharedSet(MutableSet[T], Generic[T]):
    """A mutable set whose `fork()` is O(1) (a SharedMap of its members)."""

    __slots__ = ("_map",)

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._map: SharedMap[T, None] = SharedMap((item, None) for item in items)

    def fork(self) -> SharedSet[T]:
        other: SharedSet[T] = SharedSet.__new__(SharedSet)
        other._map = self._map.fork()
        return other

    def __contains__(self, item: object) -> bool:
        return item in self._map

    def __iter__(self) -> Iterator[T]:
        return iter(self._map)

    def __len__(self) -> int:
        return len(self._map)

    def add(self, item: T) -> None:
        self._map[item] = None

    def discard(self, item: T) -> None:
        if item in self._map:
            del self._map[item]

    def update(self, items: Iterable[T]) -> None:
        for item in items:
            self.add(item)

    def difference_update(self, items: Iterable[T]) -> None:
        for item in list(items):
            self.discard(item)

    def __repr__(self) -> str:
        return f"SharedSet({set(self)!r})"


def fork_map(mapping: MutableMapping[K, V]) -> MutableMapping[K, V]:
    """An independent copy: O(1) for a SharedMap, a dict copy otherwise."""
    return mapping.fork() if isinstance(mapping, SharedMap) else dict(mapping)


def fork_set(members: MutableSet[T]) -> MutableSet[T]:
    return members.fork() if isinstance(members, SharedSet) else set(members)
