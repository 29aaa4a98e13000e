"""A journal's title, read without a replay: its first user message that is not a harness entry (a
Claude Code caveat or the context Codex injects is no title), or the placeholder of that message's
erasure, which must show where the message was rather than let the next one stand in for it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

from waybook.journal import SessionJournal
from waybook.model import Erasure, Record, UserMessage, erased_placeholder, plain_text
from waybook.projections._harness import is_harness

FIRST_READ: Final = 8
"""Records read first looking for the title (it is nearly always among them); each further read takes
eight times as many, so a journal whose title comes late costs a few reads, not one per record."""


def title_record(journal: SessionJournal, *, scan: int) -> Record | None:
    """The record that titles `journal`: its first user message (among the first `scan` records) that
    is not a harness entry and has text or was erased; None when there is none."""
    for record in first_records(journal, min(scan, journal.head().seq)):
        if not isinstance(record.body, UserMessage) or is_harness(record.body):
            continue
        if record.erased is not None or plain_text(record.body.content).strip():
            return record
    return None


def title_text(journal: SessionJournal, record: Record) -> str:
    """`record`'s text on one line (whitespace folded), or, erased, its placeholder (the erasure's reason
    read from its record)."""
    if record.erased is None:
        assert isinstance(record.body, UserMessage)
        return " ".join(plain_text(record.body.content).split())
    by = record.erased.by
    erasure = next(iter(journal.read(after=by - 1, limit=1)), None)
    reason = erasure.body.reason if erasure is not None and isinstance(erasure.body, Erasure) else None
    return erased_placeholder(by, reason)


def first_records(journal: SessionJournal, count: int) -> Iterator[Record]:
    """The first `count` records, read in growing chunks: a reader that proves what it reads (a database
    journal's reads prove their lines again) should not prove a whole first page for a title found in
    the second record."""
    after, size = 0, FIRST_READ
    while after < count:
        want = min(size, count - after)
        got = list(journal.read(after=after, limit=want))
        yield from got
        if len(got) < want:
            return
        after += want
        size *= 8
