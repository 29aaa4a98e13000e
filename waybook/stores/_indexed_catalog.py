"""`IndexedCatalog`: a catalog fold that starts from the directory store's index and folds only what follows.

The journals created up to the index's catalog seq S are read from the index (by id, or a page at a time
in creation order); the fold keeps only what its records after S did: the journals they created, the
ones of the index they hid or forgot. A listing walks the index's page after the cursor, then the
journals created after S; the counts are the index's, moved by what followed. `tail()` is what to write
into the index to bring it forward.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator

import attrs

from waybook.model import Record
from waybook.stores._catalog import POSITION_MAX, Catalog
from waybook.stores._journal_table import JournalTable, Layered
from waybook.stores._store_index import IndexState, IndexTail, StoreIndex
from waybook.stores._values import JournalInfo, PurgeReceipt


@attrs.define
class IndexedCatalog(Catalog):
    """The fold of a catalog whose first `index.state.catalog_seq` records the index holds."""

    index: StoreIndex | None = attrs.field(default=None, kw_only=True)
    _base_hidden: set[int] = attrs.field(factory=set, kw_only=True)
    """Creation seqs of the index's journals hidden after S."""
    _base_gone: set[int] = attrs.field(factory=set, kw_only=True)
    """Creation seqs of the index's journals forgotten after S."""
    _base_gone_hidden: int = attrs.field(default=0, kw_only=True)
    """How many of those were hidden when they were forgotten."""
    _hidden_at: dict[int, int] = attrs.field(factory=dict, kw_only=True)
    """The seq each journal hidden after S was hidden at, by creation seq."""
    _gone_at: dict[int, int] = attrs.field(factory=dict, kw_only=True)
    """The seq each journal forgotten after S was forgotten at, by creation seq."""

    @classmethod
    def over(cls, store: str, index: StoreIndex, last: Record) -> IndexedCatalog:
        """The fold as of the index's record `last` (checked against the catalog by the caller)."""
        return cls(
            store,
            seq=last.seq,
            last=last,
            journals=JournalTable(index.journal),
            purged=Layered(lambda journal_id: index.purge_receipt(journal_id, store=store)),
            index=index,
        )

    @property
    def _state(self) -> IndexState:
        assert self.index is not None
        return self.index.state

    def _in_base(self, info: JournalInfo) -> bool:
        return info.created <= self._state.catalog_seq

    def _hide(self, info: JournalInfo, *, at: int) -> None:
        self._hidden_at[info.created] = at
        if self._in_base(info):
            self._base_hidden.add(info.created)
        else:
            super()._hide(info, at=at)

    def _unlist(self, info: JournalInfo, *, at: int) -> None:
        self._gone_at[info.created] = at
        if self._in_base(info):
            self._base_gone.add(info.created)
            self._base_gone_hidden += info.hidden
        else:
            super()._unlist(info, at=at)

    def count(self, *, hidden: bool) -> int:
        state = self._state
        shown_and_hidden = state.journals - len(self._base_gone) + len(self._created)
        if hidden:
            return shown_and_hidden
        hidden_now = state.hidden + len(self._base_hidden) - self._base_gone_hidden + len(self._hidden)
        return shown_and_hidden - hidden_now

    def cursor_at(self, index: int, *, hidden: bool) -> str | None:
        if index <= 0:
            return None
        state = self._state
        if self._base_gone or self._base_hidden:  # (until the index is brought forward: a walk)
            return self._walked_cursor(index, hidden=hidden)
        in_base = state.journals - (0 if hidden else state.hidden)
        if index <= in_base:
            assert self.index is not None
            created = self.index.created_at_index(index - 1, hidden=hidden)
            return str(created if created is not None else POSITION_MAX)
        return super().cursor_at(index - in_base, hidden=hidden)

    def _walked_cursor(self, index: int, *, hidden: bool) -> str:
        seen = 0
        for info in self.in_order(0):
            if hidden or not info.hidden:
                seen += 1
                if seen == index:
                    return str(info.created)
        return str(POSITION_MAX)

    def in_order(self, after: int) -> Iterator[JournalInfo]:
        assert self.index is not None
        if after < self._state.catalog_seq:
            for info in self.index.journals_after(after):
                if info.created in self._base_gone:
                    continue
                yield attrs.evolve(info, hidden=True) if info.created in self._base_hidden else info
        for at in range(bisect.bisect_right(self._created, after), len(self._created)):
            yield self.journals[self._ids[at]]

    def tail(self) -> tuple[list[tuple[JournalInfo, int | None]], list[tuple[int, int]], list[PurgeReceipt]]:
        """What the fold holds past the index: the journals it created or changed (with the seq each
        hidden one was hidden at), those it forgot (creation seq, forgotten at), the purge receipts."""
        journals = [
            (info, self._hidden_at.get(info.created, info.created) if info.hidden else None)
            for info in self.journals.made()
        ]
        assert isinstance(self.purged, Layered)
        receipts = [receipt for receipt in self.purged.own().values() if receipt is not None]
        return journals, sorted(self._gone_at.items()), receipts


def full_tail(catalog: Catalog, state: IndexState, fed: list[tuple[str, int, str | None]]) -> IndexTail:
    """Everything a whole fold holds, as the tail of an empty index."""
    journals = [(info, info.created if info.hidden else None) for info in catalog.in_order(0)]
    return IndexTail(journals=journals, gone=[], purged=list(catalog.purged.values()), fed=fed, state=state)
