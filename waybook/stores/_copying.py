"""Copying a journal verbatim: the same records in the same batches, so every byte and digest is kept."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from waybook.journal import SessionJournal
from waybook.model import GENESIS, Head, InvalidArgumentError, NewRecord, Record


def batches_of(records: Iterable[Record]) -> Iterator[list[NewRecord]]:
    """Committed records regrouped into the batches they were appended in (a record's `batch` place,
    or alone), as NewRecords ready to append again (a sealed record with its salt, so its bytes stay).
    A record whose content was erased cannot be appended again with its digest: InvalidArgumentError."""
    batch: list[NewRecord] = []
    for record in records:
        if not isinstance(record, Record):
            msg = f"copy_records copies Records (journal.read()), not {type(record).__name__}"
            raise InvalidArgumentError(msg)
        if record.erased is not None:
            msg = (
                f"record {record.seq} ({record.id}) had its content erased (by erasure {record.erased.by}); "
                "a journal with erased records cannot be copied record by record: copy its file instead"
            )
            raise InvalidArgumentError(msg)
        batch.append(NewRecord(id=record.id, at=record.at, body=record.body, salt=record.salt))
        place = record.batch
        if place is None or place[0] == place[1]:
            yield batch
            batch = []
    if batch:
        yield batch  # a cut batch: appending it writes new batch places, and the copy will differ


def copy_records(records: Iterable[Record], target: SessionJournal, *, expected: Head = GENESIS) -> Head:
    """Append `records` to `target` after `expected`, batch by batch as they were committed; the copy's
    lines equal the source's. Returns the new head. Each batch is compare-and-appended, so a copy that
    meets another writer stops with StaleWriterError; a target that is not a journal, or an `expected`
    that is not a Head, is an InvalidArgumentError before anything is read or written."""
    if not isinstance(target, SessionJournal):
        shown = type(target).__name__
        msg = f"copy_records appends to a journal (store.create(id), JsonlJournal(path)), not {shown}"
        raise InvalidArgumentError(msg)
    if not isinstance(expected, Head):
        msg = f"copy_records' expected is the target's Head (target.head()), not {type(expected).__name__}"
        raise InvalidArgumentError(msg)
    if isinstance(records, str | bytes) or not isinstance(records, Iterable):
        msg = f"copy_records copies an iterable of Records (journal.read()), not {type(records).__name__}"
        raise InvalidArgumentError(msg)
    head = expected
    for batch in batches_of(records):
        head = target.append(batch, expected=head).head
    return head
