"""Blobs: large immutable bytes (long tool outputs, images, file snapshots) beside a store's journals.

A blob is addressed by the SHA-256 of its bytes and written before any record that references it.
Records hold a typed reference (`BlobRef`; in content, a `BlobBlock`, or an `ImageBlock` whose source is
`sha256:<hex>`). Garbage collection (`collect`) removes a blob only when all of these hold:
1. no record of any journal of the store references it (every journal is a root, hidden ones too);
2. no writer holds a live lease on it (each `put` takes a lease of its own; it lasts `lease` seconds, an
   hour by default, so a writer that commits the referencing record within half the lease is safe:
   leases expire rather than being dropped after the append, and a collection looks at the feed again
   at least every half lease, so a record committed during a collection is seen before its blob's lease
   runs out). A lease is the writer's: `release` drops the one lease a put took, never another
   writer's lease on the same bytes (two writers of one process share the store object, not a lease);
3. it was stored (or stored again) longer than `grace` seconds ago.
A purge of a journal removes its records, and with them its references. Every collection leaves a
receipt in the store's catalog journal listing what it removed.

Why both a lease and a grace period: the lease protects the usual path (put, then append within the lease);
the grace period protects a writer that stores the same bytes again while a collection is running (storing
existing bytes refreshes their age), so a collection never removes what a writer is about to reference.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from typing import IO, Any, Final, Protocol, runtime_checkable

import attrs

from waybook.journal import utc_now
from waybook.model import BlobBlock, CapacityError, ImageBlock, JournalError, Record

DIGEST_PATTERN: Final = re.compile(r"[0-9a-f]{64}")
IMAGE_PREFIX: Final = "sha256:"
DEFAULT_LEASE: Final = 3600.0
"""Seconds a `put` protects its blob from collection, so its writer can commit the referencing record."""
DEFAULT_GRACE: Final = 3600.0
CHUNK: Final = 1 << 20
DELETE_BATCH: Final = 1000
"""Blobs a collection deletes per lock (one fsync of each shard directory, or one transaction)."""
_PUTS_KEPT: Final = 10_000
"""Puts `Blobs` remembers before it forgets those whose lease has run out."""
RECEIPT_PART: Final = 20_000
"""Removed digests per catalog entry of a receipt (about 1.4 MB of JSON)."""


class BlobError(JournalError):
    """A blob operation failed: see the subclasses."""


class MissingBlobError(BlobError, LookupError):
    """No blob has this digest in the store (never stored, or collected)."""


class BlobDigestError(BlobError, ValueError):
    """A blob's bytes do not hash to its digest, or a digest is not 64 lowercase hex digits."""


class BlobReferencedError(BlobError, ValueError):
    """`release` of a blob a committed record references: its lease must run out, not be dropped."""


class NoBlobStoreError(BlobError):
    """Bytes kept as a blob are needed (an export inlining them), but no blob store was given."""


class BlobTooLargeError(BlobError, CapacityError):
    """A block is over the inline limit and no blob store was given to hold it."""


@attrs.frozen
class BlobRef:
    """A typed reference to a blob: its SHA-256 digest (64 lowercase hex), size in bytes, media type.

    A ref `put` returns also names the lease that put took (`lease`, not part of its value: two refs to
    the same bytes are equal), so `release(ref)` drops exactly that lease."""

    digest: str
    size: int
    media_type: str
    lease: str | None = attrs.field(default=None, eq=False, repr=False, kw_only=True)

    def block(self, name: str | None = None) -> BlobBlock:
        """The content block that references this blob."""
        return BlobBlock(digest=self.digest, size=self.size, media_type=self.media_type, name=name)


@attrs.frozen
class CollectReceipt:
    """What one collection removed and kept, as recorded in the catalog journal."""

    at: str
    grace: float
    removed: tuple[str, ...]
    freed: int
    referenced: int
    leased: int
    young: int
    catalog_seq: int | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "grace": self.grace,
            "removed": list(self.removed),
            "freed": self.freed,
            "referenced": self.referenced,
            "leased": self.leased,
            "young": self.young,
            "catalog_seq": self.catalog_seq,
        }


@runtime_checkable
class BlobStore(Protocol):
    """A store's blobs as a writer uses them (`store.blobs`, a `Blobs`): put, read, release."""

    def put(self, data: bytes | IO[bytes], *, media_type: str = "application/octet-stream") -> BlobRef:
        """Store bytes (a bytes value, or a binary file read in chunks) and take a lease of this put's own
        on them (the ref returned names it)."""
        ...

    def open(self, ref: BlobRef | str) -> IO[bytes]:
        """A binary stream of the blob's bytes. Raises MissingBlobError."""
        ...

    def read(self, ref: BlobRef | str) -> bytes:
        """The blob's bytes, checked against its digest. Raises MissingBlobError, BlobDigestError."""
        ...

    def exists(self, ref: BlobRef | str) -> bool: ...

    def release(self, ref: BlobRef | str) -> None:
        """Drop the lease that put of `ref` took now: for a blob the writer decided never to reference."""
        ...


@runtime_checkable
class BlobEngine(Protocol):
    """A store engine's blob storage, under `Blobs`: every put names its lease. Thread-safe; safe across
    processes where the engine is."""

    def put(
        self, data: bytes | IO[bytes], *, media_type: str = "application/octet-stream", lease: str
    ) -> BlobRef:
        """Store bytes (a bytes value, or a binary file read in chunks) and take the lease `lease` (a
        name no other put uses) on them."""
        ...

    def open(self, ref: BlobRef | str) -> IO[bytes]:
        """A binary stream of the blob's bytes. Raises MissingBlobError."""
        ...

    def read(self, ref: BlobRef | str) -> bytes:
        """The blob's bytes, checked against its digest. Raises MissingBlobError, BlobDigestError."""
        ...

    def exists(self, ref: BlobRef | str) -> bool: ...

    def digests(self) -> Iterator[str]:
        """Every stored digest, in no particular order."""
        ...

    def release(self, ref: BlobRef | str, *, lease: str) -> None:
        """Drop the lease named `lease` (one put's) now: for a blob its writer decided never to reference.
        Other leases on the same bytes stay."""
        ...


def digest_of(ref: BlobRef | str) -> str:
    digest = ref.digest if isinstance(ref, BlobRef) else ref
    if not isinstance(digest, str) or not DIGEST_PATTERN.fullmatch(digest):
        msg = f"{digest!r} is not a blob digest (64 lowercase hex digits of SHA-256)"
        raise BlobDigestError(msg)
    return digest


def chunks_of(data: bytes | IO[bytes]) -> Iterator[bytes]:
    """Bytes, or a binary stream, a megabyte at a time (at least one chunk, maybe empty)."""
    if isinstance(data, bytes | bytearray | memoryview):
        view = memoryview(data)
        for start in range(0, max(len(view), 1), CHUNK):
            yield bytes(view[start : start + CHUNK])
        return
    while chunk := data.read(CHUNK):
        yield chunk


def references(records: Iterable[Record]) -> set[str]:
    """The blob digests that `records` reference (blob blocks, `sha256:` images, nested in results)."""
    found: set[str] = set()
    for record in records:
        for block in getattr(record.body, "content", ()) or ():
            if isinstance(block, BlobBlock):
                found.add(block.digest)
            elif isinstance(block, ImageBlock) and block.source.startswith(IMAGE_PREFIX):
                digest = block.source[len(IMAGE_PREFIX) :]
                if DIGEST_PATTERN.fullmatch(digest):
                    found.add(digest)
    return found


class Collectable(Protocol):
    """What a blob engine offers `collect`, beyond the `BlobEngine` methods."""

    def digests(self) -> Iterator[str]: ...
    def age(self, digest: str, now: float) -> float: ...
    def leased(self, now: float) -> set[str]: ...
    def size(self, digest: str) -> int: ...
    def delete_unless_young(self, digests: list[str], grace: float) -> list[str]: ...


class StoreView(Protocol):
    """What `collect` needs of a journal store: every journal's records, the feed, and the catalog."""

    def list(self, *, hidden: bool = False, after: str | None = None, limit: int = 100) -> Any: ...
    def open(self, journal_id: str) -> Any: ...
    def feed(self, after: int = 0, *, limit: int | None = None) -> Iterator[Any]: ...
    def feed_head(self) -> int: ...
    def note_in_catalog(self, kind: str, data: dict[str, Any]) -> Record: ...


COLLECTED: Final = "waybook.store.blobs_collected"
"""The catalog entry type of a collection receipt."""


def collect(store: StoreView, blobs: Collectable, *, grace: float, clock: Any = None) -> CollectReceipt:
    """Remove the blobs no journal references, no lease holds, and nobody stored within `grace` seconds.

    The roots are every record of every journal (hidden ones too; purged ones are gone). Records committed
    while the scan runs are taken from the feed before anything is deleted, and each delete re-checks the
    blob's age and leases, so a blob a writer stores again meanwhile is kept.
    """
    if not isinstance(grace, int | float) or grace < 0:
        msg = f"grace must be a number of seconds >= 0, not {grace!r}"
        raise BlobError(msg)

    started_at = store.feed_head()
    roots: set[str] = set()
    after: str | None = None
    while True:
        page = store.list(hidden=True, after=after, limit=100)
        for info in page.journals:
            with store.open(info.journal_id) as journal:
                roots |= references(journal.read())
        after = page.cursor
        if after is None:
            break
    position = store.feed_head()
    roots |= references(entry.record for entry in store.feed(started_at))
    rescanned = time.monotonic()
    margin = getattr(blobs, "lease", DEFAULT_LEASE) / 2
    now = time.time()
    leased = blobs.leased(now)
    removed: list[str] = []
    freed = young = held = referenced = 0
    candidates: list[tuple[str, int]] = []
    for digest in list(blobs.digests()):
        if digest in roots:
            referenced += 1
        elif digest in leased:
            held += 1
        elif blobs.age(digest, now) < grace:
            young += 1
        else:
            candidates.append((digest, blobs.size(digest)))
    for start in range(0, len(candidates), DELETE_BATCH):
        if time.monotonic() - rescanned > margin:
            # A record committed since the last look may reference a blob whose lease has run out.
            head = store.feed_head()
            roots |= references(entry.record for entry in store.feed(position))
            position, rescanned = head, time.monotonic()
        chunk = candidates[start : start + DELETE_BATCH]
        batch = [(d, size) for d, size in chunk if d not in roots]
        referenced += len(chunk) - len(batch)  # referenced by a record committed during the collection
        gone = set(blobs.delete_unless_young([d for d, _ in batch], grace))
        for digest, size in batch:
            if digest in gone:
                removed.append(digest)
                freed += size
            else:
                young += 1
    at = clock() if clock is not None else utc_now()
    receipt = CollectReceipt(at, float(grace), tuple(removed), freed, referenced, held, young)
    data = receipt.as_json()
    data.pop("catalog_seq")
    # One catalog entry per RECEIPT_PART removed digests, so a large collection's receipt stays far under
    # the journal's record limit; the entries share `at` and say which part of how many they are.
    parts = [list(removed[i : i + RECEIPT_PART]) for i in range(0, len(removed), RECEIPT_PART)] or [[]]
    entry = None
    for index, part in enumerate(parts, start=1):
        entry = store.note_in_catalog(COLLECTED, data | {"removed": part, "part": [index, len(parts)]})
    assert entry is not None
    return attrs.evolve(receipt, catalog_seq=entry.seq)


@attrs.frozen
class _Lease:
    """One put's lease, as the store object that took it remembers it."""

    name: str
    since: int
    """The feed head before the put: where `release` looks for records that reference the blob."""
    taken: float
    """When, on the monotonic clock (whether it can still be live)."""


class Blobs:
    """A store's blobs (`store.blobs`): an engine's put/open/read, and `collect` over the store's journals.

    Every `put` takes a lease of its own, named uniquely (this object's holder name and a counter); the
    object remembers its live leases per digest, so `release` drops one writer's lease and no other."""

    def __init__(self, engine: Any, store: StoreView) -> None:
        self._engine = engine
        self._store = store
        self._holder = f"{os.getpid()}.{uuid.uuid4().hex[:12]}"
        self._puts = itertools.count(1)
        self._leases: dict[str, list[_Lease]] = {}
        """digest -> the leases this object's puts took on it that it has not released, oldest first.
        Leases that ran out are dropped as the map grows."""
        self._kept = 0
        self._put_mutex = threading.Lock()

    @property
    def engine(self) -> Any:
        return self._engine

    def put(self, data: bytes | IO[bytes], *, media_type: str = "application/octet-stream") -> BlobRef:
        """Store bytes (or a binary stream, read a megabyte at a time); returns the reference to record.
        Takes a lease, so the blob is safe from collection until the referencing record is committed."""
        if not isinstance(media_type, str) or "/" not in media_type:
            msg = f"media_type must be a MIME type such as 'text/plain', not {media_type!r}"
            raise BlobError(msg)
        if not isinstance(data, bytes | bytearray | memoryview) and not hasattr(data, "read"):
            msg = f"put takes bytes or a binary file, not {type(data).__name__}"
            raise BlobError(msg)
        head = self._store.feed_head()
        name = f"{self._holder}.{next(self._puts)}"
        stored: BlobRef = self._engine.put(data, media_type=media_type, lease=name)
        with self._put_mutex:
            self._leases.setdefault(stored.digest, []).append(_Lease(name, head, time.monotonic()))
            self._kept += 1
            if self._kept > _PUTS_KEPT:
                self._forget_expired()
        return attrs.evolve(stored, lease=name)

    def open(self, ref: BlobRef | str) -> IO[bytes]:
        """A binary stream of the blob (for large blobs: read it in chunks). The bytes are hashed as they
        are read: the read that reaches the end raises BlobDigestError if they are not the blob's (a
        truncated or altered file), so a reader that reads to the end never takes wrong bytes as whole."""
        digest = digest_of(ref)
        return io.BufferedReader(_Verified(self._engine.open(ref), digest), buffer_size=CHUNK)

    def read(self, ref: BlobRef | str) -> bytes:
        """The blob's bytes, checked against its digest."""
        data: bytes = self._engine.read(ref)
        return data

    def exists(self, ref: BlobRef | str) -> bool:
        return bool(self._engine.exists(ref))

    def digests(self) -> Iterator[str]:
        return iter(self._engine.digests())

    def release(self, ref: BlobRef | str) -> None:
        """Drop a lease now: only for a blob the writer decided never to reference. Given the ref its
        `put` returned, that put's lease; given a digest (or a ref made elsewhere), the oldest lease this
        store object holds on the blob. Other writers' leases on the same bytes are never dropped, so a
        writer about to reference them is still protected. Nothing to drop (no live lease of this
        object's) does nothing.

        Refused (BlobReferencedError, the lease kept) when a record committed since that put references
        the blob: dropping its lease would let a collection running meanwhile, whose scan of the
        journals began before the record was committed, delete a referenced blob. A referenced blob
        needs no release; its lease runs out by itself."""
        digest = digest_of(ref)
        wanted = ref.lease if isinstance(ref, BlobRef) else None
        with self._put_mutex:
            held = self._leases.get(digest, [])
            lease = next((x for x in held if x.name == wanted), held[0] if held else None)
        if lease is None:
            return
        if time.monotonic() - lease.taken < self._lease():  # (a lease that ran out protects nothing)
            for entry in self._store.feed(lease.since):
                if digest in references((entry.record,)):
                    msg = (
                        f"blob {digest[:12]}... is referenced by record {entry.seq} of journal "
                        f"{entry.journal_id!r}; a referenced blob keeps its lease until it runs out "
                        "(nothing to release)"
                    )
                    raise BlobReferencedError(msg)
        self._engine.release(digest, lease=lease.name)
        with self._put_mutex:
            left = [x for x in self._leases.get(digest, []) if x is not lease]
            if left:
                self._leases[digest] = left
            else:
                self._leases.pop(digest, None)
            self._kept -= 1

    def _lease(self) -> float:
        return float(getattr(self._engine, "lease", DEFAULT_LEASE))

    def _forget_expired(self) -> None:
        horizon = time.monotonic() - self._lease()
        for digest, held in list(self._leases.items()):
            live = [x for x in held if x.taken >= horizon]
            if live:
                self._leases[digest] = live
            else:
                del self._leases[digest]
        self._kept = sum(map(len, self._leases.values()))

    def verify(self, ref: BlobRef | str) -> None:
        """Raise MissingBlobError or BlobDigestError unless the blob is there and whole."""
        self.read(ref)

    def collect(self, grace: float = DEFAULT_GRACE) -> CollectReceipt:
        """Remove unreferenced, unleased blobs stored more than `grace` seconds ago; returns the receipt
        (also recorded in the store's catalog)."""
        return collect(self._store, self._engine, grace=grace)


class _Verified(io.RawIOBase):
    """A blob's stream, hashed as it is read; the read that reaches its end checks the digest."""

    def __init__(self, stream: IO[bytes], digest: str) -> None:
        self._stream = stream
        self._digest = digest
        self._hash = hashlib.sha256()
        self._checked = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        data = self._stream.read(len(view))
        if not data:
            self._check()
            return 0
        view[: len(data)] = data
        self._hash.update(data)
        return len(data)

    def _check(self) -> None:
        if self._checked:
            return
        self._checked = True
        found = self._hash.hexdigest()
        if found != self._digest:
            msg = (
                f"blob {self._digest[:12]}... read back as bytes hashing to {found[:12]}... (truncated or "
                "altered on disk); do not use what was read. `waybook verify --store URL ID --blobs` "
                "lists the damaged blobs"
            )
            raise BlobDigestError(msg)

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()
