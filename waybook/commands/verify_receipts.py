"""The receipt part of `waybook verify`: memory receipts re-derived from the journals given together.

Each session or pin journal among the journals verified has its receipts checked (memory/receipts.py,
`check_receipts`) against the canonical and working journals among them, matched by their header's
journal id; with `--store`, a memory journal a receipt names is also found in the store without being
given. A receipt naming a journal that is nowhere to be found is reported as not checked. `verify` hands
over the journals it proved (`needs_receipt_check` says which it keeps), so none is opened twice.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence

from waybook.commands.exits import OK, PROBLEM, warn
from waybook.journal import SessionJournal
from waybook.memory.canonical.receipts import ReceiptCheck, check_receipts, holds_receipts
from waybook.model import Header, JournalError, Record
from waybook.stores import JournalStore, open_journal


def needs_receipt_check(journal: SessionJournal, records: Sequence[Record] | None = None) -> bool:
    """Whether `verify_receipts` needs `journal`: a session or pin journal holding receipts, or a journal
    a receipt may name (a memory journal). Reads it (a session's records) when it has to, unless given
    its `records` (read once for every check of it)."""
    if records is None:
        role = _role(journal)
    else:
        first = records[0].body if records else None
        role = first.role if isinstance(first, Header) else None
    if role in ("session", "pin"):
        return holds_receipts(journal.read() if records is None else records)
    return role not in (None, "catalog")


def _role(journal: SessionJournal) -> str | None:
    first = next(iter(journal.read(limit=1)), None)
    return first.body.role if first is not None and isinstance(first.body, Header) else None


def verify_receipts(given: list[SessionJournal], *, quiet: bool, store: JournalStore | None = None) -> int:
    """Check the receipts in every session or pin journal `given` (with `store`, memory journals are also
    found in the store); OK, or PROBLEM if any receipt does not derive."""
    with contextlib.ExitStack() as stack:
        journals: dict[str, SessionJournal] = {}
        roles: dict[str, str] = {}
        for journal in given:
            first = next(iter(journal.read(limit=1)), None)
            if first is not None and isinstance(first.body, Header):
                journals[first.body.journal] = journal
                roles[first.body.journal] = first.body.role
        others: Mapping[str, SessionJournal] = (
            journals if store is None else _WithStore(journals, store, stack)
        )
        checks: list[ReceiptCheck] = []
        for journal_id, journal in list(journals.items()):
            if roles[journal_id] in ("session", "pin"):
                checks.extend(check_receipts(journal, others))
    status = OK
    for check in checks:
        if check.ok is False:
            warn(f"{check.journal} seq {check.seq}: {check.kind} does not verify: {check.problem}")
            status = PROBLEM
    if checks and not quiet:
        good = sum(1 for c in checks if c.ok)
        unchecked = sum(1 for c in checks if c.ok is None)
        bad = len(checks) - good - unchecked
        note = f", {unchecked} not checked (give the memory journals they name too)" if unchecked else ""
        print(f"receipts: {good} verified, {bad} bad{note}")
    return status


class _WithStore(Mapping[str, SessionJournal]):
    """The journals given, and on demand any other journal of the store (a memory journal a receipt
    names), opened read-only for the rest of the check."""

    def __init__(
        self, given: dict[str, SessionJournal], store: JournalStore, stack: contextlib.ExitStack
    ) -> None:
        self._given = given
        self._store = store
        self._stack = stack
        self._missing: set[str] = set()

    def __getitem__(self, journal_id: str) -> SessionJournal:
        if journal_id not in self._given and journal_id not in self._missing:
            try:
                self._given[journal_id] = self._stack.enter_context(open_journal(self._store, journal_id))
            except (JournalError, OSError):
                self._missing.add(journal_id)
        return self._given[journal_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)
