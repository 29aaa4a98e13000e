"""Blobs as files: `DIR/blobs/sha256/ab/<64 hex>`, beside a directory store's journals.

A blob is written to a temporary file, fsynced and renamed into place, so a reader sees all of it or
none. Storing bytes that are already there refreshes the file's age (its mtime) instead. Leases are files
`DIR/blobs/leases/<hex>.<lease>`, one per put (`<lease>` names it: the process, the store object and the
put), whose mtime says when they were taken. Writers (`put`) hold a shared
lock on `DIR/blobs/gc.lock` and a collection's delete phase an exclusive one, so a blob is never removed
while a writer is storing or refreshing it.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from waybook._files import FILE_MODE, fsync_dir
from waybook.model import StorageError
from waybook.stores._blobs import (
    DEFAULT_LEASE,
    BlobDigestError,
    BlobRef,
    MissingBlobError,
    chunks_of,
    digest_of,
)


class FileBlobs:
    """The blobs of a directory store (`store.blobs`). Cross-process safe on a local filesystem."""

    def __init__(self, directory: Path, *, lease: float = DEFAULT_LEASE) -> None:
        self._root = directory / "blobs"
        self._objects = self._root / "sha256"
        self._leases = self._root / "leases"
        self._tmp = self._root / "tmp"
        self._lease = lease
        self.lease = lease
        self._mutex = threading.Lock()
        for path in (self._objects, self._leases, self._tmp):
            path.mkdir(parents=True, exist_ok=True)
        self._gc_lock = self._root / "gc.lock"

    def path(self, ref: BlobRef | str) -> Path:
        digest = digest_of(ref)
        return self._objects / digest[:2] / digest

    def put(
        self, data: bytes | IO[bytes], *, media_type: str = "application/octet-stream", lease: str
    ) -> BlobRef:
        fd, temp_name = tempfile.mkstemp(dir=self._tmp, prefix="put.")
        temp = Path(temp_name)
        try:
            size = 0
            sha = hashlib.sha256()
            with os.fdopen(fd, "wb") as out:
                os.fchmod(out.fileno(), FILE_MODE)
                for chunk in chunks_of(data):
                    sha.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
                out.flush()
                os.fsync(out.fileno())
            ref = BlobRef(digest=sha.hexdigest(), size=size, media_type=media_type)
            target = self.path(ref)
            with _flock(self._gc_lock, exclusive=False):
                self._take_lease(ref.digest, lease)
                if target.exists():
                    os.utime(target)  # already stored: refresh its age, keep the first copy
                else:
                    target.parent.mkdir(exist_ok=True)
                    os.replace(temp, target)
                    fsync_dir(target.parent)
            return ref
        finally:
            with contextlib.suppress(FileNotFoundError):
                temp.unlink()

    def open(self, ref: BlobRef | str) -> IO[bytes]:
        try:
            return self.path(ref).open("rb")
        except FileNotFoundError:
            msg = f"no blob {digest_of(ref)} in {self._root}; it was never stored here, or was collected"
            raise MissingBlobError(msg) from None

    def read(self, ref: BlobRef | str) -> bytes:
        with self.open(ref) as stream:
            data = stream.read()
        digest = digest_of(ref)
        if _sha256(data) != digest:
            msg = f"blob {digest} in {self._root} is damaged: its bytes hash to {_sha256(data)}"
            raise BlobDigestError(msg)
        return data

    def exists(self, ref: BlobRef | str) -> bool:
        return self.path(ref).is_file()

    def digests(self) -> Iterator[str]:
        for shard in sorted(self._objects.iterdir()):
            for blob in sorted(shard.iterdir()):
                yield blob.name

    def release(self, ref: BlobRef | str, *, lease: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self._leases / f"{digest_of(ref)}.{_lease_name(lease)}").unlink()

    # --- what collect needs ---

    def age(self, digest: str, now: float) -> float:
        """Seconds since the blob was stored or last stored again (0 if it is gone: another collection
        removed it meanwhile, and there is nothing left to remove)."""
        try:
            return now - self.path(digest).stat().st_mtime
        except FileNotFoundError:
            return 0.0

    def leased(self, now: float) -> set[str]:
        """Digests with a live lease; expired leases are removed on the way."""
        live = set()
        for lease in self._leases.iterdir():
            try:
                taken = lease.stat().st_mtime
            except FileNotFoundError:
                continue
            if now - taken < self._lease:
                live.add(lease.name.split(".", 1)[0])
            else:
                with contextlib.suppress(FileNotFoundError):
                    lease.unlink()
        return live

    def size(self, digest: str) -> int:
        try:
            return self.path(digest).stat().st_size
        except FileNotFoundError:
            return 0

    def delete_unless_young(self, digests: list[str], grace: float) -> list[str]:
        """Remove these blobs under the exclusive collection lock, except any stored again or leased
        meanwhile; returns the digests removed. Deletes are not fsynced: a delete a crash loses only
        brings back a blob that the next collection removes again."""
        removed = []
        with _flock(self._gc_lock, exclusive=True):
            now = time.time()
            leased = self.leased(now)
            for digest in digests:
                path = self.path(digest)
                try:
                    if digest in leased or now - path.stat().st_mtime < grace:
                        continue
                    path.unlink()
                except FileNotFoundError:
                    continue
                removed.append(digest)
        return removed

    def _take_lease(self, digest: str, lease: str) -> None:
        """One lease file per blob and put (`lease` names the put)."""
        (self._leases / f"{digest}.{_lease_name(lease)}").touch(mode=FILE_MODE)


@contextlib.contextmanager
def _flock(path: Path, *, exclusive: bool) -> Iterator[None]:
    """A flock of our own on `path` (one open file each time, so threads exclude each other too)."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
    except OSError as exc:
        msg = f"{path}: cannot open the blob lock: {exc.strerror or exc}"
        raise StorageError(msg) from exc
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        os.close(fd)  # closing the file drops its lock


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _lease_name(lease: str) -> str:
    """`lease` as part of a file name: letters, digits, '.', '-' and '_' only."""
    if not lease or not all(c.isascii() and (c.isalnum() or c in "._-") for c in lease):
        msg = f"a lease name is letters, digits, '.', '-' and '_', not {lease!r:.40}"
        raise StorageError(msg)
    return lease
