"""Paging through a big store: `count_journals`, `list_from` and `iter_journals` agree with walking
`list` a page at a time, on every store, with hidden and purged journals among the listed ones."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from waybook.stores import (
    CountingStore,
    JournalStore,
    StoreArgumentError,
    count_journals,
    iter_journals,
    list_from,
    open_store,
)


def walked(store: JournalStore, *, hidden: bool) -> list[str]:
    ids, cursor = [], None
    while True:
        page = store.list(hidden=hidden, after=cursor, limit=3)
        ids += [info.journal_id for info in page]
        cursor = page.cursor
        if cursor is None:
            return ids


def fill(store: JournalStore, journals: int, *, hidden: set[int], purged: set[int]) -> None:
    for n in range(journals):
        store.create(f"j{n:03d}").close()
    for n in sorted(hidden):
        store.hide(f"j{n:03d}", reason="test")
    for n in sorted(purged):
        store.purge(f"j{n:03d}", reason="test")


def test_every_store_counts_and_finds_the_nth_journal_itself(store: JournalStore) -> None:
    assert isinstance(store, CountingStore)


@pytest.mark.parametrize("hidden_too", [False, True], ids=["shown", "with-hidden"])
def test_a_page_from_any_index_is_the_walked_listing_from_there(
    store: JournalStore, hidden_too: bool
) -> None:
    fill(store, 12, hidden={0, 4, 5, 11}, purged={2, 5, 7})
    listing = walked(store, hidden=hidden_too)
    assert count_journals(store, hidden=hidden_too) == len(listing)
    assert [info.journal_id for info in iter_journals(store, hidden=hidden_too, page=2)] == listing
    for index in range(len(listing) + 2):
        page = list_from(store, index, limit=3, hidden=hidden_too)
        assert [info.journal_id for info in page] == listing[index : index + 3]
        rest = [info.journal_id for info in page]
        cursor = page.cursor
        while cursor is not None:  # the page's cursor continues the listing as list's does
            more = store.list(hidden=hidden_too, after=cursor, limit=3)
            rest += [info.journal_id for info in more]
            cursor = more.cursor
        assert rest == listing[index:]


@settings(max_examples=40, deadline=None)
@given(
    journals=st.integers(0, 9),
    hidden=st.sets(st.integers(0, 8)),
    purged=st.sets(st.integers(0, 8)),
    index=st.integers(0, 11),
)
@example(journals=3, hidden={0, 1, 2}, purged=set(), index=1)  # nothing shown: any index is past the end
@example(journals=4, hidden={1}, purged={1}, index=1)  # a hidden journal purged leaves no hidden mark
def test_the_directory_catalog_pages_by_position_as_a_walk_does(
    tmp_path_factory: pytest.TempPathFactory, journals: int, hidden: set[int], purged: set[int], index: int
) -> None:
    hidden, purged = {n for n in hidden if n < journals}, {n for n in purged if n < journals}
    with open_store(f"file:{tmp_path_factory.mktemp('store')}") as store:
        fill(store, journals, hidden=hidden, purged=purged)
        for hidden_too in (False, True):
            listing = walked(store, hidden=hidden_too)
            assert count_journals(store, hidden=hidden_too) == len(listing)
            page = list_from(store, index, limit=2, hidden=hidden_too)
            assert [info.journal_id for info in page] == listing[index : index + 2]


@pytest.mark.parametrize("index", [-1, 1.5, "3", None, True], ids=repr)
def test_a_bad_index_is_refused_naming_what_an_index_is(store: JournalStore, index: object) -> None:
    with pytest.raises(StoreArgumentError, match=r"journal index .* must be a whole number from 0"):
        list_from(store, index, limit=10)  # type: ignore[arg-type]
