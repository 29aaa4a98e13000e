"""Durability policies for file journals, and group commit.

| policy  | an append returns after                        | process crash | power loss           |
|---------|------------------------------------------------|---------------|----------------------|
| `none`  | write(2): the bytes are in the OS page cache   | survives      | may lose any record  |
| `flush` | write(2); `flush()` and `close()` fsync        | survives      | up to the last flush |
| `fsync` | write(2) and an fsync of the file              | survives      | survives             |
| `group` | write(2) and an fsync shared with other appends| survives      | survives             |

Under `group`, appends from several threads share fsyncs: while one fsync runs, later appends queue
behind it and the next fsync covers them all. Every append still returns only once its own bytes are
durable. A failed fsync is fatal for the journal object: it raises DurabilityError now and on every
later append; it never retries and never reports success (the page cache may have dropped the data).
"""

from __future__ import annotations

import enum
import threading
import time
from collections.abc import Callable

from waybook.journal.errors import DurabilityError


class Durability(enum.StrEnum):
    NONE = "none"
    FLUSH = "flush"
    FSYNC = "fsync"
    GROUP = "group"


class GroupCommit:
    """Shares fsyncs among concurrent appenders. `wait_durable(end)` returns once bytes before `end` are.

    `window` (seconds) lets the syncing thread wait briefly for more appends to join its fsync; the
    default 0 relies on natural batching (appends that arrive during an fsync share the next one).
    """

    def __init__(self, fsync: Callable[[], None], *, name: str, window: float = 0.0) -> None:
        self._fsync = fsync
        self._name = name
        self._window = window
        self._cond = threading.Condition()
        self._written = 0
        self._durable = 0
        self._syncing = False
        self._failure: BaseException | None = None
        self.fsyncs = 0

    def written(self, end: int) -> None:
        """Note that bytes up to `end` are written (and may now be synced)."""
        with self._cond:
            self._written = max(self._written, end)

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
                self._syncing = True
                break
        try:
            if self._window > 0:
                time.sleep(self._window)
            with self._cond:
                target = self._written
            self._fsync()
        except BaseException as exc:
            with self._cond:
                self._failure = exc
                self._syncing = False
                self._cond.notify_all()
            raise self._failed() from exc
        with self._cond:
            self.fsyncs += 1
            self._durable = max(self._durable, target)
            self._syncing = False
            self._cond.notify_all()
        if target < end:  # cannot happen: `end` was written before we took the turn
            self.wait_durable(end)

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            raise self._failed() from self._failure

    def _failed(self) -> DurabilityError:
        msg = (
            f"{self._name}: fsync failed ({self._failure}); appends since the last successful sync may not "
            "be durable. This journal object refuses further appends: reopen it and check the tail."
        )
        return DurabilityError(msg)
