"""File helpers every writer of files in waybook shares: the 0600 mode, one write loop, a directory's
fsync, all-or-nothing creation, and the advisory `flock` a writer takes on the file it writes.

The JSONL adapter (`waybook.journal._jsonl`), the directory store and its blobs, the SQLite store and the
search index (`create_private` before SQLite opens them), and the commands that write output files and
pages use them. They sit just above `waybook.model` (whose errors they raise) so that each
of those layers may import them; the system-call seam a JSONL journal's crash tests replace is the
adapter's own (`waybook.journal._jsonl._file_ops`).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gc
import os
import struct
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Final, TypeVar

from waybook.model import JournalBusyError, LockUnsupportedError, StorageError

_T = TypeVar("_T")

FILE_MODE = 0o600
_UNSUPPORTED_LOCK_ERRNOS = frozenset({errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL, errno.ENOSYS})


def os_reason(exc: OSError) -> str:
    """What a failed system call says, in a journal user's terms: running out of descriptors says what
    to close (journals dropped without `close()` hold one each) or which limit to raise."""
    if exc.errno in (errno.EMFILE, errno.ENFILE):
        return (
            f"{exc.strerror or exc}: the process holds too many open files; close the journals and stores "
            "you no longer use (journal.close(), or `with store.create(id) as journal:`) or raise the "
            "limit (ulimit -n)"
        )
    return str(exc.strerror or exc)


def reclaiming_descriptors(call: Callable[[], _T]) -> _T:
    """`call()`; if the process is out of descriptors, once more after a garbage collection (journals
    dropped without `close()` inside a reference cycle give their descriptors back when collected)."""
    try:
        return call()
    except OSError as exc:
        if exc.errno not in (errno.EMFILE, errno.ENFILE):
            raise
    gc.collect()
    return call()


def write_all(fd: int, data: bytes) -> None:
    """One write loop: retry short writes until every byte is handed to the OS."""
    done = os.write(fd, data)
    while done < len(data):
        done += os.write(fd, data[done:])


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
        write_all(fd, content)
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
    fd, temp_name = reclaiming_descriptors(
        lambda: tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    )
    temp = Path(temp_name)
    try:
        os.fchmod(fd, FILE_MODE)
        if content:
            write_all(fd, content)
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
    """An advisory `flock` on the file a writer holds open (a journal file itself; the directory store's
    lock and feed files). Exclusive for writers, shared for scanning readers.

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
