"""A glance's title is the first user message wherever it comes in the first TITLE_SEARCH records (read
in growing chunks, so a title in the second record proves a few records, not the first page)."""

from __future__ import annotations

import pytest

from tests.helpers.builders import header, titled_at
from waybook.commands.titles import TITLE_SEARCH, glance
from waybook.journal import InMemoryJournal
from waybook.projections._titles import FIRST_READ


def journal_with_title_at(seq: int, records: int) -> InMemoryJournal:
    """A journal of `records` records (its header first) whose only user message is record `seq`."""
    journal = InMemoryJournal()
    batch = [header(), *titled_at(seq, records)]
    for start in range(0, len(batch), 500):
        journal.append(batch[start : start + 500], expected=journal.head())
    return journal


@pytest.mark.parametrize(
    "seq", [2, FIRST_READ, FIRST_READ + 1, 8 * FIRST_READ + FIRST_READ + 1, TITLE_SEARCH], ids=str
)
def test_the_title_is_found_wherever_it_comes_in_the_first_records_read(seq: int) -> None:
    seen = glance(journal_with_title_at(seq, TITLE_SEARCH + 5))
    assert (seen.title, seen.records) == (f"message {seq}", TITLE_SEARCH + 5)


def test_a_user_message_past_the_records_searched_leaves_the_journal_untitled() -> None:
    assert glance(journal_with_title_at(TITLE_SEARCH + 1, TITLE_SEARCH + 5)).title == ""
