"""A store's journal names its own id in its header (docs/journal-contract.md, "The header names the
journal"): the check every path that hands a store a ready-made header makes before anything is written:
`create_sealed`'s lines, and a header appended to a journal created empty (`create(..., header=False)`:
a copy, a fork, an import). Reading is never refused: a journal stored before the rule whose header names
another id still opens, and `waybook verify --store` warns of it."""

from __future__ import annotations

from collections.abc import Sequence

from waybook.model import Head, Header
from waybook.stores._errors import HeaderMismatchError


def check_header_names(header: Header, *, store: str, journal_id: str) -> None:
    """HeaderMismatchError if `header`, the first record of journal `journal_id`, names another journal."""
    if header.journal != journal_id:
        raise HeaderMismatchError(store=store, journal_id=journal_id, header_journal=str(header.journal))


def check_first_header(store: str, journal_id: str, records: Sequence[object], expected: Head) -> None:
    """HeaderMismatchError if `records`, appended at `expected`, would start journal `journal_id` with a
    header naming another journal. Anything else passes here (a batch after the header, a malformed
    batch, a stale `expected`): the journal's own checks decide it."""
    if type(expected) is not Head or expected.seq != 0 or not isinstance(records, Sequence) or not records:
        return
    body = getattr(records[0], "body", None)
    if type(body) is Header:
        check_header_names(body, store=store, journal_id=journal_id)
