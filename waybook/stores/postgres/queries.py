"""The statements the PostgreSQL store runs, and the pure steps between their rows and journal state.

Shared by the sync and the async journal: each runs these statements on its own kind of connection and
hands the rows here. Nothing in this module does I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import msgspec

from waybook.codecs.wire import decode_record, line_digest
from waybook.journal.errors import BrokenChainError, CorruptJournalError
from waybook.journal.head import GENESIS, Head
from waybook.journal.ledger import Plan, prove_lines
from waybook.journal.records import Record

HEAD: Final = "SELECT seq, digest FROM waybook_heads WHERE journal_id = %s"

ROWS: Final = (
    "SELECT seq, digest, line FROM waybook_records"
    " WHERE journal_id = %s AND seq >= %s ORDER BY seq LIMIT %s"
)
"""A page of a journal's records from seq %s on (the caller asks one early for the anchor's digest)."""

TAIL: Final = "SELECT seq, digest, line FROM waybook_records WHERE journal_id = %s AND seq > %s ORDER BY seq"

APPEND: Final = (
    "SELECT committed, head_seq, head_digest, first_position FROM waybook_append(%s, %s, %s, %s, %s)"
)

FEED: Final = (
    "SELECT position, journal_id, seq, digest, line FROM waybook_records"
    " WHERE position > %s ORDER BY position LIMIT %s"
)

LAST_POSITION: Final = "SELECT position FROM waybook_feed_clock"

CHANNEL: Final = "SELECT waybook_channel()"

PAGE: Final = 2048
"""Records per round trip when reading a journal."""


class AppendOutcome(msgspec.Struct, frozen=True, gc=False):
    """What `waybook_append` answered: committed, or the head it found instead (None: no journal)."""

    committed: bool
    head: Head | None
    first_position: int | None


def append_params(journal_id: str, plan: Plan) -> tuple[object, ...]:
    prior = plan.result.prior
    digests = [record.digest for record in plan.result.records]
    return (journal_id, prior.seq, prior.digest, digests, list(plan.lines))


def append_outcome(row: Sequence[object] | None) -> AppendOutcome:
    if row is None:
        return AppendOutcome(False, None, None)
    committed, seq, digest, first = row
    head = None if seq is None else Head(int(seq), str(digest))  # type: ignore[call-overload]
    return AppendOutcome(bool(committed), head, None if first is None else int(first))  # type: ignore[call-overload]


Row = tuple[int, str, bytes]
"""(seq, digest, line) of one stored record."""


def prove_rows(rows: Sequence[Row], start: Head, journal: str) -> list[Record]:
    """Decode and prove stored rows that follow `start`: each line's digest, its chain, and that the
    row's seq and digest columns say what the line says. Raises the first integrity error."""
    lines = [bytes(line) for _, _, line in rows]
    records, error = prove_lines(lines, start, journal)
    if error is not None:
        raise error
    for (seq, digest, _), record in zip(rows, records, strict=True):
        if seq != record.seq or digest != record.digest:
            reason = f"the row's seq/digest columns ({seq}, {digest[:12]}) disagree with its record"
            raise BrokenChainError(journal=journal, seq=record.seq, reason=reason)
    return records


def page_start(after: int) -> tuple[int, bool]:
    """The first seq to select for records after `after`, and whether that first row is the anchor."""
    return (after, True) if after > 0 else (1, False)


def split_anchor(rows: Sequence[Row], after: int, anchored: bool, journal: str) -> tuple[Head, Sequence[Row]]:
    """The head to prove `rows` from, and the rows after the anchor."""
    if not anchored:
        return GENESIS, rows
    if not rows or rows[0][0] != after:
        return Head(after, ""), ()  # `after` is past the head: nothing to read
    return Head(after, rows[0][1]), rows[1:]


def feed_record(position: int, journal_id: str, seq: int, digest: str, line: bytes) -> Record:
    """Decode one feed row and check that its line is the record its columns name."""
    record = decode_record(line, where=lambda: f"{journal_id} seq {seq}")
    if record.seq != seq or record.digest != digest or line_digest(line) != digest:
        reason = f"feed position {position}: the stored line does not match its digest or seq"
        raise CorruptJournalError(path=journal_id, offset=position, seq=seq, reason=reason)
    return record
