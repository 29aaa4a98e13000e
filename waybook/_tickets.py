"""Threads served in the order they came: a ticket each, then a wait for its turn.

Shared by the canonical memory authority's host calls (`memory.canonical._turns.Turns`) and the SQLite
store's writers of one process (`stores._writer_queue`): a lock or condition alone goes to whichever
waiter runs first, on a loaded machine often the thread that just released it.
"""

from __future__ import annotations

import threading


class TicketLine:
    """First come, first served between threads: `take()` a ticket, `wait` for its turn, `leave` to end
    the turn (or to drop a ticket whose turn has not come: a wait that timed out or was interrupted)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0
        self._serving = 0
        self._abandoned: set[int] = set()

    def take(self) -> int:
        with self._cond:
            ticket = self._next
            self._next += 1
            return ticket

    def wait(self, ticket: int, timeout: float | None = None) -> bool:
        """Whether `ticket`'s turn came (within `timeout` seconds; None waits as long as it takes)."""
        with self._cond:
            return self._cond.wait_for(lambda: self._serving == ticket, timeout)

    def leave(self, ticket: int) -> None:
        """End `ticket`'s turn, or drop it from the line if its turn has not come."""
        with self._cond:
            if self._serving == ticket:
                self._serving += 1
                while self._serving in self._abandoned:
                    self._abandoned.discard(self._serving)
                    self._serving += 1
                self._cond.notify_all()
            elif self._serving < ticket:
                self._abandoned.add(ticket)
