"""Paging through a big store: how many journals it lists, the page at any position, and every journal
one page at a time, without holding the whole listing (a store of 100,000 journals, docs/stores.md).

A store with the CountingStore ability answers the count and the n-th position itself (an index, one
query); any other store is walked a page at a time, keeping nothing but the page in hand.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from waybook.stores._catalog import check_index, check_limit
from waybook.stores._protocol import CountingStore, JournalStore
from waybook.stores._values import JournalInfo, JournalPage

WALK_PAGE: Final = 1000
"""Journals asked for at a time when a store is walked."""


def iter_journals(
    store: JournalStore, *, hidden: bool = False, page: int = WALK_PAGE
) -> Iterator[JournalInfo]:
    """Every journal `store.list(hidden=hidden)` pages through, in creation order, a page at a time."""
    cursor = None
    while True:
        listed = store.list(hidden=hidden, after=cursor, limit=page)
        yield from listed
        cursor = listed.cursor
        if cursor is None:
            return


def count_journals(store: JournalStore, *, hidden: bool = False) -> int:
    """How many journals `store.list(hidden=hidden)` pages through."""
    if isinstance(store, CountingStore):
        return store.count(hidden=hidden)
    return sum(1 for _ in iter_journals(store, hidden=hidden))


def list_from(store: JournalStore, index: int, *, limit: int, hidden: bool = False) -> JournalPage:
    """The page of `limit` journals starting at the `index`-th (from 0) that `store.list(hidden=hidden)`
    lists; its cursor continues the listing as `list`'s does."""
    check_index(index)
    check_limit(limit)
    if isinstance(store, CountingStore):
        return store.list(hidden=hidden, after=store.cursor_at(index, hidden=hidden), limit=limit)
    cursor = None
    skipped = 0
    while skipped < index:  # walk to the page holding the index-th journal
        listed = store.list(hidden=hidden, after=cursor, limit=min(WALK_PAGE, index - skipped))
        skipped += len(listed)
        cursor = listed.cursor
        if cursor is None:
            return JournalPage((), None)
    return store.list(hidden=hidden, after=cursor, limit=limit)
