"""Host calls take turns: first come, first served, for threads and for asyncio.

A ticket is taken when a host method is called (after its request is copied and validated), so calls
run in arrival order. A call that fails still gives up its turn, and an asyncio call cancelled while
waiting gives up a turn it never used.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator


class Turns:
    """First come, first served: a ticket is taken when a host method is called."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._next = 0
        self._serving = 0

    def take(self) -> int:
        with self._cond:
            ticket = self._next
            self._next += 1
            return ticket

    @contextlib.contextmanager
    def turn(self, ticket: int) -> Iterator[None]:
        with self._cond:
            while self._serving != ticket:
                self._cond.wait()
        try:
            yield
        finally:
            with self._cond:
                self._serving += 1
                self._cond.notify_all()


class AsyncTurns:
    def __init__(self) -> None:
        self._cond = asyncio.Condition()
        self._next = 0
        self._serving = 0
        self._abandoned: set[int] = set()

    def take(self) -> int:
        ticket = self._next
        self._next += 1
        return ticket

    async def acquire(self, ticket: int) -> None:
        async with self._cond:
            try:
                await self._cond.wait_for(lambda: self._serving == ticket)
            except asyncio.CancelledError:
                self._abandoned.add(ticket)
                self._skip_abandoned()
                raise

    async def release(self) -> None:
        async with self._cond:
            self._serving += 1
            self._skip_abandoned()
            self._cond.notify_all()

    def _skip_abandoned(self) -> None:
        while self._serving in self._abandoned:
            self._abandoned.discard(self._serving)
            self._serving += 1
