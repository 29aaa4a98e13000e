"""`JournalTable` and `Layered`: a catalog fold's maps, optionally over a base read by key.

A directory store that opens from its index (`_store_index.py`) folds only the catalog records and feed
runs written after it: those live in these maps, and a key they do not hold is asked of the index. A
store of 100,000 journals thus makes a `JournalInfo` only for the journals a caller asks about (a page of
a listing, the journal it opens), not one per journal on every open.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, MutableMapping
from typing import Final, Generic, TypeVar

from waybook.stores._values import JournalInfo

_K = TypeVar("_K")
_V = TypeVar("_V")


class _Removed:
    """What a layer holds for a key it removed (the base's value is not looked up)."""


_REMOVED: Final = _Removed()


def _nothing(_key: object) -> None:
    return None


class Layered(MutableMapping[_K, _V], Generic[_K, _V]):
    """A mapping whose own entries (set and removed on it) lie over `base`, asked for any other key.

    It is not iterated (that would read the whole base): `own` gives what was set or removed on it."""

    def __init__(self, base: Callable[[_K], _V | None] = _nothing) -> None:
        self._own: dict[_K, _V | _Removed] = {}
        self._base = base

    def __getitem__(self, key: _K) -> _V:
        value = self._own[key] if key in self._own else self._base(key)
        if value is None or isinstance(value, _Removed):
            raise KeyError(key)
        return value

    def __setitem__(self, key: _K, value: _V) -> None:
        self._own[key] = value

    def __delitem__(self, key: _K) -> None:
        self[key]
        self._own[key] = _REMOVED

    def __iter__(self) -> Iterator[_K]:
        msg = "a layered map is not iterated (it would read its whole base); use own()"
        raise TypeError(msg)

    def __len__(self) -> int:
        msg = "a layered map has no length (it would count its whole base)"
        raise TypeError(msg)

    def own(self) -> dict[_K, _V | None]:
        """The entries set on this layer (None for one removed)."""
        return {key: None if isinstance(value, _Removed) else value for key, value in self._own.items()}


class JournalTable:
    """A dict of `JournalInfo` by journal id (the operations a fold uses), over an optional `base` (the
    journals of the store's index as of its catalog seq) asked for an id the fold did not touch.

    Safe across threads as a dict is (a store reads it without its catalog mutex)."""

    def __init__(self, base: Callable[[str], JournalInfo | None] = _nothing) -> None:
        self._made: dict[str, JournalInfo] = {}
        self._removed: set[str] = set()
        self._base = base
        self._mutex = threading.Lock()

    def __contains__(self, journal_id: object) -> bool:
        return isinstance(journal_id, str) and self.get(journal_id) is not None

    def get(self, journal_id: str) -> JournalInfo | None:
        info = self._made.get(journal_id)
        if info is not None or journal_id in self._removed:
            return info
        return self._base(journal_id)

    def __getitem__(self, journal_id: str) -> JournalInfo:
        info = self.get(journal_id)
        if info is None:
            raise KeyError(journal_id)
        return info

    def __setitem__(self, journal_id: str, info: JournalInfo) -> None:
        with self._mutex:
            self._made[journal_id] = info

    def pop(self, journal_id: str) -> JournalInfo | None:
        info = self.get(journal_id)
        with self._mutex:
            self._made.pop(journal_id, None)
            self._removed.add(journal_id)  # (the base's entry, if any, is gone too)
        return info

    def made(self) -> list[JournalInfo]:
        """The journals the fold created or changed (not those only its base holds)."""
        return list(self._made.values())
