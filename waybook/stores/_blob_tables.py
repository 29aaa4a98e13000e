"""Blobs in tables: a SQLite store's `blobs` and `blob_leases`, and an in-memory twin for tests.

SQLite keeps each blob as one row (`data` a BLOB written and read in chunks through SQLite's incremental
blob I/O, so a large blob never has to fit in memory twice). Storing bytes that are already there
refreshes their `stored` time. A collection deletes a row in one statement that re-checks its age and its
leases, so it cannot remove a blob that a writer stored again after the collection decided.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import sqlite3
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from waybook.model import StorageError
from waybook.stores._blobs import (
    CHUNK,
    DEFAULT_LEASE,
    BlobDigestError,
    BlobRef,
    MissingBlobError,
    chunks_of,
    digest_of,
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS blobs (
    id INTEGER PRIMARY KEY,
    digest TEXT NOT NULL UNIQUE,
    size INTEGER NOT NULL,
    media_type TEXT NOT NULL,
    stored REAL NOT NULL,
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS blob_leases (
    digest TEXT NOT NULL,
    holder TEXT NOT NULL,
    taken REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS blob_leases_digest ON blob_leases (digest);
"""


class SqliteBlobs:
    """The blobs of a SQLite store (`store.blobs`), in the same database file."""

    def __init__(self, path: Path, *, lease: float = DEFAULT_LEASE, busy_timeout: float = 30.0) -> None:
        self._path = path
        self._lease = lease
        self.lease = lease
        self._timeout = busy_timeout
        self._local = threading.local()
        self._inventory: dict[str, tuple[int, float]] = {}
        with contextlib.closing(self._connect()) as conn:
            conn.executescript(_SCHEMA)  # idempotent; executescript commits on its own

    def put(
        self, data: bytes | IO[bytes], *, media_type: str = "application/octet-stream", lease: str
    ) -> BlobRef:
        with tempfile.TemporaryFile() as spool:
            size = 0
            sha = hashlib.sha256()
            for chunk in chunks_of(data):
                sha.update(chunk)
                spool.write(chunk)
                size += len(chunk)
            ref = BlobRef(digest=sha.hexdigest(), size=size, media_type=media_type)
            now = time.time()
            with self._write() as conn:
                conn.execute(
                    "INSERT INTO blob_leases (digest, holder, taken) VALUES (?, ?, ?)",
                    (ref.digest, lease, now),
                )
                row = conn.execute("SELECT id FROM blobs WHERE digest = ?", (ref.digest,)).fetchone()
                if row is not None:
                    conn.execute("UPDATE blobs SET stored = ? WHERE id = ?", (now, row[0]))
                    return ref
                cursor = conn.execute(
                    "INSERT INTO blobs (digest, size, media_type, stored, data) "
                    "VALUES (?, ?, ?, ?, zeroblob(?))",
                    (ref.digest, size, media_type, now, size),
                )
                assert cursor.lastrowid is not None
                spool.seek(0)
                with conn.blobopen("blobs", "data", cursor.lastrowid) as blob:
                    while chunk := spool.read(CHUNK):
                        blob.write(chunk)
            return ref

    def open(self, ref: BlobRef | str) -> IO[bytes]:
        digest = digest_of(ref)
        conn = self._connect()
        row = conn.execute("SELECT id FROM blobs WHERE digest = ?", (digest,)).fetchone()
        if row is None:
            conn.close()
            msg = f"no blob {digest} in {self._path}; it was never stored here, or was collected"
            raise MissingBlobError(msg)
        stream = _BlobStream(conn, conn.blobopen("blobs", "data", row[0], readonly=True))
        return io.BufferedReader(stream, CHUNK)

    def read(self, ref: BlobRef | str) -> bytes:
        with self.open(ref) as stream:
            data = stream.read()
        digest = digest_of(ref)
        if hashlib.sha256(data).hexdigest() != digest:
            msg = f"blob {digest} in {self._path} is damaged: its bytes do not hash to its digest"
            raise BlobDigestError(msg)
        return data

    def exists(self, ref: BlobRef | str) -> bool:
        digest = digest_of(ref)
        with contextlib.closing(self._connect()) as conn:
            return conn.execute("SELECT 1 FROM blobs WHERE digest = ?", (digest,)).fetchone() is not None

    def digests(self) -> Iterator[str]:
        with contextlib.closing(self._connect()) as conn:
            rows = conn.execute("SELECT digest, size, stored FROM blobs ORDER BY digest").fetchall()
        # Kept for `collect`, which asks each blob's age and size next: one query, not two connections
        # per blob. A stale answer is harmless: the delete statement re-checks age and leases itself.
        self._inventory = {digest: (int(size), float(stored)) for digest, size, stored in rows}
        return iter([digest for digest, _, _ in rows])

    def release(self, ref: BlobRef | str, *, lease: str) -> None:
        with self._write() as conn:
            conn.execute("DELETE FROM blob_leases WHERE digest = ? AND holder = ?", (digest_of(ref), lease))

    # --- what collect needs ---

    def age(self, digest: str, now: float) -> float:
        known = self._inventory.get(digest)
        if known is not None:
            return now - known[1]
        with contextlib.closing(self._connect()) as conn:
            row = conn.execute("SELECT stored FROM blobs WHERE digest = ?", (digest,)).fetchone()
        return now - row[0] if row else 0.0

    def leased(self, now: float) -> set[str]:
        with self._write() as conn:
            conn.execute("DELETE FROM blob_leases WHERE taken <= ?", (now - self._lease,))
            return {row[0] for row in conn.execute("SELECT DISTINCT digest FROM blob_leases")}

    def size(self, digest: str) -> int:
        known = self._inventory.get(digest)
        if known is not None:
            return known[0]
        with contextlib.closing(self._connect()) as conn:
            row = conn.execute("SELECT size FROM blobs WHERE digest = ?", (digest,)).fetchone()
        return int(row[0]) if row else 0

    def delete_unless_young(self, digests: list[str], grace: float) -> list[str]:
        """Remove these blobs in one transaction, except any stored again or leased meanwhile (the
        statement re-checks both); returns the digests removed."""
        now = time.time()
        removed = []
        with self._write() as conn:
            for digest in digests:
                cursor = conn.execute(
                    "DELETE FROM blobs WHERE digest = ? AND stored <= ? AND NOT EXISTS "
                    "(SELECT 1 FROM blob_leases WHERE blob_leases.digest = blobs.digest AND taken > ?)",
                    (digest, now - grace, now - self._lease),
                )
                if cursor.rowcount == 1:
                    removed.append(digest)
        if removed:  # the log's frames and the database's older pages still hold the bytes: checkpoint
            with contextlib.closing(self._connect()) as conn, contextlib.suppress(sqlite3.OperationalError):
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # busy readers: the next collection's
        return removed

    # --- connections ---

    def _connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(self._path, timeout=self._timeout, isolation_level=None)
        except sqlite3.Error as exc:
            msg = f"{self._path}: cannot open the blob tables: {exc}"
            raise StorageError(msg) from exc
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA secure_delete=ON")  # a collected blob's bytes are zeroed, not just freed
        return conn

    @contextlib.contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        conn = self._connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            yield conn
            conn.execute("COMMIT")
        except sqlite3.OperationalError as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            msg = f"{self._path}: the blob tables are busy or unwritable ({exc}); try again"
            raise StorageError(msg) from exc
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise
        finally:
            conn.close()


class _BlobStream(io.RawIOBase):
    """A readable stream over one SQLite blob that closes its connection with it."""

    def __init__(self, conn: sqlite3.Connection, blob: sqlite3.Blob) -> None:
        self._conn = conn
        self._blob = blob

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._blob.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        if not self.closed:
            self._blob.close()
            self._conn.close()
        super().close()


class MemoryBlobs:
    """Blobs in a dict, for the in-memory store. Same rules as the others, within one process."""

    def __init__(self, *, lease: float = DEFAULT_LEASE) -> None:
        self._blobs: dict[str, tuple[bytes, float]] = {}
        self._leases: dict[str, dict[str, float]] = {}
        """digest -> {lease name: when it was taken}: one lease per put."""
        self._lease = lease
        self.lease = lease
        self._mutex = threading.Lock()

    def put(
        self, data: bytes | IO[bytes], *, media_type: str = "application/octet-stream", lease: str
    ) -> BlobRef:
        value = b"".join(chunks_of(data))
        ref = BlobRef(digest=hashlib.sha256(value).hexdigest(), size=len(value), media_type=media_type)
        with self._mutex:
            now = time.time()
            stored = self._blobs.get(ref.digest)
            self._blobs[ref.digest] = (stored[0] if stored else value, now)
            self._leases.setdefault(ref.digest, {})[lease] = now
        return ref

    def open(self, ref: BlobRef | str) -> IO[bytes]:
        return io.BytesIO(self.read(ref))

    def read(self, ref: BlobRef | str) -> bytes:
        digest = digest_of(ref)
        with self._mutex:
            stored = self._blobs.get(digest)
        if stored is None:
            msg = f"no blob {digest} in this memory store; it was never stored here, or was collected"
            raise MissingBlobError(msg)
        return stored[0]

    def exists(self, ref: BlobRef | str) -> bool:
        with self._mutex:
            return digest_of(ref) in self._blobs

    def digests(self) -> Iterator[str]:
        with self._mutex:
            return iter(sorted(self._blobs))

    def release(self, ref: BlobRef | str, *, lease: str) -> None:
        with self._mutex:
            held = self._leases.get(digest_of(ref), {})
            held.pop(lease, None)

    def age(self, digest: str, now: float) -> float:
        with self._mutex:
            stored = self._blobs.get(digest)
        return now - stored[1] if stored else 0.0

    def leased(self, now: float) -> set[str]:
        with self._mutex:
            return {d for d, held in self._leases.items() if self._live(held, now)}

    def _live(self, held: dict[str, float], now: float) -> bool:
        return any(now - taken < self._lease for taken in held.values())

    def size(self, digest: str) -> int:
        with self._mutex:
            stored = self._blobs.get(digest)
        return len(stored[0]) if stored else 0

    def delete_unless_young(self, digests: list[str], grace: float) -> list[str]:
        removed = []
        with self._mutex:
            now = time.time()
            for digest in digests:
                stored = self._blobs.get(digest)
                if stored is None or now - stored[1] < grace:
                    continue
                if self._live(self._leases.get(digest, {}), now):
                    continue
                del self._blobs[digest]
                removed.append(digest)
        return removed
