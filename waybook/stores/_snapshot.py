"""The directory store's snapshot: its catalog fold and what its feed fed, as of a catalog head and a
prefix of `feed.runs`.

Opening a directory store folds its whole catalog journal and reads its whole `feed.runs`: O(journals).
A snapshot saves the outcome beside them, naming what it folded: the catalog's record (seq and digest)
it folds up to, and the byte size and SHA-256 of the `feed.runs` prefix it read. An open uses it only
when the snapshot's own SHA-256 holds, its numbers agree, and both still name a prefix of what is on
disk (the catalog's record at that seq has that digest: the digest chain commits to everything before
it; the first bytes of `feed.runs` hash to that SHA-256); it then folds only what follows. Anything else
(missing, torn, stale, forged, another store's, an older format) is ignored: the snapshot is an
accelerator, never a source of truth. Like the JSONL checkpoint it is not a signature: someone who can
rewrite the catalog can rewrite its snapshot too.

What it restores stays compact until asked for: the journals as their encoded rows (JournalTable), the
feed as what it fed of each journal (the runs themselves are read from `feed.runs` when a feed read first
needs them). This module is pure: the store reads and writes the file.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Final

import msgspec

from waybook.codecs import sha256_hex
from waybook.model import Head, Record
from waybook.stores._catalog import Catalog
from waybook.stores._journal_table import JournalRow, JournalTable
from waybook.stores._runs import Run, Runs
from waybook.stores._values import PurgeReceipt

MAGIC: Final = b"waybook store snapshot 1\n"
"""The first line of a snapshot file; a different format (or no magic at all) is ignored."""


class _Receipt(msgspec.Struct, array_like=True, frozen=True):
    """A purge receipt without its store URL (the store's URL is whatever path opens it now)."""

    journal_id: str
    role: str
    head_seq: int
    head_digest: str
    records: int
    reason: str
    actor: str | None
    at: str
    catalog_seq: int


class StoreSnapshot(msgspec.Struct, frozen=True):
    """What a directory store folded: the catalog through `catalog_seq` (whose record's digest is
    `catalog_digest`) and the `feed_runs` runs in the first `feed_size` bytes of `feed.runs`."""

    catalog_seq: int
    catalog_digest: str
    ids: list[str]
    """The journals' ids in creation order."""
    created: list[int]
    hidden: list[int]
    rows: list[msgspec.Raw]
    """Each journal's JournalRow, in the order of `ids`."""
    purged: list[_Receipt]
    feed_size: int
    feed_sha256: str
    feed_head: int
    feed_runs: int
    fed: dict[str, int]
    digests: dict[str, str]


_DECODER = msgspec.json.Decoder(StoreSnapshot)


def encode_snapshot(catalog: Catalog, runs: Runs, *, feed_size: int, feed_sha256: str) -> bytes:
    """The snapshot file's bytes: the magic, the SHA-256 of the body, the body."""
    assert catalog.last is not None
    ids, created, hidden = catalog.layout()
    rows: list[msgspec.Raw | JournalRow] = [catalog.journals.row(journal_id) for journal_id in ids]
    purged = [
        _Receipt(
            r.journal_id, r.role, r.head.seq, r.head.digest, r.records, r.reason, r.actor, r.at, r.catalog_seq
        )
        for r in catalog.purged.values()
    ]
    body = msgspec.json.encode(
        {
            "catalog_seq": catalog.seq,
            "catalog_digest": catalog.last.digest,
            "ids": ids,
            "created": created,
            "hidden": hidden,
            "rows": rows,
            "purged": purged,
            "feed_size": feed_size,
            "feed_sha256": feed_sha256,
            "feed_head": runs.head,
            "feed_runs": runs.count,
            "fed": runs.fed,
            "digests": runs.digests(),
        }
    )
    return MAGIC + sha256_hex(body).encode() + b"\n" + body


def decode_snapshot(data: bytes) -> StoreSnapshot | None:
    """The snapshot in `data`, or None when it is not one this version wrote whole (wrong magic, a body
    whose SHA-256 differs, or one that does not decode as a snapshot whose numbers agree)."""
    if not data.startswith(MAGIC):
        return None
    end = data.find(b"\n", len(MAGIC))
    body = memoryview(data)[end + 1 :]  # (not a copy of the body)
    if end < 0 or data[len(MAGIC) : end] != hashlib.sha256(body).hexdigest().encode():
        return None
    try:
        snapshot = _DECODER.decode(body)
    except (msgspec.DecodeError, ValueError):
        return None
    return snapshot if _agrees(snapshot) else None


def _agrees(snapshot: StoreSnapshot) -> bool:
    """Whether the snapshot's numbers agree with each other: one row and one creation seq per id, the
    creation seqs ascending within the catalog, the hidden ones among them."""
    created, seq = snapshot.created, snapshot.catalog_seq
    if seq < 1 or min(snapshot.feed_size, snapshot.feed_head, snapshot.feed_runs) < 0:
        return False
    if not len(snapshot.ids) == len(created) == len(snapshot.rows) or len(set(snapshot.ids)) != len(created):
        return False
    if created and not (created[0] > 0 and created[-1] <= seq):
        return False
    seqs = set(created)
    if len(seqs) != len(created) or created != sorted(created):  # (ascending, each once)
        return False
    if not seqs.issuperset(snapshot.hidden) or snapshot.hidden != sorted(set(snapshot.hidden)):
        return False
    return all(0 < receipt.catalog_seq <= seq for receipt in snapshot.purged)


def restored_catalog(store: str, snapshot: StoreSnapshot, last: Record, *, where: str) -> Catalog | None:
    """The catalog fold the snapshot saved, or None when `last` (the catalog's record at the
    snapshot's seq, as the catalog journal proved it) is not the record the snapshot folded up to."""
    if Head.of(last) != Head(snapshot.catalog_seq, snapshot.catalog_digest):
        return None
    purged = {
        r.journal_id: PurgeReceipt(
            store=store,
            journal_id=r.journal_id,
            role=r.role,
            head=Head(r.head_seq, r.head_digest),
            records=r.records,
            reason=r.reason,
            actor=r.actor,
            at=r.at,
            catalog_seq=r.catalog_seq,
        )
        for r in snapshot.purged
    }
    return Catalog(
        store,
        seq=last.seq,
        last=last,
        journals=JournalTable.of_rows(snapshot.ids, snapshot.rows, where=where),
        purged=purged,
        created=snapshot.created,
        ids=snapshot.ids,
        hidden=snapshot.hidden,
    )


def restored_runs(snapshot: StoreSnapshot, load: Callable[[], list[Run]]) -> Runs:
    """The feed index the snapshot saved; `load` reads the runs of its prefix when first needed."""
    return Runs.pending(
        head=snapshot.feed_head,
        count=snapshot.feed_runs,
        fed=snapshot.fed,
        digests=snapshot.digests,
        load=load,
    )
