"""`FeedWatch`: every `/api/wait` long-poll of `waybook serve` answered from one wait on the store's feed.

A served page asks "has anything committed after position P?" and holds its request open until the
answer is yes or `WAIT_SECONDS` pass. A thread per waiting request would cost a thread and its
descriptors each (a few hundred open pages exhausted a 1,024-descriptor limit); here one thread waits
on the store, only while some request waits, and each waiting request is a coroutine on the server's
event loop. The watch keeps the journal ids of the last `RECENT` feed positions in memory, so a request
woken by a commit is answered without reading the store; a request older than that memory reads the
feed once, in the server's page pool.
"""

from __future__ import annotations

import asyncio
import collections
import functools
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

from waybook.stores import JournalStore, open_store

T = TypeVar("T")
Answer = dict[str, Any]

WAIT_SECONDS: Final = 20.0
"""How long one `/api/wait` holds its request open before answering "nothing new"."""
WATCH_STEP: Final = 0.5
"""How long one wait of the watching thread lasts before it looks whether anyone still waits."""
RECENT: Final = 10_000
"""How many feed positions (each a journal id) the watch remembers."""


class FeedWatch:
    """The long-polls of one server: `await wait(after, journal_id)` on its event loop.

    `read` runs a blocking function in the server's page pool (for a request older than the watch's
    memory). A store that fails is reported to every waiting request as the error it raised."""

    def __init__(self, url: str, *, read: Callable[[Callable[[], Answer]], Awaitable[Answer]]) -> None:
        self._url = url
        self._read = read
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="waybook-feed")
        self._store: JournalStore | None = None
        self._task: asyncio.Task[None] | None = None
        self._waiting = 0
        self._head: int | None = None
        self._known_after = 0  # every position in (_known_after, _head] is in _recent
        self._recent: collections.deque[tuple[int, str]] = collections.deque(maxlen=RECENT)
        self._sleepers: set[asyncio.Future[None]] = set()  # one per waiting request, woken at a move
        self._failure: BaseException | None = None

    @property
    def waiting(self) -> int:
        """How many requests wait now."""
        return self._waiting

    async def wait(
        self, after: int, journal_id: str | None, *, timeout: float = WAIT_SECONDS
    ) -> dict[str, Any]:
        """`{"position": P, "changed": C}` once the feed passes `after` (P its head, C whether a record
        of `journal_id` committed after `after`; any record when None), or `timeout` seconds pass
        (P = `after`, C false)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        self._waiting += 1
        try:
            if self._task is None:
                self._failure = None
                self._task = loop.create_task(self._watch())
            while self._head is None or self._head <= after:
                if self._failure is not None:
                    raise self._failure
                left = deadline - loop.time()
                if left <= 0:
                    return {"position": after, "changed": False}
                sleeper = loop.create_future()
                self._sleepers.add(sleeper)
                timer = loop.call_later(left, _settle, sleeper)
                try:
                    await sleeper
                finally:
                    timer.cancel()
                    self._sleepers.discard(sleeper)
        finally:
            self._waiting -= 1
        head = self._head
        if after >= self._known_after:
            changed = journal_id is None or any(j == journal_id for p, j in self._recent if p > after)
            return {"position": head, "changed": changed}
        return await self._read(lambda: self._read_feed(after, journal_id))

    def _read_feed(self, after: int, journal_id: str | None) -> dict[str, Any]:
        """The answer for a request older than the watch's memory, from the store's feed itself."""
        with open_store(self._url, create=False) as store:
            changed, last = False, after
            for entry in store.feed(after, limit=RECENT):
                last = entry.position
                changed = changed or journal_id is None or entry.journal_id == journal_id
        return {"position": last, "changed": changed}

    async def _watch(self) -> None:
        """Follow the feed while anyone waits; wake every waiter at each move."""
        loop = asyncio.get_running_loop()

        def step(function: Callable[[], T]) -> asyncio.Future[T]:
            return loop.run_in_executor(self._thread, function)

        try:
            head = await step(self._open)
            self._known_after = head
            self._publish(head, [])
            while self._waiting:
                if await step(functools.partial(self._waited, head)):
                    entries = await step(functools.partial(self._entries, head))
                    head = entries[-1][0] if entries else head
                    self._publish(head, entries)
        except Exception as exc:  # a failing store: every waiter is told what failed
            self._failure = exc
            self._wake()
        finally:
            await step(self._close)
            self._head = None
            self._recent.clear()
            # A request that came while this watch was ending is served by the next one.
            self._task = loop.create_task(self._watch()) if self._waiting and self._failure is None else None

    def _open(self) -> int:
        self._store = open_store(self._url, create=False)
        return self._store.feed_head()

    def _waited(self, head: int) -> bool:
        assert self._store is not None
        return self._store.wait(head, timeout=WATCH_STEP)

    def _entries(self, head: int) -> list[tuple[int, str]]:
        assert self._store is not None
        return [(entry.position, entry.journal_id) for entry in self._store.feed(head, limit=RECENT)]

    def _close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    def _publish(self, head: int, entries: list[tuple[int, str]]) -> None:
        for entry in entries:
            if len(self._recent) == self._recent.maxlen:
                self._known_after = self._recent[0][0]
            self._recent.append(entry)
        self._head = head
        self._wake()

    def _wake(self) -> None:
        sleepers, self._sleepers = self._sleepers, set()
        for sleeper in sleepers:
            _settle(sleeper)

    def close(self) -> None:
        """Stop the watching thread (after its current step, at most `WATCH_STEP` seconds)."""
        self._thread.shutdown(wait=True, cancel_futures=True)


def _settle(sleeper: asyncio.Future[None]) -> None:
    if not sleeper.done():
        sleeper.set_result(None)
