"""The file operations the JSONL adapter needs, behind one small seam.

`FileOps` is every system call the adapter makes on its journal file. Production uses `OS_FILE_OPS`;
crash tests substitute a layer that loses unsynced bytes, so failures are simulated for real on disk
rather than by mocking the adapter.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import struct
import tempfile
from pathlib import Path
from typing import Final, Protocol

from waybook.model._errors import JournalBusyError, LockUnsupportedError, NotAJournalFileError, StorageError

FILE_MODE = 0o600
_UNSUPPORTED_LOCK_ERRNOS = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS})


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
        fd = ops.open(path, flags | os.O_NONBLOCK)
    except IsADirectoryError as exc:
        raise _not_a_file(path, "a directory") from exc
    except OSError as exc:
        msg = f"{path}: cannot open the journal: {exc.strerror or exc}"
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


def write_all(ops: FileOps, fd: int, data: bytes) -> None:
    """One write loop: retry short writes until every byte is handed to the OS."""
    done = ops.write(fd, data)
    while done < len(data):
        done += ops.write(fd, data[done:])


def create_private(path: str | os.PathLike[str]) -> None:
    """Create `path` empty with mode 0600 unless it exists: done before SQLite opens a database that
    holds session text (a store, a search index), since SQLite creates a new file with the process's
    umask (0644), and creates its -wal and -shm files with the database file's own permissions."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
    except FileExistsError:
        return
    os.close(fd)


def replace_private(path: Path, content: bytes) -> None:
    """Write `content` to `path` whole: a 0600 temp file beside it, synced, renamed over what was there
    (a reader sees the old file or the new one, never half of one)."""
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, FILE_MODE)
        write_all(OS_FILE_OPS, fd, content)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(temp_name, path)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp_name)
        raise


def fsync_dir(directory: Path) -> None:
    """Make a file's creation or rename durable by syncing its directory."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def create_atomically(path: Path, content: bytes, *, durable: bool = True) -> bool:
    """Create `path` holding `content`, all or nothing: temp file, fsync, link into place, fsync dir.

    Never replaces an existing file: returns False (and leaves it alone) if `path` already exists.
    The file gets mode 0600. With durable=False both fsyncs are skipped: the file still appears whole
    or not at all to other processes, but a power loss may undo its creation (the caller syncs later).
    """
    directory = path.parent
    fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    temp = Path(temp_name)
    try:
        os.fchmod(fd, FILE_MODE)
        if content:
            write_all(OS_FILE_OPS, fd, content)
        if durable:
            os.fsync(fd)
        os.close(fd)
        fd = -1
        try:
            os.link(temp, path)  # unlike rename, link refuses to replace a file another process created
        except FileExistsError:
            return False
        if durable:
            fsync_dir(directory)
        return True
    finally:
        if fd >= 0:
            os.close(fd)
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()


class FileLock:
    """An advisory `flock` on the journal file itself. Exclusive for writers, shared for scanning readers.

    The lock lives on the file the journal holds open, not on a side file that a stale-lock cleanup
    could delete or replace under a holder. A file renamed over the path is a different file with its
    own lock, which is why writers also check, under the lock, that the path still names their file.
    Locks are per open file, so two journal objects in one process exclude each other like two
    processes do. An unsupported filesystem raises LockUnsupportedError: there is no weaker fallback.
    """

    def __init__(self, fd: int, path: Path) -> None:
        self.path = path
        self._fd = fd
        self._held = False

    def hold(self) -> None:
        """Take the exclusive lock for good (until the descriptor closes): a single writer's lifetime.

        Waits only for an append in progress; refuses (JournalBusyError) if another single writer holds
        the file. While held, `acquire` and `release` do nothing. The holder also takes an
        open-file-description record lock on byte 0, the sign by which other objects tell a lifetime
        holder (refuse at once) from a brief one (wait), where the platform has such locks.
        """
        if _OFD_SETLK is not None:  # the mark first, so nobody who finds the flock taken misses it
            try:
                fcntl.fcntl(self._fd, _OFD_SETLK, _byte_zero(fcntl.F_WRLCK))
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    msg = f"{self.path}: cannot take the single-writer mark: {exc}"
                    raise StorageError(msg) from exc
                msg = (
                    f"{self.path}: another single writer (exclusive=True) holds this journal until it "
                    "closes; only one may. Close it first, or open this one without exclusive=True."
                )
                raise JournalBusyError(msg) from exc
        self._flock(fcntl.LOCK_EX)
        self._held = True

    def acquire(self, *, exclusive: bool) -> None:
        if not self._held:
            self._flock(fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)

    def _flock(self, operation: int) -> None:
        try:
            try:
                fcntl.flock(self._fd, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                if self._held_for_good():
                    msg = (
                        f"{self.path}: a single writer (exclusive=True) holds this journal until it closes; "
                        "nothing was done. Write through that writer, or wait until it is closed."
                    )
                    raise JournalBusyError(msg) from None
                fcntl.flock(self._fd, operation)
        except OSError as exc:
            if isinstance(exc, JournalBusyError):
                raise
            if exc.errno in _UNSUPPORTED_LOCK_ERRNOS:
                msg = (
                    f"{self.path}: this filesystem does not support flock ({exc.strerror}); waybook never "
                    "falls back to a weaker lock. Keep journals on a local filesystem."
                )
                raise LockUnsupportedError(msg) from exc
            msg = f"{self.path}: cannot take the lock: {exc.strerror}"
            raise StorageError(msg) from exc

    def release(self) -> None:
        if self._held:
            return
        try:  # (not contextlib.suppress: this runs on every append)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        except OSError:  # only fails on a closed descriptor, which holds no lock
            return

    def _held_for_good(self) -> bool:
        """Whether another open file holds the single-writer mark (byte 0's record lock)."""
        if _OFD_GETLK is None:
            return False
        try:
            answer = fcntl.fcntl(self._fd, _OFD_GETLK, _byte_zero(fcntl.F_RDLCK))
        except OSError:
            return False
        return bool(struct.unpack(_FLOCK, answer)[0] != fcntl.F_UNLCK)


# Open-file-description record locks (Linux): unlike flock they can be tested without waiting, and
# unlike POSIX record locks they belong to one open file, not to the whole process.
EXCLUSIVE_NOW: Final = fcntl.LOCK_EX | fcntl.LOCK_NB
"""`flock` operation taking the exclusive lock only if it is free (OSError if not): an append's fast
path, which falls back to `FileLock.acquire` (waits, or says why)."""
_OFD_SETLK: int | None = getattr(fcntl, "F_OFD_SETLK", None)
_OFD_GETLK: int | None = getattr(fcntl, "F_OFD_GETLK", None)
_FLOCK = "hhqqi4x"  # struct flock: l_type, l_whence, l_start, l_len, l_pid (native alignment)


def _byte_zero(lock_type: int) -> bytes:
    return struct.pack(_FLOCK, lock_type, os.SEEK_SET, 0, 1, 0)
