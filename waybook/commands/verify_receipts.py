"""The receipt part of `waybook verify`: memory receipts re-derived from the journals given together.

Each session or pin journal among the paths has its receipts checked (memory/receipts.py,
`check_receipts`) against the canonical and working journals among the same paths, matched by their
header's journal id. A receipt naming a journal that was not given is reported as not checked.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from waybook.commands.common import OK, PROBLEM, UsageError, warn
from waybook.commands.store_option import open_in_store
from waybook.journal import JournalError, JsonlJournal, SessionJournal
from waybook.journal.records import Header
from waybook.memory.receipts import ReceiptCheck, check_receipts


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
        checks: list[ReceiptCheck] = []
        for journal_id, journal in journals.items():
            if roles[journal_id] in ("session", "pin"):
                checks.extend(check_receipts(journal, journals))
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
