"""Host calls take turns: first come, first served, for threads and for asyncio.

A place in line is taken when a host method is called (after its request is copied and validated), so
calls run in call order. A call that fails still gives up its turn. A call interrupted while waiting
(KeyboardInterrupt, any BaseException, asyncio cancellation) leaves the line without running. An
asyncio call cancelled after its turn began finishes its journal calls first: the next call starts only
when they are done, and the outcome is recorded (see faces.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Iterator


class Turns:
    """First come, first served between threads: `take()` at call time, then `with turns.turn(t):`."""

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

    @contextlib.contextmanager
    def turn(self, ticket: int) -> Iterator[None]:
        try:
            with self._cond:
                while self._serving != ticket:
                    self._cond.wait()
        except BaseException:
            self._give_up(ticket)
            raise
        try:
            yield
        finally:
            self._give_up(ticket)

    def _give_up(self, ticket: int) -> None:
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


class AsyncTurns:
    """First come, first served on one event loop. `take()` is synchronous: call it in the method."""

    def __init__(self) -> None:
        self._line: deque[asyncio.Future[None]] = deque()
        self._holder: asyncio.Future[None] | None = None

    def take(self) -> asyncio.Future[None]:
        place: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if self._holder is None:
            self._holder = place
            place.set_result(None)
        else:
            self._line.append(place)
        return place

    async def wait(self, place: asyncio.Future[None]) -> None:
        """Wait for `place`'s turn; cancelled while waiting, the call leaves the line without running."""
        try:
            await asyncio.shield(place)
        except asyncio.CancelledError:
            self.leave(place)
            raise

    def leave(self, place: asyncio.Future[None]) -> None:
        """End `place`'s turn, or take it out of the line; idempotent."""
        if self._holder is place:
            self._holder = None
            while self._line:
                following = self._line.popleft()
                if not following.done():
                    self._holder = following
                    following.set_result(None)
                    return
        elif place in self._line:
            self._line.remove(place)
            place.cancel()
