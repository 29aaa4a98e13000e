"""A journal in one line: how many records, when it last changed, and its title (the first user message
that is not a harness entry: a Claude Code caveat or the context Codex injects is no title)."""

from __future__ import annotations

from itertools import islice
from typing import Final

import msgspec

from waybook.commands.terminal import visible
from waybook.journal import SessionJournal
from waybook.model import Erasure, UserMessage, erased_placeholder, plain_text
from waybook.projections import is_harness

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
    title = ""
    for record in islice(journal.read(), TITLE_SEARCH):
        if not isinstance(record.body, UserMessage) or is_harness(record.body):
            continue  # a caveat or injected context is no title
        if record.erased is not None:  # the hole is the title: the next message would hide that it is there
            title = _erased_title(journal, record.erased.by)
            break
        if text := " ".join(plain_text(record.body.content).split()):
            title = visible(text[:TITLE_CHARS], one_line=True)
            break
    last = next(iter(journal.read(after=head.seq - 1)), None) if head.seq else None
    return Glance(records=head.seq, last_activity=last.at if last else None, title=title)


def _erased_title(journal: SessionJournal, by: int) -> str:
    erasure = next(iter(journal.read(after=by - 1)), None)
    reason = erasure.body.reason if erasure is not None and isinstance(erasure.body, Erasure) else None
    return visible(erased_placeholder(by, reason)[:TITLE_CHARS], one_line=True)
