"""What a store knows it holds: each journal's committed head, against what its storage holds now.

A store keeps every journal's committed head as it changes (the directory store in its feed index, the
database stores in the journal's row). A journal whose storage holds less (a file truncated, emptied,
deleted or replaced; rows deleted behind the store's back) has lost records: that is damage to name
(`LostRecordsError`, a failed proof), never a shorter journal to serve or append to.
"""

from __future__ import annotations

from collections.abc import Callable

import attrs

from waybook.journal import InMemoryJournal, SessionJournal, VerifyReport
from waybook.model import GENESIS, Head
from waybook.stores._errors import LostRecordsError
from waybook.stores._read_only import ReadOnlyJournal


@attrs.frozen
class Committed:
    """A journal's committed head as its store recorded it: `seq`, and the digest of record `seq` where
    the store knows it (None: a feed index written before digests were kept)."""

    seq: int
    digest: str | None

    @property
    def head(self) -> Head:
        return Head(self.seq, self.digest or "?" * 64)


def missing(committed: Committed, head: Head, digest_at: Callable[[int], str | None]) -> str | None:
    """What is wrong with a journal whose storage proves `head`, given what its store `committed`;
    None when it holds at least that. `digest_at(seq)` is the digest of the stored record `seq` (read
    only when the journal holds records past the committed head)."""
    if head.seq < committed.seq:
        return f"its records end at seq {head.seq}" if head.seq else "it holds no records"
    if committed.digest is None or committed.seq == 0:
        return None
    found = head.digest if head.seq == committed.seq else digest_at(committed.seq)
    if found == committed.digest:
        return None
    return f"another record is at seq {committed.seq} (its storage was replaced)"


def checked_report(
    report: VerifyReport, committed: Committed, digest_at: Callable[[int], str | None]
) -> VerifyReport:
    """`report` of a journal's proof, checked against the head its store `committed`: a journal that
    proves less is the damage of lost records (a torn tail below the committed head too: what it cut
    was committed, which no repair brings back). Corruption found by the proof is reported as it is."""
    if not report.ok and not report.torn_tail:
        return report
    problem = missing(committed, report.head, digest_at)
    if problem is None:
        return report
    held = min(report.records, committed.seq - 1)
    reason = f"lost records: the store committed seq {committed.seq}, but {problem}"
    if report.reason:
        reason = f"{reason}; and {report.reason}"
    return attrs.evolve(report, ok=False, bad_seq=held + 1, reason=reason, torn_tail=False)


def lost_journal(name: object, lost: LostRecordsError) -> tuple[SessionJournal, VerifyReport]:
    """What proving a journal whose storage is gone gives: an empty read-only journal named `name`, and
    the failed report naming the loss (a proof reports damage; it never raises for it)."""
    committed = lost.committed
    report = VerifyReport(
        str(name),
        ok=False,
        records=0,
        head=GENESIS,
        bad_seq=1,
        reason=f"lost records: the store committed seq {committed.seq}, but {lost.found}",
    )
    return ReadOnlyJournal(InMemoryJournal(str(name))), report
