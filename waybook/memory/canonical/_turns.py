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
from collections import deque
from collections.abc import Iterator

from waybook._tickets import TicketLine


class Turns:
    """First come, first served between threads: `take()` at call time, then `with turns.turn(t):`."""

    def __init__(self) -> None:
        self._line = TicketLine()

    def take(self) -> int:
        return self._line.take()

    @contextlib.contextmanager
    def turn(self, ticket: int) -> Iterator[None]:
        try:
            self._line.wait(ticket)
        except BaseException:
            self._line.leave(ticket)  # interrupted while waiting: leave the line without running
            raise
        try:
            yield
        finally:
            self._line.leave(ticket)


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
