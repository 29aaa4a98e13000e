"""Feed wake-ups in one process: the watcher thread that tells blocked feed waiters the head moved.

Writers notify no one. A process with feed waiters runs one watcher thread (per engine) that glances
at the feed (`PostgresEngine.glance`: the clock and whether anything awaits a number; no write) every
few milliseconds while anything waits, and not at all otherwise. A commit of this process makes it
look at once (`FeedWaker.committed`). Waiters look at the head themselves at least every
POLL_FALLBACK seconds, so a watcher that cannot reach the server delays no one for longer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Final

from waybook.model import JournalClosedError, StorageError

POLL_FALLBACK: Final = 1.0
"""Longest a feed waiter sleeps without hearing from the watcher before it looks at the feed head itself."""

WATCH_FAST: Final = 0.002
"""Seconds between the watcher's looks at the feed head right after it moved (or this process committed)."""

WATCH_SLOW: Final = 0.05
"""Longest pause between the watcher's looks while the feed stands still (each empty look grows it)."""


class FeedWaker:
    """The feed waiters of one engine, and the one watcher thread that wakes them (started by the
    first waiter, stopped by `stop`)."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._generation = 0
        self._watcher: _Watcher | None = None

    def committed(self) -> None:
        """This process committed: the watcher, if any, looks at the feed head now. With no watcher
        (nobody in this process ever waited) nothing is locked: a waiter that starts later looks at
        the head itself before it sleeps."""
        if self._watcher is None:
            return
        with self._wake:
            self._generation += 1
            self._wake.notify_all()

    def wait(self, after: int, timeout: float | None, head: Callable[[], int]) -> bool:
        """Sleep until the watcher (one thread per engine, looking at `head()` every few milliseconds
        while anything waits) sees the feed head pass `after`; False when `timeout` is spent. Waiters
        look at the head themselves at least every POLL_FALLBACK seconds."""
        deadline = None if timeout is None else time.monotonic() + timeout
        watcher = self._watch(head)
        with self._wake:
            watcher.waiters += 1
            self._wake.notify_all()
        try:
            first = True
            while True:
                with self._wake:
                    seen = watcher.generation
                    known = watcher.head
                if known > after:
                    return True
                if first or watcher.failed:
                    first = False
                    if head() > after:
                        return True
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                pause = POLL_FALLBACK if left is None else min(POLL_FALLBACK, left)
                with self._wake:
                    if watcher.generation == seen:
                        self._wake.wait(pause)
                    if watcher.generation == seen:
                        first = True  # nothing from the watcher in a whole pause: look ourselves
        finally:
            with self._wake:
                watcher.waiters -= 1

    def _watch(self, head: Callable[[], int]) -> _Watcher:
        with self._wake:
            if self._watcher is None:
                self._watcher = _Watcher(self, head)
            return self._watcher

    def stop(self) -> None:
        """Stop the watcher thread, if one was started."""
        if self._watcher is not None:
            self._watcher.stop()


class _Watcher:
    """A thread that, while any feed waiter of its waker waits, looks at the feed head: again after
    WATCH_FAST seconds when it moved or this process committed, backing off to WATCH_SLOW while the
    feed stands still. Each change wakes every waiter. Writers pay nothing for it."""

    def __init__(self, waker: FeedWaker, head: Callable[[], int]) -> None:
        self._waker = waker
        self._head = head
        self.waiters = 0
        self.head = -1
        self.generation = 0
        self.failed = False
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="waybook-pg-feed-watcher", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._waker._wake:
            self._stopping = True
            self._waker._wake.notify_all()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        wake = self._waker._wake
        pause = WATCH_FAST
        while True:
            with wake:
                while self.waiters == 0 and not self._stopping:
                    wake.wait()
                if self._stopping:
                    return
                commits = self._waker._generation
            try:
                now = self._head()
                failed = False
            except (StorageError, JournalClosedError):
                now, failed = self.head, True
            with wake:
                moved = now != self.head
                if moved or failed != self.failed:
                    self.head, self.failed = now, failed
                    self.generation += 1
                    wake.notify_all()
                pause = WATCH_FAST if moved else min(pause * 2, WATCH_SLOW)
                if failed:
                    pause = POLL_FALLBACK
                if self._waker._generation == commits and not self._stopping:
                    wake.wait(pause)
                if self._waker._generation != commits:
                    pause = WATCH_FAST
