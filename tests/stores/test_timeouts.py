"""Every timeout is checked before anything waits (issue 42.4): NaN is refused with a typed error,
infinity and a huge number wait until something happens (never an OverflowError), zero or less does not
block. On every store, through `wait`, `tail`, subscriptions and the async twins; store URLs bound their
own seconds and sizes with typed errors."""

from __future__ import annotations

import asyncio
import math
import threading
from collections.abc import Callable
from typing import Any

import pytest

from tests.helpers.blocking import outcome
from tests.helpers.pg_fixtures import pg_store_url
from waybook import Session
from waybook.stores import (
    InvalidStoreUrlError,
    JournalStore,
    StoreArgumentError,
    open_async_store,
    open_store,
    tail,
)

BOUND = 60.0
"""The longest a test waits for a thread it started (a hang on the old code fails, never blocks)."""

HUGE = [math.inf, 1e300, 10**400]


def outcome_in_thread(call: Callable[[], Any]) -> list[object]:
    """Run `call` in a daemon thread; its result or exception, once it ends (within BOUND seconds)."""
    return [outcome(call, within=BOUND)]


@pytest.mark.parametrize("bad", [math.nan, -math.nan, "5", True, [1]])
def test_a_nan_or_non_number_wait_timeout_is_refused_at_once(store: JournalStore, bad: object) -> None:
    Session(store.create("s"))
    head = store.feed_head()
    (got,) = outcome_in_thread(lambda: store.wait(head, timeout=bad))  # type: ignore[arg-type]
    assert isinstance(got, StoreArgumentError), got
    assert "wait timeout" in str(got)


@pytest.mark.parametrize("huge", HUGE, ids=["inf", "1e300", "10**400"])
def test_an_infinite_or_huge_wait_lasts_until_a_commit(store: JournalStore, huge: float) -> None:
    session = Session(store.create("s"))
    head = store.feed_head()
    got: list[object] = []
    started = threading.Event()

    def wait() -> None:
        started.set()
        try:
            got.append(store.wait(head, timeout=huge))
        except BaseException as exc:
            got.append(exc)

    waiter = threading.Thread(target=wait, daemon=True)
    waiter.start()
    assert started.wait(BOUND)
    session.user("wake up")
    waiter.join(BOUND)
    assert got == [True]


@pytest.mark.parametrize("negative", [-1, -math.inf, 0])
def test_a_wait_of_zero_or_less_does_not_block(store: JournalStore, negative: float) -> None:
    Session(store.create("s"))
    head = store.feed_head()
    assert outcome_in_thread(lambda: store.wait(head, timeout=negative)) == [False]


def test_tail_refuses_a_nan_poll_before_reading(store: JournalStore) -> None:
    with pytest.raises(StoreArgumentError):
        tail(store, 0, poll=math.nan)


def test_a_subscription_checks_its_timeout(store: JournalStore) -> None:
    session = Session(store.create("s"))
    with store.subscribe(after=store.feed_head()) as subscription:
        (got,) = outcome_in_thread(lambda: subscription.next(timeout=math.nan))
        assert isinstance(got, StoreArgumentError), got
        assert outcome_in_thread(lambda: subscription.next(timeout=-5)) == [None]
        waiting: list[object] = []
        thread = threading.Thread(target=lambda: waiting.append(subscription.next(timeout=math.inf)))
        thread.start()
        session.user("delivered")
        thread.join(BOUND)
        assert [getattr(d, "seq", d) for d in waiting] == [2]


def test_a_remote_subscription_checks_its_timeout(store: JournalStore) -> None:
    from waybook.stores import FeedServer, RemoteSubscription

    session = Session(store.create("s"))
    with FeedServer(store) as server, RemoteSubscription(server.address, after=0) as remote:
        (got,) = outcome_in_thread(lambda: remote.next(timeout=math.nan))
        assert isinstance(got, StoreArgumentError), got
        session.user("over the bridge")
        assert remote.next(timeout=math.inf) is not None  # waits as long as it takes, no OverflowError


def test_the_async_store_checks_its_timeouts(url: str) -> None:
    async def run() -> None:
        store = await open_async_store(url)
        try:
            head = await store.feed_head()
            with pytest.raises(StoreArgumentError):
                await asyncio.wait_for(store.wait(head, timeout=math.nan), BOUND)
            assert await asyncio.wait_for(store.wait(head, timeout=-1), BOUND) is False
            subscription = store.subscribe(after=head)
            with pytest.raises(StoreArgumentError):
                await asyncio.wait_for(subscription.next(timeout=math.nan), BOUND)
        finally:
            await store.close()

    asyncio.run(run())


# --- URL options ----------------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["1e12", "inf", "nan", "-1", "abc", "1e400"])
def test_a_sqlite_busy_timeout_out_of_bounds_is_a_typed_url_error(tmp_path: Any, value: str) -> None:
    with pytest.raises(InvalidStoreUrlError, match="busy_timeout"):
        open_store(f"sqlite:{tmp_path}/s.db?busy_timeout={value}")
    assert not (tmp_path / "s.db").exists()


@pytest.mark.parametrize(
    "option",
    [
        "retry_for=1e12",
        "retry_for=inf",
        "retry_for=nan",
        "retry_for=-1",
        "pool_size=0",
        "pool_size=1000000000",
        "pool_size=2.5",
    ],
)
def test_postgresql_url_options_out_of_bounds_are_typed_url_errors(option: str) -> None:
    url = pg_store_url()
    got = outcome_in_thread(lambda: open_store(f"{url}&{option}"))
    assert isinstance(got[0], InvalidStoreUrlError), got
    assert option.partition("=")[0] in str(got[0])


def test_store_constructors_bound_their_seconds_too(tmp_path: Any) -> None:
    from waybook.stores import SqliteStore

    for value in (math.nan, math.inf, 1e12, -1):
        with pytest.raises(StoreArgumentError, match="busy_timeout"):
            SqliteStore(tmp_path / "s.db", busy_timeout=value)
