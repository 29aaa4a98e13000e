"""Group commit: appends from several threads share fsyncs under the `group` durability policy.

While one fsync runs, later appends queue behind it and the next fsync covers them all; its leader
first waits briefly for as many appends as the last fsync covered. Every append still returns only once
its own bytes are durable; a failed fsync fails every waiting and later append (see `_durability`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

from waybook.model import DurabilityError


class GroupCommit:
    """Shares fsyncs among concurrent appenders. `wait_durable(end)` returns once bytes before `end` are.

    The thread that finds no fsync running leads the next one. Before it syncs it waits for company:
    until as many appends have been written as the last fsync covered, or `window` seconds have passed
    (by default as long as the last fsync took). Without that wait, writers released together by one
    fsync split into a leader syncing alone and the rest waiting a whole fsync more. A lone writer never
    waits: its own append is all the company the last fsync had.
    """

    def __init__(self, fsync: Callable[[], None], *, name: str, window: float | None = None) -> None:
        if window is not None and window < 0:
            msg = f"group_window must be None (adaptive) or >= 0 seconds, not {window!r}"
            raise ValueError(msg)
        self._fsync = fsync
        self._name = name
        self._window = window
        lock = threading.Lock()
        self._cond = threading.Condition(lock)  # an fsync finished (or failed)
        self._joined = threading.Condition(lock)  # the leader's company has written
        self._written = 0
        self._durable = 0
        self._syncing = False
        self._failure: BaseException | None = None
        self._unsynced = 0  # appends written that no started fsync covers yet
        self._company = 1  # appends the last fsync covered
        self._last_fsync = 0.0  # seconds the last fsync took
        self.fsyncs = 0
        self.synced_appends = 0

    def written(self, end: int) -> None:
        """Note that one append's bytes, up to `end`, are written (and may now be synced)."""
        with self._cond:
            self._written = max(self._written, end)
            self._unsynced += 1
            if self._unsynced >= self._company:
                self._joined.notify()

    def mark_durable(self, end: int) -> None:
        """Bytes up to `end` are known durable without an fsync (e.g. they were there at open)."""
        with self._cond:
            self._written = max(self._written, end)
            self._durable = max(self._durable, end)

    def wait_durable(self, end: int) -> None:
        with self._cond:
            while True:
                self._raise_if_failed()
                if self._durable >= end:
                    return
                if self._syncing:
                    self._cond.wait()
                    continue
                break
            self._syncing = True
            try:
                self._gather()
            except BaseException:  # interrupted while waiting: hand the turn back, nothing was synced
                self._syncing = False
                self._cond.notify_all()
                raise
            target, covered = self._written, self._unsynced
            self._unsynced = 0
        started = time.perf_counter()
        try:
            self._fsync()
        except BaseException as exc:
            with self._cond:
                self._failure = exc
                self._syncing = False
                self._cond.notify_all()
            raise self._failed() from exc
        with self._cond:
            self._last_fsync = time.perf_counter() - started
            self._company = max(covered, 1)
            self.fsyncs += 1
            self.synced_appends += covered
            self._durable = max(self._durable, target)
            self._syncing = False
            self._cond.notify_all()
        if target < end:  # cannot happen: `end` was written before we took the turn
            self.wait_durable(end)

    def _gather(self) -> None:
        """Wait (holding the turn, not the lock) until the expected company has written, or time is up."""
        window = self._last_fsync if self._window is None else self._window
        deadline = time.perf_counter() + window
        while self._unsynced < self._company:
            remaining = deadline - time.perf_counter()
            if remaining <= 0:
                return
            self._joined.wait(remaining)

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failed() from self._failure

    def _failed(self) -> DurabilityError:
        msg = (
            f"{self._name}: fsync failed ({self._failure}); appends since the last successful sync may not "
            "be durable. This journal object refuses further appends: reopen it and check the tail."
        )
        return DurabilityError(msg)
