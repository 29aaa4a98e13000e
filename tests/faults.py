"""File layers that fail for real, for crash and durability tests.

`CrashableFileOps` records how many bytes of each file were durable at the last fsync. `crash()` then
does to the file on disk what a power loss may do to unsynced data: drops it, truncates it at some
byte, or garbles it. The adapter under test is the real one; only the disk misbehaves.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from waybook.journal.fileio import OsFileOps


class CountingFileOps(OsFileOps):
    """Real system calls, counted: fsyncs, writes, and the lowest offset read after `mark()`."""

    def __init__(self) -> None:
        self.fsyncs = 0
        self.writes = 0
        self.reads: list[int] = []

    def write(self, fd: int, data: bytes) -> int:
        self.writes += 1
        return super().write(fd, data)

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        self.reads.append(offset)
        return super().pread(fd, size, offset)

    def fsync(self, fd: int) -> None:
        self.fsyncs += 1
        super().fsync(fd)


class FailingFsyncOps(OsFileOps):
    """fsync fails with EIO after `ok` successful calls."""

    def __init__(self, ok: int = 0) -> None:
        self.ok = ok

    def fsync(self, fd: int) -> None:
        if self.ok <= 0:
            raise OSError(5, "Input/output error (injected)")
        self.ok -= 1
        super().fsync(fd)


class CrashableFileOps(OsFileOps):
    """Tracks the durable length of one journal file; `crash()` mangles what was never synced."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.durable = path.stat().st_size if path.exists() else 0
        self._fds: set[int] = set()

    def open(self, path: Path, flags: int) -> int:
        fd = super().open(path, flags)
        self._fds.add(fd)
        return fd

    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        self.durable = os.fstat(fd).st_size

    def crash(self, rng: random.Random) -> str:
        """Apply one power-loss outcome to the unsynced tail; returns which one."""
        data = self.path.read_bytes()
        synced, unsynced = data[: self.durable], data[self.durable :]
        outcome = rng.choice(["drop", "truncate", "garble", "keep"])
        if outcome == "drop" or not unsynced:
            unsynced = b""
        elif outcome == "truncate":
            unsynced = unsynced[: rng.randrange(len(unsynced))]
        elif outcome == "garble":
            spot = rng.randrange(len(unsynced))
            unsynced = unsynced[:spot] + bytes([unsynced[spot] ^ 0x5A]) + unsynced[spot + 1 :]
        self.path.write_bytes(synced + unsynced)
        return outcome


class FailingWriteOps(OsFileOps):
    """Writes fail with `code` once `fail_after_bytes` bytes have been written in total (after a short
    write that hands over exactly the bytes up to the limit); `truncate_fails` makes the undo fail too."""

    def __init__(self, fail_after_bytes: int | None, code: int, *, truncate_fails: bool = False) -> None:
        self.fail_after_bytes = fail_after_bytes
        self.code = code
        self.truncate_fails = truncate_fails
        self.written = 0

    def write(self, fd: int, data: bytes) -> int:
        limit = self.fail_after_bytes
        if limit is not None and self.written + len(data) > limit:
            room = limit - self.written
            if room <= 0:
                raise OSError(self.code, os.strerror(self.code) + " (injected)")
            data = data[:room]  # a short write, as the kernel does at a size limit or a full disk
        done = super().write(fd, data)
        self.written += done
        return done

    def truncate(self, fd: int, length: int) -> None:
        if self.truncate_fails:
            raise OSError(5, "Input/output error (injected)")
        super().truncate(fd, length)
