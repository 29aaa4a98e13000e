"""Extension delivery: a subscriber receives committed records with their identity and position.

Extensions (indexers, mirrors, UIs) never inspect a store's files: they subscribe to its feed.
`store.subscribe(after=cursor)` yields a `Delivery` per committed record with a position > `cursor`
(its `journal_id`, `seq`, feed `position` and `record`), in feed order, waiting for new commits when it
has delivered everything. The subscriber acknowledges what it has processed (`subscription.ack(position)`)
and keeps `subscription.cursor` where it survives it (a file, its own database); after a disconnect, a
crash or a store restart it subscribes again with `after=cursor` and misses nothing.

Delivery is at least once: records after the last acknowledged position may come again. A subscriber is
idempotent by `(journal, seq, digest)` (`Delivery.key`, `Applied`): a key seen before is a duplicate, and
the same `(journal, seq)` with another digest is a different history (DeliveryConflictError).

Built only on the store's public `feed`, `feed_head` and `wait`, so it works on every store unchanged.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Collection, Iterator
from typing import TYPE_CHECKING, Final, Self

import attrs

from waybook.journal import ClosedOnExit
from waybook.model import IntegrityError, Record
from waybook.stores._catalog import check_position, check_timeout
from waybook.stores._errors import StoreArgumentError
from waybook.stores._protocol import JournalStore
from waybook.stores._values import FeedEntry

if TYPE_CHECKING:
    from waybook.stores._protocol import AsyncJournalStore

READ_BATCH: Final = 256
"""Feed entries read at a time: a subscriber far behind never holds the whole feed."""

WAIT_SLICE: Final = 0.25
"""Longest single wait on the store, so `close()` from another thread ends an idle wait soon."""


@attrs.frozen
class Delivery:
    """One committed record, delivered: which journal, its seq there, its feed position, the record."""

    journal_id: str
    seq: int
    position: int
    record: Record

    @property
    def digest(self) -> str:
        return self.record.digest

    @property
    def key(self) -> tuple[str, int, str]:
        """What makes a delivery idempotent: (journal, seq, digest)."""
        return (self.journal_id, self.seq, self.record.digest)

    @classmethod
    def of(cls, entry: FeedEntry) -> Delivery:
        return cls(entry.journal_id, entry.seq, entry.position, entry.record)


Filter = Callable[[Delivery], bool] | str | Collection[str] | None
"""Which deliveries a subscriber wants: a predicate, one journal id, or a collection of journal ids."""


def _predicate(filter: Filter) -> Callable[[Delivery], bool]:
    if filter is None:
        return lambda _delivery: True
    if isinstance(filter, str):
        return lambda delivery: delivery.journal_id == filter
    if callable(filter):
        return filter
    if isinstance(filter, Collection) and all(isinstance(item, str) for item in filter):
        wanted = frozenset(filter)
        return lambda delivery: delivery.journal_id in wanted
    msg = f"filter= takes a function of a Delivery, a journal id or journal ids, not {filter!r}"
    raise StoreArgumentError(msg)


def _check_after(after: object) -> int:
    if type(after) is not int or after < 0:
        msg = f"after= is a feed position (an int >= 0, a subscription's cursor), not {after!r}"
        raise StoreArgumentError(msg)
    return after


class DeliveryConflictError(IntegrityError):
    """The same (journal, seq) was delivered with two digests: two histories. Stop and investigate."""


class Cursor:
    """The positions one subscription has read, delivered and had acknowledged (shared by sync, async)."""

    def __init__(self, after: int) -> None:
        self.read = after  # every position up to here has been read (delivered or filtered out)
        self.delivered = after
        self.acked = after
        self.unacked: deque[int] = deque()
        self.lock = threading.Lock()

    def ack(self, position: object) -> None:
        if type(position) is not int:
            msg = f"ack() takes the position of a delivery (an int), not {position!r}"
            raise StoreArgumentError(msg)
        with self.lock:
            if position > self.delivered:
                msg = f"ack({position}): nothing after position {self.delivered} was delivered yet"
                raise StoreArgumentError(msg)
            self.acked = max(self.acked, position)
            while self.unacked and self.unacked[0] <= self.acked:
                self.unacked.popleft()

    def cursor(self, buffered: bool) -> int:
        with self.lock:
            if not self.unacked and not buffered:
                return max(self.acked, self.read)  # filtered-out records need no second look
            return self.acked

    def delivering(self, position: int) -> None:
        with self.lock:
            self.delivered = position
            self.unacked.append(position)


class _Deliveries:
    """What a blocking and an asyncio subscription share: the cursor, the filter, and the deliveries read
    from the feed but not yet handed out."""

    def __init__(self, after: int, filter: Filter) -> None:
        self._state = Cursor(_check_after(after))
        self._wanted = _predicate(filter)
        self._buffer: deque[Delivery] = deque()

    @property
    def cursor(self) -> int:
        """Where to subscribe again (`after=`) to miss nothing: the last acknowledged position (or, with
        everything delivered acknowledged, past the records the filter left out)."""
        return self._state.cursor(bool(self._buffer))

    @property
    def acked(self) -> int:
        return self._state.acked

    def ack(self, position: int) -> None:
        """Acknowledge every delivery up to `position` as processed. Acks never move back."""
        self._state.ack(position)

    def _read(self, entry: FeedEntry) -> None:
        """Take in one feed entry: read past it, and buffer its delivery if the filter wants it."""
        delivery = Delivery.of(entry)
        self._state.read = entry.position
        if self._wanted(delivery):
            self._buffer.append(delivery)

    def _filled(self, start: int, head: int) -> bool:
        """After reading the feed from `start` (`head` its head before): whether a delivery is buffered."""
        if self._state.read == start:
            self._state.read = max(start, head)  # positions of purged journals are skipped
        return bool(self._buffer)

    def _deliver(self) -> Delivery:
        delivery = self._buffer.popleft()
        self._state.delivering(delivery.position)
        return delivery


class Subscription(_Deliveries, ClosedOnExit):
    """A blocking subscriber's view of a store's feed. Iterate it; `ack` what you processed; `close` ends
    the iteration (also from another thread). Not for sharing between consumers."""

    def __init__(self, store: JournalStore, after: int = 0, *, filter: Filter = None) -> None:
        super().__init__(after, filter)
        self._store = store
        self._closed = threading.Event()

    def next(self, timeout: float | None = None) -> Delivery | None:
        """The next delivery, waiting up to `timeout` seconds (None, or past a year: until one comes or
        `close`; 0 or less: not at all). NaN is refused (StoreArgumentError)."""
        timeout = check_timeout(timeout)
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._closed.is_set():
            if self._buffer or self._fill():
                return self._deliver()
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return None
            self._store.wait(self._state.read, WAIT_SLICE if left is None else min(left, WAIT_SLICE))
        return None

    def _fill(self) -> bool:
        head = self._store.feed_head()  # every position up to here is readable now
        start = self._state.read
        for entry in self._store.feed(start, limit=READ_BATCH):
            self._read(entry)
        return self._filled(start, head)

    def __iter__(self) -> Iterator[Delivery]:
        while (delivery := self.next()) is not None:
            yield delivery

    def close(self) -> None:
        self._closed.set()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()


class AsyncSubscription(_Deliveries):
    """`Subscription` for asyncio: `async for delivery in subscription`, `ack`, `aclose`. Cancelling the
    task mid-delivery leaves the cursor at the last acknowledged position."""

    def __init__(self, store: AsyncJournalStore, after: int = 0, *, filter: Filter = None) -> None:
        super().__init__(after, filter)
        self._store = store
        self._closed = False

    async def next(self, timeout: float | None = None) -> Delivery | None:
        timeout = check_timeout(timeout)
        loop = asyncio.get_running_loop()
        deadline = None if timeout is None else loop.time() + timeout
        while not self._closed:
            if self._buffer or await self._fill():
                return self._deliver()
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return None
            await self._store.wait(self._state.read, WAIT_SLICE if left is None else min(left, WAIT_SLICE))
        return None

    async def _fill(self) -> bool:
        head = await self._store.feed_head()
        start = self._state.read
        async for entry in self._store.feed(start, limit=READ_BATCH):
            self._read(entry)
        return self._filled(start, head)

    def __aiter__(self) -> AsyncIterator[Delivery]:
        return self._deliveries()

    async def _deliveries(self) -> AsyncIterator[Delivery]:
        while (delivery := await self.next()) is not None:
            yield delivery

    async def aclose(self) -> None:
        self._closed = True

    def close(self) -> None:
        self._closed = True

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._closed = True


class Applied:
    """The subscriber side of at-least-once delivery: which (journal, seq, digest) keys were applied.

    `first_time(delivery)` is True once per key; a repeat is False (skip it); the same (journal, seq)
    with another digest raises DeliveryConflictError. Holds one digest per (journal, seq) seen.
    """

    def __init__(self) -> None:
        self._digests: dict[tuple[str, int], str] = {}

    def first_time(self, delivery: Delivery) -> bool:
        place = (delivery.journal_id, delivery.seq)
        known = self._digests.get(place)
        if known is None:
            self._digests[place] = delivery.digest
            return True
        if known != delivery.digest:
            msg = (
                f"{delivery.journal_id} seq {delivery.seq} was delivered with digest {known[:12]} and now "
                f"{delivery.digest[:12]}: two histories of one journal; stop and verify the store"
            )
            raise DeliveryConflictError(msg)
        return False

    def __len__(self) -> int:
        return len(self._digests)


def subscribe(store: JournalStore, after: int = 0, *, filter: Filter = None) -> Subscription:
    """`store.subscribe(...)` for any store with a feed (its `feed`, `feed_head` and `wait`)."""
    return Subscription(store, after, filter=filter)


def subscribe_async(store: AsyncJournalStore, after: int = 0, *, filter: Filter = None) -> AsyncSubscription:
    return AsyncSubscription(store, after, filter=filter)


def tail(store: JournalStore, after: int = 0, *, poll: float | None = None) -> Iterator[FeedEntry]:
    """Every feed entry after `after`, then each new one as it commits (blocking); never ends by itself.

    Waits with `store.wait` (at most `poll` seconds at a time), so it sleeps until a writer commits
    wherever the engine can signal it. The store, the position and `poll` are checked here, before
    anything is read (StoreArgumentError)."""
    if not isinstance(store, JournalStore):
        msg = f"tail takes a JournalStore (open_store(url)), not {type(store).__name__}"
        raise StoreArgumentError(msg)
    check_position(after)
    return _following(store, after, check_timeout(poll))


def _following(store: JournalStore, after: int, poll: float | None) -> Iterator[FeedEntry]:
    position = after
    while True:
        head = store.feed_head()  # every position up to here is readable now
        for entry in store.feed(position):
            position = entry.position
            yield entry
        position = max(position, head)  # skips positions of purged journals
        store.wait(position, poll)
