"""Blobs in PostgreSQL: `waybook_blobs` (one row per blob), `waybook_blob_parts` (its bytes) and
`waybook_blob_leases`, in the store's schema beside its journals.

Representation: a blob's bytes are `bytea` parts of about a megabyte, `(blob, part, bytes)`, written in
the same transaction as the `waybook_blobs` row that names them. Why not one `bytea` value: PostgreSQL
sends and receives a value whole (a 100 MiB blob would sit in memory on both sides, several times over,
and a value may not exceed 1 GB). Why not large objects (`lo_*`): they live outside the schema in
`pg_largeobject`, are not removed with the rows that point at them (a deleted row leaks its object until
someone runs `vacuumlo`), have their own permissions, and are not dumped per schema. Parts are plain
rows: deleted with their blob (`ON DELETE CASCADE`), dumped, replicated and permissioned like the
journals, and a reader fetches one part at a time.

- `put` streams: it reads the input a megabyte at a time, hashing it (SHA-256, in this process) and
  inserting each part under a fresh blob id, then calls `waybook_blob_add`, which inserts the
  `waybook_blobs` row with the digest and takes the writer's lease, and commits (`synchronous_commit =
  on`: durable before `put` returns). The parts' foreign key is checked at commit, so they can go first.
  A connection lost mid-put rolls the whole transaction back: no row, no parts, nothing visible. A blob
  of one part (a megabyte or less) is one call, one round trip. Bytes already stored keep their first
  copy and only have their `stored` time refreshed (a larger `bytes` value is hashed first and, if
  stored, not sent again: `waybook_blob_keep`). Bytes in hand (a `bytes` value, or a stream of one
  part) are sent again after a lost connection for up to the store's `retry_for`, as appends are; a
  longer stream cannot be read twice: its lost connection raises ConnectionLostError (put it again).
- Times (`stored`, `taken`) are the server's clock: writers on several machines share one store and one
  clock, so leases and the grace period mean the same for all of them.
- A collection's `delete_unless_young` takes an exclusive transaction-scoped advisory lock, then deletes
  in one statement that re-checks each blob's age and live leases; a `put` holds the same lock shared
  while it creates, refreshes and leases a blob. So a blob stored again or leased after the collection
  decided is seen by the statement and kept (the functions are in schema.py).
- `open` fetches the first part with the blob's row, then one part per round trip as the caller reads,
  on whichever pooled connection is free: an open stream holds no connection and no transaction. Only
  an unreferenced blob can be collected, so only such a blob can vanish under a reader; its next part
  then raises MissingBlobError.
"""

from __future__ import annotations

import hashlib
import io
import itertools
from collections.abc import Iterable, Iterator
from typing import IO, Any, Final

from waybook.stores._blobs import (
    CHUNK,
    DEFAULT_LEASE,
    BlobDigestError,
    BlobRef,
    MissingBlobError,
    chunks_of,
    digest_of,
)
from waybook.stores.postgres._connection import Backoff
from waybook.stores.postgres._engine import PostgresEngine
from waybook.stores.postgres._errors import ConnectionLostError
from waybook.stores.postgres._schema import BLOB_LOCK

_EXCLUSIVE: Final = f"SELECT pg_advisory_xact_lock({BLOB_LOCK})"
_KEEP: Final = "SELECT waybook_blob_keep(%s, %s)"
_ADD: Final = "SELECT waybook_blob_add(%s, %s, %s, %s, %s, %s, %s)"
_FIRST_PART: Final = (
    "SELECT b.id, b.parts, p.bytes FROM waybook_blobs AS b"
    " LEFT JOIN waybook_blob_parts AS p ON p.blob = b.id AND p.part = 0 WHERE b.digest = %s"
)
_PART: Final = "SELECT bytes FROM waybook_blob_parts WHERE blob = %s AND part = %s"
_AGE: Final = "extract(epoch FROM clock_timestamp() - stored)::float8"
_LIVE: Final = "clock_timestamp() - make_interval(secs => %s)"


class PostgresBlobs:
    """The blobs of a PostgreSQL store (`store.blobs`), in its schema. Thread-safe; shared by every
    process and machine that opens the store."""

    def __init__(self, engine: PostgresEngine, *, lease: float = DEFAULT_LEASE) -> None:
        self._engine = engine
        self.lease = lease
        self._inventory: dict[str, tuple[int, float]] = {}

    # --- BlobEngine ---

    def put(
        self, data: bytes | IO[bytes], *, media_type: str = "application/octet-stream", lease: str
    ) -> BlobRef:
        if isinstance(data, bytes | bytearray | memoryview):
            return self._put_known(data, media_type, lease)
        parts = _whole_parts(chunks_of(data))
        first = next(parts, b"")
        second = next(parts, None)
        if second is None:  # a small stream: its bytes are here, so it goes like a bytes value
            return self._put_known(first, media_type, lease)
        # A stream cannot be read twice: a lost connection is the caller's to retry (put it again).
        return self._upload(itertools.chain((first, second), parts), media_type, lease)

    def _put_known(self, data: bytes | bytearray | memoryview, media_type: str, lease: str) -> BlobRef:
        """Bytes in hand: hash them first, so a blob already stored is only kept (no byte is sent
        again), and send again after a lost connection for up to the store's retry_for, as appends are.
        A blob of one part is one round trip (`waybook_blob_add` with its bytes)."""
        view = memoryview(data)
        ref = BlobRef(hashlib.sha256(view).hexdigest(), view.nbytes, media_type)
        if view.nbytes <= CHUNK:
            parts = 1 if view.nbytes else 0
            self._engine.run(_ADD, (None, ref.digest, ref.size, parts, media_type, lease, data))
            return ref
        backoff = Backoff(self._engine.retry_for)
        while True:
            try:
                if not self._engine.run(_KEEP, (ref.digest, lease))[0][0]:
                    chunks = (view[i : i + CHUNK] for i in range(0, view.nbytes, CHUNK))
                    self._upload(chunks, media_type, lease)
            except ConnectionLostError:
                if not backoff.pause():
                    raise
            else:
                return ref

    def open(self, ref: BlobRef | str) -> IO[bytes]:
        return io.BufferedReader(self._parts(digest_of(ref)), CHUNK)

    def read(self, ref: BlobRef | str) -> bytes:
        digest = digest_of(ref)
        sha = hashlib.sha256()
        out = io.BytesIO()  # getvalue() hands over its buffer: the bytes are held once
        with self._parts(digest) as parts:
            for part in parts.remaining():
                sha.update(part)
                out.write(part)
        if sha.hexdigest() != digest:
            msg = (
                f"blob {digest} in {self._engine.url} is damaged: its bytes hash to {sha.hexdigest()}; "
                "store the original bytes again with put"
            )
            raise BlobDigestError(msg)
        return out.getvalue()

    def exists(self, ref: BlobRef | str) -> bool:
        return bool(self._engine.run("SELECT 1 FROM waybook_blobs WHERE digest = %s", (digest_of(ref),)))

    def digests(self) -> Iterator[str]:
        rows = self._engine.run(f"SELECT digest, size, {_AGE} FROM waybook_blobs ORDER BY digest")
        # Kept for `collect`, which asks each blob's age and size next: one query, not two per blob. A
        # stale age is harmless: the delete statement re-checks every blob's age and leases itself.
        self._inventory = {digest: (int(size), float(age)) for digest, size, age in rows}
        return iter([digest for digest, _, _ in rows])

    def release(self, ref: BlobRef | str, *, lease: str) -> None:
        self._engine.run(
            "DELETE FROM waybook_blob_leases WHERE digest = %s AND holder = %s RETURNING 1",
            (digest_of(ref), lease),
        )

    # --- what collect needs ---

    def age(self, digest: str, now: float) -> float:
        """Seconds since the blob was stored or stored again, by the server's clock (0 if it is gone)."""
        known = self._inventory.get(digest)
        if known is not None:
            return known[1]
        rows = self._engine.run(f"SELECT {_AGE} FROM waybook_blobs WHERE digest = %s", (digest,))
        return float(rows[0][0]) if rows else 0.0

    def leased(self, now: float) -> set[str]:
        """Digests with a live lease (by the server's clock); expired leases are dropped on the way."""
        rows = self._engine.run(
            f"WITH expired AS (DELETE FROM waybook_blob_leases WHERE taken <= {_LIVE})"
            f" SELECT DISTINCT digest FROM waybook_blob_leases WHERE taken > {_LIVE}",
            (self.lease, self.lease),
        )
        return {row[0] for row in rows}

    def size(self, digest: str) -> int:
        known = self._inventory.get(digest)
        if known is not None:
            return known[0]
        rows = self._engine.run("SELECT size FROM waybook_blobs WHERE digest = %s", (digest,))
        return int(rows[0][0]) if rows else 0

    def delete_unless_young(self, digests: list[str], grace: float) -> list[str]:
        """Remove these blobs (and their parts) in one statement, under the exclusive blob lock, except
        any stored again within `grace` seconds or leased; returns the digests removed. Not retried: a
        lost reply leaves the count unknown, and the next collection finds what is left."""
        if not digests:
            return []
        with self._engine.connection("remove blobs") as conn, conn.transaction():
            conn.execute(_EXCLUSIVE.encode())
            rows = conn.execute(
                "DELETE FROM waybook_blobs AS b WHERE b.digest = ANY(%s)"
                f" AND b.stored <= clock_timestamp() - make_interval(secs => %s)"
                " AND NOT EXISTS (SELECT 1 FROM waybook_blob_leases AS l"
                f" WHERE l.digest = b.digest AND l.taken > {_LIVE}) RETURNING b.digest",
                (digests, grace, self.lease),
            ).fetchall()
        for (digest,) in rows:
            self._inventory.pop(digest, None)
        return [row[0] for row in rows]

    # --- internals ---

    def _upload(self, chunks: Iterable[bytes | memoryview], media_type: str, lease: str) -> BlobRef:
        """One transaction: BEGIN with the blob's fresh id (retried on a fresh connection, as a write's
        first statement is), the parts as they are read, then `waybook_blob_add` makes them a blob (or
        drops them, if the bytes were stored meanwhile) and leases it, and COMMIT."""
        sha = hashlib.sha256()
        size = parts = 0
        try:
            with self._engine.transaction(write=True) as tx:
                blob_id = int(tx.statement("SELECT nextval('waybook_blob_ids')")[0][0])
                for part in _whole_parts(chunks):
                    sha.update(part)
                    tx.conn.execute(
                        b"INSERT INTO waybook_blob_parts (blob, part, bytes) VALUES (%s, %s, %s)",
                        (blob_id, parts, part),
                        binary=True,
                    )
                    size += len(part)
                    parts += 1
                ref = BlobRef(digest=sha.hexdigest(), size=size, media_type=media_type)
                tx.statement(_ADD, (blob_id, ref.digest, size, parts, media_type, lease, None))
        except ConnectionLostError as exc:
            raise ConnectionLostError(
                store=exc.store,
                doing="store a blob",
                cause=exc.__cause__ or exc,
                advice="The blob is stored whole or not at all: put the same bytes again once the server "
                "answers (bytes already stored are kept, not stored twice).",
            ) from exc
        return ref

    def _parts(self, digest: str) -> _PartStream:
        rows = self._engine.run(_FIRST_PART, (digest,))
        if not rows:
            msg = (
                f"no blob {digest} in {self._engine.url}; it was never stored here, or was collected "
                "(store it again with put)"
            )
            raise MissingBlobError(msg)
        blob_id, parts, first = rows[0]
        return _PartStream(self, digest, int(blob_id), int(parts), first or b"")

    def _part(self, digest: str, blob_id: int, part: int) -> bytes:
        rows = self._engine.run(_PART, (blob_id, part))
        if not rows:
            msg = (
                f"blob {digest} in {self._engine.url} was collected while being read (only a blob no "
                "journal references can be); store it again with put before referencing it"
            )
            raise MissingBlobError(msg)
        data: bytes = rows[0][0]
        return data


class _PartStream(io.RawIOBase):
    """A readable stream over a blob's parts, fetching each as the reader reaches it."""

    def __init__(self, blobs: PostgresBlobs, digest: str, blob_id: int, parts: int, first: bytes) -> None:
        self._blobs = blobs
        self._digest = digest
        self._id = blob_id
        self._parts = parts
        self._next = 1
        self._current = memoryview(first)

    def readable(self) -> bool:
        return True

    def remaining(self) -> Iterator[bytes]:
        """The unread bytes, a part at a time."""
        if self._current:
            yield bytes(self._current)
            self._current = memoryview(b"")
        while self._next < self._parts:
            part = self._blobs._part(self._digest, self._id, self._next)
            self._next += 1
            yield part

    def readinto(self, buffer: Any) -> int:
        while not self._current and self._next < self._parts:
            self._current = memoryview(self._blobs._part(self._digest, self._id, self._next))
            self._next += 1
        count = min(len(buffer), len(self._current))
        buffer[:count] = self._current[:count]
        self._current = self._current[count:]
        return count

    def readall(self) -> bytes:
        out = io.BytesIO()
        for part in self.remaining():
            out.write(part)
        return out.getvalue()


def _whole_parts(chunks: Iterable[bytes | memoryview]) -> Iterator[bytes | memoryview]:
    """`chunks` regrouped into parts of at least CHUNK bytes (the last may be shorter; none is empty),
    so a stream that returns short reads does not make thousands of tiny rows."""
    pending = bytearray()
    for chunk in chunks:
        if not pending and len(chunk) >= CHUNK:
            yield chunk
            continue
        pending += chunk
        if len(pending) >= CHUNK:
            yield bytes(pending)
            pending.clear()
    if pending:
        yield bytes(pending)
