"""Writing an import into a store so that it can grow: one record an append, and a journal that already
holds the start of the import keeps it and gets the rest appended.

Every import appends its records one at a time (a waybook export's own batches excepted, which Pi files
carry), so a record's bytes never depend on where an import was cut: importing a prefix of a file and then
the rest gives the same journal, byte for byte, as importing the whole file at once. A journal of the
store that holds records of the import is checked record by record (id, time and body) before anything is
appended: if it holds exactly the import's first records, the rest is appended after them; if it differs,
nothing is written (`JournalDivergedError`).

The appends of one import go through a store opened with the `flush` durability where the store's URL
leaves durability to the default (a `file:` store): every append is written at once and the journals are
made durable together, by `flush()`, before the import reports; an import of 2,000 records is then one
fsync per journal instead of 2,000.
"""

from __future__ import annotations

import urllib.parse
from collections.abc import Iterator, Sequence

import msgspec

from waybook.journal import SessionJournal
from waybook.model import SEALED_SCHEMA, BatchPlace, Head, Header, JournalError, NewRecord, Record

__all__ = [
    "JournalDivergedError",
    "append_records",
    "batches",
    "bulk_url",
    "held_prefix",
    "same_record",
    "sealed",
]


class JournalDivergedError(JournalError):
    """A journal of the store holds records that are not the start of the import: the source was
    rewritten, truncated or replaced, or imported under other options. `seq` is the first record that
    differs (one past the import's last when the journal holds more)."""

    def __init__(self, journal: str, seq: int, why: str) -> None:
        self.journal = journal
        self.seq = seq
        super().__init__(f"journal {journal} differs from this import at seq {seq}: {why}")


def same_record(held: Record | NewRecord, new: NewRecord) -> bool:
    """Whether a committed record is `new` (the same id, time and body). A journal begun by an import
    that did not seal (schema 1) is the same import as a sealing one: it is continued in its own
    schema (`sealed`)."""
    if held.id != new.id or held.at != new.at:
        return False
    if held.body == new.body:
        return True
    old, body = held.body, new.body
    return (
        type(old) is Header
        and type(body) is Header
        and old.schema < body.schema
        and msgspec.structs.replace(body, schema=old.schema) == old
    )


def sealed(records: Sequence[NewRecord]) -> list[NewRecord]:
    """`records` with the header (their first record) declaring the sealed schema, so that the journal
    seals its records' content and can erase it (docs/erasure.md). The import's records stay the same;
    its bytes do not repeat (each sealed record begins with a random salt)."""
    out = list(records)
    if out and type(out[0].body) is Header and out[0].body.schema < SEALED_SCHEMA:
        header = msgspec.structs.replace(out[0].body, schema=SEALED_SCHEMA)
        out[0] = msgspec.structs.replace(out[0], body=header)
    return out


def held_prefix(journal: SessionJournal, name: str, records: Sequence[NewRecord], *, after: int = 0) -> int:
    """How many of `records` the journal holds: its records after seq `after` must equal
    `records[after:]`, in order, up to its head. Raises JournalDivergedError at the first that differs, or
    when the journal holds more records than the import."""
    held = after
    for record in journal.read(after=after):
        index = record.seq - 1
        if index >= len(records):
            why = f"it holds more records than the import's {len(records)}"
            raise JournalDivergedError(name, record.seq, why)
        new = records[index]
        if not same_record(record, new):
            why = f"record {record.id!r} " + ("changed" if record.id == new.id else f"is not {new.id!r}")
            raise JournalDivergedError(name, record.seq, why)
        held = record.seq
    return held


def batches(
    records: Sequence[NewRecord], places: Sequence[BatchPlace | None] | None, *, start: int = 0
) -> Iterator[list[NewRecord]]:
    """`records[start:]` in the batches to append them in: one record each, or the batches `places` names
    (a waybook export's, which a Pi file carries)."""
    at = start
    while at < len(records):
        place = None if places is None else places[at]
        width = 1 if place is None else max(1, place[1] - place[0] + 1)
        yield list(records[at : at + width])
        at += width


def append_records(
    journal: SessionJournal,
    records: Sequence[NewRecord],
    *,
    head: Head,
    places: Sequence[BatchPlace | None] | None = None,
) -> Head:
    """Append `records[head.seq:]` after `head`, batch by batch (`batches`); returns the new head."""
    for batch in batches(records, places, start=head.seq):
        head = journal.append(batch, expected=head).head
    return head


def bulk_url(url: str) -> str:
    """The URL to write an import through: a `file:` store without a durability option gets `flush`
    (appends written at once, fsynced by `flush()`); every other URL as it is."""
    scheme, _, rest = url.partition(":")
    if scheme.lower() != "file":
        return url
    _, _, query = rest.partition("?")
    if "durability" in dict(urllib.parse.parse_qsl(query, keep_blank_values=True)):
        return url
    return f"{url}{'&' if query else '?'}durability=flush"
