"""`verify()`: walk any journal's committed bytes and report the first record that breaks the history."""

from __future__ import annotations

import attrs

from waybook.journal.errors import JournalError
from waybook.journal.head import GENESIS, Head
from waybook.journal.ledger import Ledger, iter_chain
from waybook.journal.protocol import SessionJournal


@attrs.frozen
class VerifyReport:
    """The outcome of a chain walk. `head` is the last record that verified."""

    journal: str
    ok: bool
    records: int
    head: Head
    bad_seq: int | None = None
    reason: str | None = None
    offset: int | None = None
    torn_tail: bool = False
    """The damage is a torn final record, which `repair` can quarantine; else it is corruption."""

    def __str__(self) -> str:
        if self.ok:
            return f"{self.journal}: ok, {self.records} records, head {self.head}"
        where = f" (byte {self.offset})" if self.offset is not None else ""
        return f"{self.journal}: FAILED at seq {self.bad_seq}{where}: {self.reason}"


def verify(journal: SessionJournal) -> VerifyReport:
    """Prove `journal`'s digest chain and session rules from seq 1. Never raises for bad data.

    Reads the stored canonical bytes, so the check covers exactly what a later reader will see.
    """
    ledger = Ledger.empty(journal.name)
    head, count = GENESIS, 0
    try:
        for record in iter_chain(journal.read_lines(), journal=journal.name):
            ledger.advance((record,), check_rules=True)
            head, count = Head.of(record), count + 1
    except JournalError as exc:
        reason = getattr(exc, "reason", None) or str(exc)
        name = journal.name
        return VerifyReport(name, ok=False, records=count, head=head, bad_seq=count + 1, reason=reason)
    return VerifyReport(journal.name, ok=True, records=count, head=head)
