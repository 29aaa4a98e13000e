"""The SQLite store's writers' queue: a `flock` on a file beside the database, taken before `BEGIN
IMMEDIATE`, so the writers of one store take turns in the order the kernel queues them.

Why: SQLite's own lock is not a queue. A writer that finds it taken sleeps in the busy handler (longer
and longer, up to 100 ms a time) and retries, so while another writer commits in a tight loop it keeps
losing: 8 tight-loop writers left some with 0-7 appends in 4 s while one made 1,111, and with a short
busy timeout 7 of 8 got StoreBusyError while the store committed 400 appends a second. A waiter blocked
in `flock` is woken when the lock is released, so the lock passes from writer to writer.

Each turn opens the file anew (its own open file description: threads of one process exclude each other
as processes do) and waits at most `timeout` seconds, after which it gives up without ever holding the
lock: a wait that timed out leaves its descriptor to the thread still blocked in `flock`, which closes
it (releasing the lock at once if it was granted late).

The threads of one process first take a ticket in a line of their own (`TicketLine`, one per lock file),
then the `flock`: a released `flock` wakes its waiters and goes to the first to run, and on a loaded
machine that was the writer that had just released it, still on its core, back for its next append
(8 threads: 10 appends for one while another made 154). In the line, a writer back for its next turn
stands behind the ones already waiting.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

from waybook._files import FILE_MODE, os_reason
from waybook._tickets import TicketLine
from waybook.model import StorageError


class WritersQueue:
    """Turns at writing one SQLite store, in arrival order across its processes and threads."""

    def __init__(self, database: Path) -> None:
        self.path = database.with_name(database.name + "-writers")

    @contextlib.contextmanager
    def turn(self, timeout: float) -> Iterator[bool]:
        """Hold the queue's lock for the body; yields False (nothing held) if `timeout` seconds passed
        first, for the caller to refuse typed. StorageError if the lock file cannot be opened."""
        deadline = time.monotonic() + timeout
        line = _line_of(self.path)
        ticket = line.take()
        try:
            if not line.wait(ticket, timeout):
                yield False
                return
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, FILE_MODE)
            except OSError as exc:
                msg = f"{self.path}: cannot open the SQLite store's writers' lock: {os_reason(exc)}"
                raise StorageError(msg) from exc
            if not _take(fd, max(deadline - time.monotonic(), 0.0)):
                yield False  # (the descriptor now belongs to the waiting thread, which closes it)
                return
            try:
                yield True
            finally:
                os.close(fd)  # releases the lock
        finally:
            line.leave(ticket)


_LINES: dict[str, TicketLine] = {}
"""This process's lines, by lock file (a few: one per SQLite store the process writes)."""
_LINES_GUARD = threading.Lock()


def _line_of(path: Path) -> TicketLine:
    key = os.path.abspath(path)
    with _LINES_GUARD:
        line = _LINES.get(key)
        if line is None:
            line = _LINES[key] = TicketLine()
        return line


def _forget_lines() -> None:
    """In a child made by fork: the parent's threads and their tickets are not here."""
    global _LINES_GUARD
    _LINES.clear()
    _LINES_GUARD = threading.Lock()  # (one another thread held at the fork stays held in the child)


os.register_at_fork(after_in_child=_forget_lines)


def _take(fd: int, timeout: float) -> bool:
    """Lock `fd` exclusively within `timeout` seconds. On False the descriptor is no longer the
    caller's: it is closed now or by the thread still waiting for the lock."""
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pass
    except OSError as exc:
        os.close(fd)
        raise _lock_error(exc) from exc
    else:
        return True
    waiter = _Waiter(fd)
    thread = threading.Thread(target=waiter.wait, name="waybook-sqlite-writers-queue", daemon=True)
    thread.start()
    if waiter.done.wait(timeout) or not waiter.abandon():
        if waiter.error is not None:
            os.close(fd)
            raise _lock_error(waiter.error) from waiter.error
        return True
    return False


class _Waiter:
    """One blocking `flock` on a thread of its own, which the caller may abandon."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.done = threading.Event()
        self.error: OSError | None = None
        self._guard = threading.Lock()
        self._abandoned = False

    def wait(self) -> None:
        try:
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except OSError as exc:
            self.error = exc
        with self._guard:
            if self._abandoned:
                os.close(self.fd)
            self.done.set()

    def abandon(self) -> bool:
        """Give the wait up; False if the lock (or an error) came first, which the caller then takes."""
        with self._guard:
            if self.done.is_set():
                return False
            self._abandoned = True
            return True


def _lock_error(exc: OSError) -> StorageError:
    if exc.errno in (errno.ENOLCK, errno.EOPNOTSUPP, errno.ENOSYS):
        return StorageError(f"the SQLite store's writers' lock is not supported here ({exc.strerror})")
    return StorageError(f"cannot take the SQLite store's writers' lock: {os_reason(exc)}")
