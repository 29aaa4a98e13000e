"""The file under a `JsonlJournal`: its descriptor, the path check, the write loop, syncs and their errors.

`JournalFile` owns the one open descriptor and knows which file it holds (`identity`). It writes whole
batches (retrying short writes, cutting partial bytes off again on failure), checks after each write
that the path still names the file it wrote to, reads committed bytes, and fsyncs. Once a write or an
fsync fails so that the file's state is unknown, it remembers the failure (`failure`) and the journal
object refuses further appends. Deciding what to write (the ledger) and where the committed prefix ends
stay with the journal.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

from waybook._files import FileLock, fsync_dir
from waybook.journal._jsonl._file_ops import FileIdentity, FileOps, OsFileOps, open_regular
from waybook.journal._jsonl._scan import CHUNK
from waybook.model import (
    AppendResult,
    CorruptJournalError,
    DurabilityError,
    Head,
    JournalFailedError,
    JournalReplacedError,
    StorageError,
    WriteFailedError,
)


class JournalFile:
    """One open journal file. Not thread-safe by itself: the journal serialises calls with its mutex."""

    def __init__(self, ops: FileOps, path: Path, name: str, flags: int) -> None:
        self.ops = ops
        self.path = path
        self.name = name
        self.fd, self.identity = open_regular(ops, path, flags)
        # A journal dropped without close() (`Session(store.create(id))`) still gives its descriptor
        # back when it is collected; its appends were written (and made as durable as its policy
        # promises) when they returned, so closing is all that is left to do.
        self._closer = weakref.finalize(self, _close_quietly, ops, self.fd)
        self._closer.atexit = False
        self.lock = FileLock(self.fd, path)
        self.failure: StorageError | None = None
        """The write or fsync failure after which this descriptor's file is in an unknown state."""
        # The calls of every append, bound once. Each call the FileOps does not replace (a crash test
        # replaces some) goes straight to `os`, without a Python frame of its own.
        kind = type(ops)
        self.size: Callable[[], int] = (
            functools.partial(os.lseek, self.fd, 0, os.SEEK_END)
            if _real(kind, "size")
            else functools.partial(ops.size, self.fd)
        )
        """The file's size now (where the next O_APPEND write starts)."""
        self._write: Callable[[int, bytes], int] = os.write if _real(kind, "write") else ops.write
        self._stat_path = os.fspath(path) if _real(kind, "identity") else None
        self._dev, self._ino = self.identity

    def read_at(self, size: int, offset: int) -> bytes:
        try:
            return self.ops.pread(self.fd, size, offset)
        except OSError as exc:
            msg = f"{self.name}: cannot read byte {offset} ({exc.strerror or exc}); nothing was changed"
            raise StorageError(msg) from exc

    def chunks(self, start: int, end: int) -> Iterator[bytes]:
        """The file's bytes [start, end) in chunks; a read error is a StorageError naming the byte."""
        pos = start
        while pos < end:
            chunk = self.read_at(min(CHUNK, end - pos), pos)
            if not chunk:
                return
            yield chunk
            pos += len(chunk)

    def line_chunks(self, start: int, end: int) -> Iterator[list[bytes]]:
        """The committed lines in [start, end) (which start and end on line boundaries), a chunk at a
        time; each byte read once however long a line is (a long line's pieces join once)."""
        parts: list[bytes] = []
        pos = start
        while pos < end:
            chunk = self.read_at(min(CHUNK, end - pos), pos)
            if not chunk:
                msg = f"{self.name}: the file ended at byte {pos}, before committed byte {end}"
                raise CorruptJournalError(path=self.name, offset=pos, seq=0, reason=msg)
            pos += len(chunk)
            if chunk.find(b"\n") < 0:
                parts.append(chunk)
                continue
            if parts:
                parts.append(chunk)
                chunk, parts = b"".join(parts), []
            lines = chunk.split(b"\n")
            carry = lines.pop()
            if carry:
                parts.append(carry)
            yield lines

    # --- writing ----------------------------------------------------------------------------------

    def write(self, data: bytes, end: int, head: Head, result: AppendResult | None = None) -> None:
        """One write loop on the O_APPEND descriptor: retry short writes until every byte is handed over.

        The caller holds the exclusive lock and `end` is where the committed bytes end. On failure,
        nothing is committed: the partial bytes are cut off again (they are the only bytes after `end`).
        If even that fails, they stay as a torn tail, which no reader takes for records (a partial line,
        or a batch missing its last records). Then the path is checked, the one identity check of an
        append: a file deleted or renamed over (before or while we wrote) gets its bytes cut off too,
        so an acknowledged record is always in the file the path names after it, and the file now at
        the path is never touched. `head` is the committed head (named by the errors), `result` what
        the bytes hold, named by the error if they can be neither kept nor removed.
        """
        try:
            done = self._write(self.fd, data)
            while done < len(data):
                done += self._write(self.fd, data[done:])
        except OSError as exc:
            undo = self._undo(end)
            if undo is not None:
                msg = (
                    f"{self.name}: write failed ({exc}) and the partial bytes could not be removed "
                    f"({undo}); nothing was committed (head stays {head}), the file ends in a torn tail. "
                    "This journal object refuses further appends: reopen the journal and repair it."
                )
                failure = WriteFailedError(msg, head=head, rolled_back=False)
                self.failure = failure
                raise failure from exc
            msg = (
                f"{self.name}: write failed ({exc}); nothing was written (head stays {head}). Free space "
                "or raise the file-size limit, then append again."
            )
            raise WriteFailedError(msg, head=head, rolled_back=True) from exc
        now: FileIdentity | None
        if self._stat_path is not None:  # `ops.identity` inline: one stat, compared field by field
            try:
                st = os.stat(self._stat_path, follow_symlinks=False)
            except FileNotFoundError:
                now = None
            else:
                if st.st_ino == self._ino and st.st_dev == self._dev:
                    return
                now = st.st_dev, st.st_ino
        else:
            now = self.ops.identity(self.path)
        if now != self.identity:  # deleted or replaced before or while we wrote
            undo = self._undo(end)
            if undo is None:
                raise self.replaced_error(now)
            if self._unlinked():  # the bytes went into a file with no name left: nobody can read them
                gone = self.replaced_error(now)
                self.failure = gone
                raise gone
            msg = (
                f"{self.name}: the file was deleted or replaced while this append wrote to it, and the "
                f"written bytes could not be removed ({undo}): the records are in the displaced file, not "
                "at the path. This journal object refuses further appends."
            )
            replaced = JournalReplacedError(msg, written=result)
            self.failure = replaced
            raise replaced

    def _undo(self, end: int) -> OSError | None:
        """Cut the file back to `end` (under the exclusive lock); the error if that failed."""
        try:
            if self.ops.size(self.fd) != end:
                self.ops.truncate(self.fd, end)
        except OSError as exc:
            return exc
        return None

    def _unlinked(self) -> bool:
        try:
            return os.fstat(self.fd).st_nlink == 0
        except OSError:
            return False

    def check_identity(self) -> None:
        """Refuse (before writing) when the path no longer names the file this object holds open."""
        now = self.ops.identity(self.path)
        if now != self.identity:
            raise self.replaced_error(now)

    def still_at_path(self) -> bool:
        return self.ops.identity(self.path) == self.identity

    def replaced_error(self, now: FileIdentity | None) -> JournalReplacedError:
        what = "was deleted" if now is None else "now names another file (replaced or renamed over)"
        msg = (
            f"{self.name}: the path {what}; this journal object holds a file nobody can find, so "
            "nothing was written. Reopen the path if the file there is the journal you mean, or "
            "restore the old one."
        )
        return JournalReplacedError(msg)

    # --- syncing ----------------------------------------------------------------------------------

    def fsync(self, head: Head, result: AppendResult | None = None) -> None:
        if self.failure is not None:
            raise self.failed_error()
        try:
            self.ops.fsync(self.fd)
        except OSError as exc:
            raise self.durability_failed(exc, head, result) from exc

    def sync_with_directory(
        self, head: Head, *, file: bool, sync_dir: Callable[[Path], None] = fsync_dir
    ) -> None:
        """fsync the file (if `file`) and its directory (with `sync_dir`), side by side: a filesystem
        that commits them together (ext4's journal) pays for one wait, not two. Both are done before
        this returns."""
        directory: list[BaseException | None] = []
        helper = threading.Thread(target=_sync_directory, args=(sync_dir, self.path.parent, directory))
        helper.start()
        try:
            if file:
                self.fsync(head)
        finally:
            helper.join()
        if directory[0] is not None:
            raise self.durability_failed(directory[0], head, None) from directory[0]

    def durability_failed(
        self, exc: BaseException, head: Head, result: AppendResult | None
    ) -> DurabilityError:
        """The error for a failed fsync: what was written, and the head that includes it."""
        written = (
            ""
            if result is None
            else f"this append's records (seq {result.first_seq}..{result.head.seq}) and "
        )
        msg = (
            f"{self.name}: fsync failed ({exc}); {written}every append since the last successful sync are "
            f"in the file (head {head}) but may not survive a power loss. This journal object refuses "
            "further appends: reopen it and check its tail."
        )
        failure = DurabilityError(msg, head=head, result=result)
        self.failure = failure
        return failure

    def failed_error(self) -> JournalFailedError:
        cause = self.failure
        assert cause is not None
        msg = (
            f"{self.name}: an earlier write or fsync failed on this journal object ({cause}); nothing was "
            "written. Reopen the journal (and repair a torn tail if it reports one)."
        )
        return JournalFailedError(msg, cause=cause)

    def close(self) -> None:
        self._closer()  # once: a second close, or the collector after it, does nothing


def _close_quietly(ops: FileOps, fd: int) -> None:
    with contextlib.suppress(OSError):
        ops.close(fd)


def _real(kind: type, call: str) -> bool:
    """Whether FileOps class `kind` makes the real system call `call` (OsFileOps' own method)."""
    return issubclass(kind, OsFileOps) and getattr(kind, call) is getattr(OsFileOps, call)


def _sync_directory(
    sync_dir: Callable[[Path], None], directory: Path, outcome: list[BaseException | None]
) -> None:
    try:
        sync_dir(directory)
    except OSError as exc:
        outcome.append(exc)
    else:
        outcome.append(None)
