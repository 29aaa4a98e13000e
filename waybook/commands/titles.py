"""A journal in one line: how many records, when it last changed, and its title (projections.title_record:
the first user message that is not a harness entry, or the placeholder of its erasure)."""

from __future__ import annotations

from typing import Final

import msgspec

from waybook.commands.terminal import visible
from waybook.journal import SessionJournal
from waybook.projections import title_record, title_text

TITLE_SEARCH: Final = 2000
"""How many records are read looking for the first user message before the journal is called untitled."""
TITLE_CHARS: Final = 120
"""The longest title kept (a list cuts it further to its width)."""


class Glance(msgspec.Struct, frozen=True):
    """What a journal list shows of one journal."""

    records: int
    last_activity: str | None
    title: str


def glance(journal: SessionJournal) -> Glance:
    """The journal's record count, the time of its last record and its title, read without a full replay:
    the first `TITLE_SEARCH` records and the last one."""
    head = journal.head()
    found = title_record(journal, scan=TITLE_SEARCH)
    title = "" if found is None else visible(title_text(journal, found)[:TITLE_CHARS], one_line=True)
    last = next(iter(journal.read(after=head.seq - 1)), None) if head.seq else None
    return Glance(records=head.seq, last_activity=last.at if last else None, title=title)
