"""The receipt part of `waybook verify`: memory receipts re-derived from the journals given together.

Each session or pin journal among the paths has its receipts checked (memory/receipts.py,
`check_receipts`) against the canonical and working journals among the same paths, matched by their
header's journal id; with `--store`, a memory journal a receipt names is also found in the store without
being given. A receipt naming a journal that is nowhere to be found is reported as not checked.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path

from waybook.commands.exits import OK, PROBLEM, UsageError, warn
from waybook.commands.store_option import open_in_store
from waybook.journal import JournalError, JsonlJournal, SessionJournal
from waybook.memory.canonical.receipts import ReceiptCheck, check_receipts
from waybook.model._records import Header


def verify_receipts(paths: list[Path], *, quiet: bool, store: str | None = None) -> int:
    """Check the receipts in every journal of `paths` (journal ids in `store`, with --store); OK, or
    PROBLEM if any receipt does not derive."""
    with contextlib.ExitStack() as stack:
        journals: dict[str, SessionJournal] = {}
        roles: dict[str, str] = {}
        for path in paths:
            try:
                opened = (
                    JsonlJournal(path, readonly=True) if store is None else open_in_store(store, str(path))
                )
                journal = stack.enter_context(opened)
                first = next(iter(journal.read(limit=1)), None)
            except (JournalError, OSError, UsageError):
                continue  # the chain check above has already reported it
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

    def __init__(self, given: dict[str, SessionJournal], url: str, stack: contextlib.ExitStack) -> None:
        self._given = given
        self._url = url
        self._stack = stack
        self._missing: set[str] = set()

    def __getitem__(self, journal_id: str) -> SessionJournal:
        if journal_id not in self._given and journal_id not in self._missing:
            try:
                self._given[journal_id] = self._stack.enter_context(open_in_store(self._url, journal_id))
            except (JournalError, OSError, UsageError):
                self._missing.add(journal_id)
        return self._given[journal_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._given)

    def __len__(self) -> int:
        return len(self._given)
