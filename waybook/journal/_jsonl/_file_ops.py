"""The system calls a JSONL journal makes on its file, behind one small seam.

`FileOps` is every system call the adapter makes on its journal file. Production uses `OS_FILE_OPS`;
crash tests substitute a layer that loses unsynced bytes, so failures are simulated for real on disk
rather than by mocking the adapter. The helpers other writers share (mode, atomic creation, directory
fsync, the lock) are `waybook._files`.
"""

from __future__ import annotations

import fcntl
import os
import stat
from pathlib import Path
from typing import Protocol

from waybook._files import FILE_MODE, os_reason, reclaiming_descriptors
from waybook.model import NotAJournalFileError, StorageError

FileIdentity = tuple[int, int]
"""`(st_dev, st_ino)`: which file a path or a descriptor names."""


class FileOps(Protocol):
    def open(self, path: Path, flags: int) -> int: ...
    def write(self, fd: int, data: bytes) -> int: ...
    def pread(self, fd: int, size: int, offset: int) -> bytes: ...
    def fsync(self, fd: int) -> None: ...
    def size(self, fd: int) -> int: ...
    def truncate(self, fd: int, length: int) -> None: ...
    def close(self, fd: int) -> None: ...
    def identity(self, path: Path) -> FileIdentity | None: ...


class OsFileOps:
    """The real system calls."""

    def open(self, path: Path, flags: int) -> int:
        return os.open(path, flags | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)

    def write(self, fd: int, data: bytes) -> int:
        return os.write(fd, data)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        return os.pread(fd, size, offset)

    def fsync(self, fd: int) -> None:
        os.fsync(fd)

    def size(self, fd: int) -> int:
        return os.lseek(fd, 0, os.SEEK_END)  # a fifth of fstat's cost; reads use pread, writes O_APPEND

    def truncate(self, fd: int, length: int) -> None:
        os.ftruncate(fd, length)

    def close(self, fd: int) -> None:
        os.close(fd)

    def identity(self, path: Path) -> FileIdentity | None:
        return path_identity(path)


OS_FILE_OPS = OsFileOps()


KEEP_LIMIT = 1 << 28
"""The most bytes of one file `KeptReads` keeps (256 MiB): past them, a file is read from the disk again."""


class KeptReads:
    """`FileOps` that keep the bytes read from the start of one journal file, so reading them again reads
    memory: the file under a read command's journal is read from the disk once (`open_proven`).

    A read of bytes already kept is served from memory; one that starts inside or at the end of the kept
    bytes reads only what follows and keeps it (up to `limit` bytes in all); any other read goes to the
    file. `hold(end)` keeps [0, end) only and stops keeping: bytes past a journal's committed end may still
    change (a torn tail repaired, then appended to), its committed bytes never do.
    """

    def __init__(self, inner: FileOps = OS_FILE_OPS, *, limit: int = KEEP_LIMIT) -> None:
        self._inner = inner
        self._limit = limit
        self._kept = bytearray()
        self._keeping = True
        self._fd: int | None = None

    def hold(self, end: int) -> None:
        del self._kept[end:]
        self._keeping = False

    def holds(self, end: int) -> bool:
        """Whether bytes [0, end) are all kept (held since the proving pass: they cannot change)."""
        return not self._keeping and end <= len(self._kept)

    def open(self, path: Path, flags: int) -> int:
        fd = self._inner.open(path, flags)
        if self._fd is None:
            self._fd = fd  # the journal's file: the only one whose bytes are kept
        return fd

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        kept, start = self._kept, len(self._kept)
        if fd != self._fd or offset > start:
            return self._inner.pread(fd, size, offset)
        if offset + size <= start:
            return bytes(kept[offset : offset + size])
        rest = self._inner.pread(fd, offset + size - start, start)
        if self._keeping and start + len(rest) <= self._limit:
            kept += rest
        return bytes(kept[offset:start]) + rest if offset < start else rest

    def write(self, fd: int, data: bytes) -> int:
        return self._inner.write(fd, data)

    def fsync(self, fd: int) -> None:
        self._inner.fsync(fd)

    def size(self, fd: int) -> int:
        return self._inner.size(fd)

    def truncate(self, fd: int, length: int) -> None:
        self._inner.truncate(fd, length)

    def close(self, fd: int) -> None:
        if fd == self._fd:
            self._kept = bytearray()
        self._inner.close(fd)

    def identity(self, path: Path) -> FileIdentity | None:
        return self._inner.identity(path)


def path_identity(path: Path) -> FileIdentity | None:
    """The file `path` names now (the link itself, never followed), or None if nothing is there."""
    try:
        st = os.stat(path, follow_symlinks=False)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def open_regular(ops: FileOps, path: Path, flags: int) -> tuple[int, FileIdentity]:
    """Open `path` (never following a link), refusing anything but a regular file; returns the
    descriptor and the identity of the file it holds.

    Opens with O_NONBLOCK, so a FIFO at the path cannot hang the open, then checks the type of what was
    opened (not of what the path named a moment before) and clears O_NONBLOCK again.
    """
    try:
        fd = reclaiming_descriptors(lambda: ops.open(path, flags | os.O_NONBLOCK))
    except IsADirectoryError as exc:
        raise _not_a_file(path, "a directory") from exc
    except OSError as exc:
        msg = f"{path}: cannot open the journal: {os_reason(exc)}"
        raise StorageError(msg) from exc
    try:
        st = os.fstat(fd)
        regular = stat.S_ISREG(st.st_mode)
        if regular:
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    except OSError as exc:
        ops.close(fd)
        msg = f"{path}: cannot inspect the journal file: {exc.strerror or exc}"
        raise StorageError(msg) from exc
    if not regular:
        ops.close(fd)
        raise _not_a_file(path, _kind(st.st_mode))
    return fd, (st.st_dev, st.st_ino)


def _kind(mode: int) -> str:
    kinds = {
        stat.S_ISDIR: "a directory",
        stat.S_ISFIFO: "a FIFO",
        stat.S_ISCHR: "a character device",
        stat.S_ISBLK: "a block device",
        stat.S_ISSOCK: "a socket",
    }
    return next((name for test, name in kinds.items() if test(mode)), "not a regular file")


def _not_a_file(path: Path, kind: str) -> NotAJournalFileError:
    msg = f"{path}: is {kind}, not a journal file; give the path of a JSONL journal (a regular file)"
    return NotAJournalFileError(msg)
