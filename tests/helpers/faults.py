"""File layers that fail for real, for crash, durability and fault-injection tests.

`CrashableFileOps` records how many bytes of each file were durable at the last fsync. `crash()` then
does to the file on disk what a power loss may do to unsynced data: drops it, truncates it at some
byte, or garbles it. The adapter under test is the real one; only the disk misbehaves.
"""

from __future__ import annotations

import errno
import os
import random
import shutil
from collections.abc import Callable
from pathlib import Path

import attrs

from waybook.journal._jsonl._file_ops import OsFileOps


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


@attrs.frozen
class Fault:
    """One injected fault. `op` is the system call it hits and `nth` which call of that kind (0 = the
    next one); for `op="any"` (replace/remove) `nth` counts every call. `cut` is how many bytes a failing
    write still hands over first (as the kernel does at a size limit or a full disk)."""

    op: str  # "write", "fsync", "truncate" or "any"
    effect: str  # an errno name ("ENOSPC", "EFBIG", "EIO"), "short", "replace" or "remove"
    nth: int = 0
    cut: int = 0

    def __repr__(self) -> str:
        return f"Fault({self.op}#{self.nth}: {self.effect}, cut={self.cut})"


class FaultyFileOps(OsFileOps):
    """Real system calls with armed faults: short writes, ENOSPC/EFBIG/EIO on write, EIO on fsync or
    truncate, and the journal file replaced by a copy or removed between any two system calls.

    A replaced or removed file is moved to `aside` (never destroyed), so a test can put it back with
    `restore()` and check that nothing acknowledged was lost. Faults fire once, then disarm.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.aside = path.with_name(path.name + ".aside")
        self.faults: list[Fault] = []
        self._seen: dict[str, int] = {}
        self.fired: list[Fault] = []

    def arm(self, *faults: Fault) -> None:
        self.faults = list(faults)
        self._seen = {}

    def disarm(self) -> None:
        self.faults = []

    def restore(self) -> bool:
        """Put a displaced journal back at its path; True if there was one."""
        if not self.aside.exists():
            return False
        os.replace(self.aside, self.path)
        return True

    def _due(self, op: str) -> Fault | None:
        """Count this call; the armed fault for it, if this is its turn (replace/remove act here)."""
        due = None
        for kind in (op, "any"):
            count = self._seen.get(kind, 0)
            self._seen[kind] = count + 1
            for fault in self.faults:
                if fault.op == kind and fault.nth == count:
                    due = due or fault
        if due is None:
            return None
        self.faults.remove(due)
        self.fired.append(due)
        if due.effect in ("replace", "remove"):  # act on the path; never an error of the call itself
            if self.path.exists():
                # The first file displaced (the journal) stays at `aside` for restore(); a file displaced
                # later (a copy put there by an earlier fault) goes beside it, so none is destroyed.
                target = self.aside if not self.aside.exists() else self._spare()
                os.replace(self.path, target)
                if due.effect == "replace":  # another file with the same bytes is renamed over the path
                    shutil.copyfile(target, self.path)
            return None
        return due

    def _spare(self) -> Path:
        n = 2
        while (spare := self.path.with_name(f"{self.aside.name}.{n}")).exists():
            n += 1
        return spare

    @staticmethod
    def _raise(effect: str) -> None:
        code = getattr(errno, effect)
        raise OSError(code, os.strerror(code) + " (injected)")

    def open(self, path: Path, flags: int) -> int:
        self._due("open")
        return super().open(path, flags)

    def write(self, fd: int, data: bytes) -> int:
        fault = self._due("write")
        if fault is None:
            return super().write(fd, data)
        if fault.effect == "short":
            return super().write(fd, data[: max(1, min(fault.cut, len(data) - 1))] if len(data) > 1 else data)
        cut = min(fault.cut, len(data))
        if cut:  # the bytes up to the limit go in; the next write call meets the error
            self.faults.append(attrs.evolve(fault, nth=self._seen["write"], cut=0))
            return super().write(fd, data[:cut])
        self._raise(fault.effect)
        raise AssertionError  # unreachable

    def pread(self, fd: int, size: int, offset: int) -> bytes:
        self._due("pread")
        return super().pread(fd, size, offset)

    def fsync(self, fd: int) -> None:
        fault = self._due("fsync")
        if fault is not None:
            self._raise(fault.effect)
        super().fsync(fd)

    def size(self, fd: int) -> int:
        self._due("size")
        return super().size(fd)

    def truncate(self, fd: int, length: int) -> None:
        fault = self._due("truncate")
        if fault is not None:
            self._raise(fault.effect)
        super().truncate(fd, length)

    def identity(self, path: Path) -> tuple[int, int] | None:
        self._due("identity")
        return super().identity(path)


SIDECAR_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "cut-by-one": lambda data: data[:-1],
    "cut-short": lambda data: data[:40],  # inside the magic and checksum
    "empty": lambda data: b"",
    "flipped": lambda data: data[:100] + bytes([data[100] ^ 1]) + data[101:],
    "garbage": lambda data: b"garbage",
}
"""Ways a checkpoint sidecar's bytes get damaged, by name (for `pytest.mark.parametrize`)."""


class SyncTrackingFileOps(OsFileOps):
    """Real system calls, watched: which files (by path) hold bytes written since their last fsync.

    `synced(path)` is the durability evidence the journal contract's R15 asks a file adapter for: every
    byte written to `path` through these calls was fsynced after it was written.
    """

    def __init__(self) -> None:
        self._paths: dict[int, Path] = {}
        self._unsynced: set[Path] = set()
        self.fsyncs = 0

    def open(self, path: Path, flags: int) -> int:
        fd = super().open(path, flags)
        self._paths[fd] = Path(path).resolve()
        return fd

    def write(self, fd: int, data: bytes) -> int:
        written = super().write(fd, data)
        if fd in self._paths:
            self._unsynced.add(self._paths[fd])
        return written

    def fsync(self, fd: int) -> None:
        super().fsync(fd)
        self.fsyncs += 1
        if fd in self._paths:
            self._unsynced.discard(self._paths[fd])

    def close(self, fd: int) -> None:
        self._paths.pop(fd, None)
        super().close(fd)

    def synced(self, path: Path) -> bool:
        return Path(path).resolve() not in self._unsynced
