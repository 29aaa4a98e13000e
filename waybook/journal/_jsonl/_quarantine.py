"""What `JsonlJournal.repair` needs beside the journal: the receipt it returns, whether a damaged first
line is another file's (never truncated) or a header cut short, and the quarantine copy of a torn tail.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from waybook._files import FILE_MODE, fsync_dir, write_all
from waybook.codecs import FIRST_LINE_START
from waybook.model import Head, StorageError


@attrs.frozen
class RepairReceipt:
    """What `repair()` removed: the torn bytes [offset, end) now live in `quarantine_path`."""

    path: str
    offset: int
    end: int
    removed_bytes: int
    removed_sha256: str
    quarantine_path: str | None
    seq: int
    head: Head
    reason: str

    @property
    def repaired(self) -> bool:
        return self.removed_bytes > 0


def is_foreign_first_line(start: bytes) -> bool:
    """Whether a bad first line (its first bytes, `start`) is some other file's, not a header cut short
    while being written. A header cut short is an incomplete line (no newline) that is zeros or starts as
    every waybook line starts; anything else (a complete line, other bytes) is not ours to truncate."""
    if b"\n" in start:
        return True
    begun = start.rstrip(b"\x00")[: len(FIRST_LINE_START)]
    return FIRST_LINE_START[: len(begun)] != begun


def quarantine(
    journal: Path, name: str, start: int, end: int, chunks: Callable[[int, int], Iterable[bytes]]
) -> tuple[str, Path]:
    """Copy the journal's bytes [start, end) (read through `chunks`) to a new 0600 file beside it; return
    their SHA-256 and the copy's path.

    Two streaming passes (hash, then copy), so a torn tail of any length costs O(1) memory. Any failure
    is a StorageError and leaves the journal untouched.
    """
    hasher = hashlib.sha256()
    for chunk in chunks(start, end):
        hasher.update(chunk)
    digest = hasher.hexdigest()
    copy = journal.with_name(f"{journal.name}.torn-{start}-{digest[:12]}.quarantine")
    try:
        fd = os.open(copy, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        try:
            for chunk in chunks(start, end):
                write_all(fd, chunk)
            os.fsync(fd)
        finally:
            os.close(fd)
        fsync_dir(journal.parent)
    except OSError as exc:
        msg = (
            f"{name}: repair could not write the quarantine copy {copy.name} ({exc.strerror or exc}); the "
            "journal is unchanged. Make its directory writable (and check the disk), then repair again."
        )
        raise StorageError(msg) from exc
    return digest, copy
