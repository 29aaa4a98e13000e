"""Extension delivery on every store: a subscriber gets each committed record with its identity and
position, acknowledges what it processed, and resumes from its cursor without missing a record or
applying one twice: after a disconnect, mid-delivery cancellation, a store restart, and across a socket."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.stores.conftest import StoreKind
from waybook import Session
from waybook.stores import (
    CATALOG_ID,
    Applied,
    Delivery,
    DeliveryConflictError,
    FeedServer,
    JournalStore,
    StoreArgumentError,
    open_async_store,
    open_store,
)

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0  # bounded waits for an exact state, never a sleep


def write(store: JournalStore, journal_id: str, messages: int) -> None:
    journal = store.open(journal_id) if store.exists(journal_id) else store.create(journal_id)
    session = Session(journal)
    for n in range(messages):
        session.user(f"{journal_id} message {n}")


def feed_keys(store: JournalStore, journals: tuple[str, ...] = ("s1", "s2")) -> list[tuple[str, int, str]]:
    return [(e.journal_id, e.seq, e.record.digest) for e in store.feed() if e.journal_id in journals]


def take(subscription: object, count: int) -> list[Delivery]:
    taken = []
    for _ in range(count):
        delivery = subscription.next(timeout=TIMEOUT)  # type: ignore[attr-defined]
        assert delivery is not None, f"only {len(taken)} of {count} deliveries came"
        taken.append(delivery)
    return taken


def test_a_delivery_carries_the_records_identity_and_committed_position(store: JournalStore) -> None:
    write(store, "s1", 2)
    write(store, "s2", 1)
    with store.subscribe(after=0) as subscription:
        deliveries = take(subscription, len(list(store.feed())))
        assert subscription.next(timeout=0) is None  # everything committed was delivered
    entries = list(store.feed())
    assert [(d.journal_id, d.seq, d.position, d.record) for d in deliveries] == [
        (e.journal_id, e.seq, e.position, e.record) for e in entries
    ]


def test_a_subscriber_that_disconnects_resumes_from_its_cursor_missing_nothing(store: JournalStore) -> None:
    write(store, "s1", 3)
    applied = Applied()
    keys: list[tuple[str, int, str]] = []
    with store.subscribe(filter=("s1", "s2")) as subscription:
        for delivery in take(subscription, 3):
            if applied.first_time(delivery):
                keys.append(delivery.key)
            subscription.ack(delivery.position)
        cursor = subscription.cursor
    write(store, "s2", 2)  # committed while the subscriber is away
    write(store, "s1", 1)
    with store.subscribe(after=cursor, filter=("s1", "s2")) as subscription:
        resumed = take(subscription, 5)
        assert subscription.next(timeout=0) is None
    assert all(d.position > cursor for d in resumed)  # nothing twice
    keys += [d.key for d in resumed if applied.first_time(d)]
    assert keys == feed_keys(store)  # nothing missed, in feed order


def test_a_delivery_not_acknowledged_comes_again_and_is_applied_once(store: JournalStore) -> None:
    write(store, "s1", 4)
    applied = Applied()
    with store.subscribe(filter="s1") as subscription:
        first, second, third = take(subscription, 3)
        assert applied.first_time(first)
        assert applied.first_time(second)
        assert applied.first_time(third)
        subscription.ack(first.position)  # the subscriber crashed before acknowledging the others
        cursor = subscription.cursor
    assert cursor == first.position
    with store.subscribe(after=cursor, filter="s1") as again:
        redelivered = take(again, 3)
    assert [d.key for d in redelivered[:2]] == [second.key, third.key]  # at least once
    assert [applied.first_time(d) for d in redelivered] == [False, False, True]  # idempotent by key
    assert len(applied) == 4


def test_a_different_digest_for_a_seen_journal_and_seq_is_a_conflict(store: JournalStore) -> None:
    write(store, "s1", 1)
    with store.subscribe(filter="s1") as subscription:
        (delivery,) = take(subscription, 1)
    applied = Applied()
    applied.first_time(delivery)
    other = next(e for e in store.feed() if e.journal_id == "s1" and e.seq == 2)
    forged = Delivery(delivery.journal_id, delivery.seq, delivery.position, other.record)
    with pytest.raises(DeliveryConflictError, match="two histories"):
        applied.first_time(forged)


def test_cancellation_mid_delivery_leaves_the_cursor_at_the_last_acknowledgement(store: JournalStore) -> None:
    write(store, "s1", 3)

    class CancelledError(Exception):
        pass

    processed: list[int] = []
    subscription = store.subscribe(filter="s1")

    def consume() -> None:
        for delivery in subscription:
            if len(processed) == 2:
                raise CancelledError  # cancelled while handling the third delivery
            processed.append(delivery.position)
            subscription.ack(delivery.position)

    with pytest.raises(CancelledError):
        consume()
    assert subscription.cursor == processed[-1]
    with store.subscribe(after=subscription.cursor, filter="s1") as resumed:
        rest = take(resumed, 2)
    assert [d.position for d in rest] == [e.position for e in store.feed() if e.journal_id == "s1"][2:]


def test_closing_a_waiting_subscription_from_another_thread_ends_its_iteration(store: JournalStore) -> None:
    subscription = store.subscribe(after=store.feed_head(), filter="s1")
    received: list[Delivery] = []
    woke = threading.Event()

    def consume() -> None:
        for delivery in subscription:
            received.append(delivery)
            woke.set()

    reader = threading.Thread(target=consume)
    reader.start()
    write(store, "s1", 1)  # the waiting subscriber wakes for new commits
    assert woke.wait(TIMEOUT)
    subscription.close()
    reader.join(TIMEOUT)
    assert not reader.is_alive()


def test_the_cursor_resumes_after_the_store_restarts(kind: StoreKind, url: str, tmp_path: Path) -> None:
    if not kind.persistent:
        pytest.skip("an in-process store does not outlive its process")
    saved = tmp_path / "cursor"
    with open_store(url) as store:
        write(store, "s1", 2)
        with store.subscribe(filter=("s1", "s2")) as subscription:
            for delivery in take(subscription, 3):
                subscription.ack(delivery.position)
            saved.write_text(str(subscription.cursor))
    with open_store(url) as store:  # restarted
        write(store, "s2", 1)
        with store.subscribe(after=int(saved.read_text()), filter=("s1", "s2")) as subscription:
            rest = take(subscription, 2)
            assert subscription.next(timeout=0) is None
        assert [d.key for d in rest] == feed_keys(store)[3:]


def test_a_filter_chooses_deliveries_and_the_cursor_passes_what_it_left_out(store: JournalStore) -> None:
    write(store, "s1", 1)
    write(store, "s2", 1)
    with store.subscribe(filter=lambda d: d.journal_id == "s2") as subscription:
        deliveries = take(subscription, 2)
        assert {d.journal_id for d in deliveries} == {"s2"}
        subscription.ack(deliveries[-1].position)
        assert subscription.next(timeout=0) is None
        assert subscription.cursor == store.feed_head()
    catalog = [e for e in store.feed() if e.journal_id == CATALOG_ID]
    with store.subscribe(filter=CATALOG_ID) as subscription:
        assert [d.position for d in take(subscription, len(catalog))] == [e.position for e in catalog]


@pytest.mark.parametrize("after", [-1, "0", 1.5, None])
def test_a_bad_cursor_is_a_typed_error(store: JournalStore, after: object) -> None:
    with pytest.raises(StoreArgumentError, match="feed position"):
        store.subscribe(after=after)  # type: ignore[arg-type]


def test_acknowledging_what_was_never_delivered_is_refused(store: JournalStore) -> None:
    write(store, "s1", 1)
    with store.subscribe() as subscription:
        (delivery,) = take(subscription, 1)
        with pytest.raises(StoreArgumentError, match="nothing after position"):
            subscription.ack(delivery.position + 1)
        subscription.ack(delivery.position)
        subscription.ack(0)  # acks never move back
        assert subscription.acked == delivery.position


def test_the_async_store_delivers_resumes_and_survives_cancellation(url: str) -> None:
    async def scenario() -> None:
        store = await open_async_store(url)
        try:
            session = Session(store.blocking.create("s1"))
            for n in range(3):
                session.user(f"m{n}")
            subscription = store.subscribe(filter="s1")
            seen: list[int] = []
            third = asyncio.Event()

            async def consume() -> None:
                async for delivery in subscription:
                    seen.append(delivery.position)
                    if len(seen) < 3:
                        subscription.ack(delivery.position)
                    else:
                        third.set()
                        await asyncio.Event().wait()  # cancelled mid-delivery, before its ack

            task = asyncio.create_task(consume())
            await asyncio.wait_for(third.wait(), TIMEOUT)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            cursor = subscription.cursor
            assert cursor == seen[1]
            session.user("m3")
            resumed = store.subscribe(after=cursor, filter="s1")
            again = [await resumed.next(timeout=TIMEOUT) for _ in range(3)]
            assert again[0] is not None
            assert again[0].position == seen[2]  # redelivered
            assert [d.seq for d in again if d is not None] == [3, 4, 5]
            assert await resumed.next(timeout=0) is None
        finally:
            await store.close()

    asyncio.run(scenario())


def run_subscriber(address: tuple[str, int], cursor: Path, count: int) -> list[dict[str, object]]:
    host, port = address
    command = [sys.executable, "-m", "tests.stores.feed_subscriber", host, str(port), str(cursor), str(count)]
    run = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    return [json.loads(line) for line in run.stdout.splitlines()]


def test_a_subscriber_in_another_process_resumes_over_a_socket(store: JournalStore, tmp_path: Path) -> None:
    write(store, "s1", 2)
    cursor = tmp_path / "cursor"
    with FeedServer(store) as server:
        assert server.address[0] == "127.0.0.1"
        first = run_subscriber(server.address, cursor, 3)  # then the process exits: a disconnect
        write(store, "s2", 2)
        second = run_subscriber(server.address, cursor, 3)
    got = [(d["journal"], d["seq"], d["digest"]) for d in first + second]
    assert got == feed_keys(store)  # nothing missed, nothing twice, across two processes
    assert int(cursor.read_text()) == second[-1]["position"]


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("write"), st.sampled_from(["s1", "s2"]), st.integers(1, 3)),
        st.tuples(st.just("take"), st.integers(1, 4), st.booleans()),  # how many; ack each?
        st.tuples(st.just("reconnect"), st.just(0), st.just(0)),
    ),
    max_size=12,
)


@settings(max_examples=25)
@given(operations=OPERATIONS)
def test_any_run_of_writes_takes_and_reconnects_applies_every_record_once(
    operations: list[tuple[str, object, object]],
) -> None:
    with open_store("memory:") as store:
        applied = Applied()
        order: list[tuple[str, int, str]] = []
        subscription = store.subscribe(filter=("s1", "s2"))
        for operation, a, b in operations:
            if operation == "write":
                write(store, str(a), int(b))  # type: ignore[call-overload]
            elif operation == "take":
                for _ in range(int(a)):  # type: ignore[call-overload]
                    delivery = subscription.next(timeout=0)
                    if delivery is None:
                        break
                    if applied.first_time(delivery):
                        order.append(delivery.key)
                    if b:
                        subscription.ack(delivery.position)
            else:
                subscription.close()
                subscription = store.subscribe(after=subscription.cursor, filter=("s1", "s2"))
        while (delivery := subscription.next(timeout=0)) is not None:
            if applied.first_time(delivery):
                order.append(delivery.key)
        assert order == feed_keys(store)
