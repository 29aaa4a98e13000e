"""Value types a store returns (journal listings, feed entries, purge receipts) and takes (a sealed
journal to create whole)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import attrs
import msgspec

from waybook.codecs import sha256_hex
from waybook.model import Head, Record


class FeedEntry(msgspec.Struct, frozen=True, gc=False):
    """One committed record in the store-wide feed.

    `position` orders every record of every journal in one global commit order (1-based, increasing,
    never reused; positions of purged journals are skipped, so there can be gaps). `line` is the
    record's stored canonical bytes, for replicas that copy journals verbatim.
    """

    position: int
    journal_id: str
    seq: int
    record: Record
    line: bytes


@attrs.frozen
class JournalInfo:
    """A journal as the store's catalog lists it."""

    journal_id: str
    role: str
    metadata: dict[str, Any]
    created: int
    """The journal's creation ordinal in this store (what listing orders by)."""
    created_at: str
    hidden: bool = False


@attrs.frozen
class JournalPage:
    """One page of a listing. Pass `cursor` as `list(after=...)` for the next page; None on the last."""

    journals: tuple[JournalInfo, ...]
    cursor: str | None

    def __iter__(self) -> Iterator[JournalInfo]:
        return iter(self.journals)

    def __len__(self) -> int:
        return len(self.journals)


@attrs.frozen
class PurgeReceipt:
    """What `purge` erased, as recorded in the store's catalog journal.

    `head` and `records` describe the erased journal at the moment of purge (so an auditor can tell what
    existed without seeing it); `catalog_seq` is the seq of the receipt record in the catalog journal.
    """

    store: str
    journal_id: str
    role: str
    head: Head
    records: int
    reason: str
    actor: str | None
    at: str
    catalog_seq: int

    @property
    def digest(self) -> str:
        """SHA-256 over the receipt's fields: what an auditor compares with the catalog record."""
        fields = (
            f"{self.journal_id}\0{self.role}\0{self.head.seq}\0{self.head.digest}\0{self.records}\0"
            f"{self.reason}\0{self.actor or ''}\0{self.at}\0{self.catalog_seq}"
        )
        return sha256_hex(fields.encode())

    def as_json(self) -> dict[str, Any]:
        """The receipt as `waybook purge --json` and `waybook retain --json` print it."""
        return {
            "journal": self.journal_id,
            "role": self.role,
            "head": {"seq": self.head.seq, "digest": self.head.digest},
            "records": self.records,
            "reason": self.reason,
            "actor": self.actor,
            "at": self.at,
            "catalog_seq": self.catalog_seq,
            "receipt_digest": self.digest,
        }


@attrs.frozen
class SealedJournal:
    """A journal to create whole: its id in the store, its lines (each ending in a newline, exactly as a
    journal of this library sealed them: `b"".join(line + b"\\n" for line in staged.read_lines())`) and
    the head they end at (the checked journal's `head()`: the lines must prove to exactly it)."""

    journal_id: str
    data: bytes = attrs.field(repr=lambda data: f"<{len(data)} bytes>")
    head: Head

    @classmethod
    def of(cls, journal_id: str, lines: Iterable[bytes], head: Head) -> SealedJournal:
        """The journal from its lines without their newlines (a journal's `read_lines()`)."""
        return cls(journal_id, b"".join(line + b"\n" for line in lines), head)
