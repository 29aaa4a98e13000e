"""The feed across a process boundary (issue 41): `FeedServer` in one process, `RemoteSubscription` in
another, over a real socket. The design's four fixtures (disconnect, duplicate delivery, cancellation,
resumed cursor) run across two processes, with the server SIGKILLed and restarted mid-stream; every
transport failure is a typed BridgeError; a timed-out `next` leaves the subscription usable; an idle
iteration waits. No sleeps: each step awaits an exact state (a line from a process, a delivery)."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.feed_server import ROOT, ServerProcess
from waybook import Session
from waybook.codecs import seal
from waybook.model import GENESIS_DIGEST, Header, NewRecord
from waybook.stores import (
    Applied,
    BridgeError,
    Delivery,
    JournalStore,
    RemoteSubscription,
    StoreArgumentError,
    open_store,
)

TIMEOUT = 30.0  # a bound on waits for an exact state, never a sleep
AT = "2026-12-01T09:00:00.000Z"


@pytest.fixture(params=["file", "sqlite"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return f"file:{tmp_path}/store" if request.param == "file" else f"sqlite:{tmp_path}/store.db"


@pytest.fixture
def store(url: str) -> Iterator[JournalStore]:
    with open_store(url) as opened:
        yield opened


def write(store: JournalStore, journal_id: str, messages: int) -> None:
    journal = store.open(journal_id) if store.exists(journal_id) else store.create(journal_id)
    session = Session(journal)
    for n in range(messages):
        session.user(f"{journal_id} message {n}")


def feed_keys(store: JournalStore, journals: tuple[str, ...] | None = None) -> list[tuple[str, int, str]]:
    return [
        (e.journal_id, e.seq, e.record.digest)
        for e in store.feed()
        if journals is None or e.journal_id in journals
    ]


def take(subscription: RemoteSubscription, count: int, *, ack: bool = True) -> list[Delivery]:
    taken = []
    for _ in range(count):
        delivery = subscription.next(timeout=TIMEOUT)
        assert delivery is not None, f"only {len(taken)} of {count} deliveries came"
        taken.append(delivery)
        if ack:
            subscription.ack(delivery.position)
    return taken


def drain_until_broken(subscription: RemoteSubscription) -> list[Delivery]:
    """What the client still holds of a dead server's stream (each acked), up to the BridgeError."""
    taken: list[Delivery] = []
    while True:
        try:
            delivery = subscription.next(timeout=TIMEOUT)
        except BridgeError:
            return taken
        assert delivery is not None, "a dead server's connection must fail, not go quiet"
        taken.append(delivery)
        with contextlib.suppress(BridgeError):  # the server is gone; the cursor still counts the ack
            subscription.ack(delivery.position)


# --- the four fixtures, across two processes ------------------------------------------------------


def test_disconnect_every_call_on_a_killed_servers_subscription_is_a_bridge_error(
    store: JournalStore,
) -> None:
    write(store, "s1", 4)
    with ServerProcess(store.url) as server:
        subscription = RemoteSubscription(server.address)
        got = take(subscription, 2)
        server.kill()  # mid-stream: more was sent, and more is unsent
        got += drain_until_broken(subscription)
        calls: list[Callable[[], object]] = [
            lambda: subscription.next(),
            lambda: subscription.next(timeout=0),
            lambda: subscription.next(timeout=TIMEOUT),
            lambda: list(subscription),
            lambda: subscription.ack(subscription.cursor),
        ]
        for call in calls * 2:  # ten calls, ten typed errors: never a raw ConnectionResetError
            with pytest.raises(BridgeError, match=f"after={subscription.cursor}"):
                call()
        subscription.close()
    write(store, "s2", 2)  # written while no server runs
    with (
        ServerProcess(store.url) as restarted,
        RemoteSubscription(restarted.address, after=subscription.cursor) as resumed,
    ):
        got += take(resumed, len(feed_keys(store)) - len(got))
        assert resumed.next(timeout=0) is None
        restarted.stop()
    assert [d.key for d in got] == feed_keys(store)  # no gap, no duplicate


def test_duplicate_delivery_an_unacknowledged_delivery_comes_again_after_a_restart(
    store: JournalStore,
) -> None:
    write(store, "s1", 3)
    applied = Applied()
    order: list[tuple[str, int, str]] = []
    with ServerProcess(store.url) as server:
        subscription = RemoteSubscription(server.address)
        first = take(subscription, 3, ack=False)
        for delivery in first:
            if applied.first_time(delivery):
                order.append(delivery.key)
        subscription.ack(first[1].position)  # the third was applied, but its ack never went out
        server.kill()
        subscription.close()
    with (
        ServerProcess(store.url) as restarted,
        RemoteSubscription(restarted.address, after=subscription.cursor) as resumed,
    ):
        again = take(resumed, len(feed_keys(store)) - 2)
        restarted.stop()
    assert again[0].key == first[2].key  # delivered twice: at least once, as promised
    for delivery in again:
        if applied.first_time(delivery):
            order.append(delivery.key)
    assert order == feed_keys(store)  # and applied once


def run_subscriber(address: tuple[str, int], cursor: Path, count: int) -> subprocess.Popen[str]:
    host, port = address
    command = [sys.executable, "-m", "tests.stores.feed_subscriber", host, str(port), str(cursor), str(count)]
    return subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)


def test_cancellation_a_subscriber_process_killed_while_waiting_resumes_from_its_cursor_file(
    store: JournalStore, tmp_path: Path
) -> None:
    write(store, "s1", 2)
    cursor = tmp_path / "cursor"
    with ServerProcess(store.url) as server:
        subscriber = run_subscriber(server.address, cursor, 100)  # waits for more than there is
        assert subscriber.stdout is not None
        lines = [json.loads(subscriber.stdout.readline()) for _ in range(3)]
        while not cursor.exists() or int(cursor.read_text() or 0) != lines[-1]["position"]:
            pass  # the exact state: the third is acknowledged and saved; it now waits for a fourth
        subscriber.send_signal(signal.SIGKILL)  # cancelled while waiting
        subscriber.wait(TIMEOUT)
        write(store, "s2", 2)
        resumed = run_subscriber(server.address, cursor, 3)
        out, _ = resumed.communicate(timeout=120)
        assert resumed.returncode == 0
        server.stop()
    lines += [json.loads(line) for line in out.splitlines()]
    assert [(d["journal"], d["seq"], d["digest"]) for d in lines] == feed_keys(store, ("s1", "s2"))


def test_resumed_cursor_a_writer_keeps_writing_while_the_server_is_killed_and_restarted_twice(
    store: JournalStore,
) -> None:
    done = threading.Event()

    def writer() -> None:
        with open_store(store.url) as other:
            n = 0
            while not done.is_set():
                write(other, f"w{n % 3}", 1)
                n += 1

    write(store, "s1", 1)
    thread = threading.Thread(target=writer)
    thread.start()
    got: list[Delivery] = []
    cursor = 0
    try:
        for _ in range(3):  # two kills mid-stream, then a clean stop
            with ServerProcess(store.url) as server:
                subscription = RemoteSubscription(server.address, after=cursor)
                got += take(subscription, 5)
                server.kill()
                got += drain_until_broken(subscription)
                cursor = subscription.cursor
                subscription.close()
    finally:
        done.set()
        thread.join(TIMEOUT)
    with ServerProcess(store.url) as server, RemoteSubscription(server.address, after=cursor) as last:
        got += take(last, len(feed_keys(store)) - len(got))
        assert last.next(timeout=0) is None
        server.stop()
    assert [d.key for d in got] == feed_keys(store)  # nothing missed, nothing twice


# --- the transport, against a scripted peer on a real socket --------------------------------------


class Peer:
    """A feed server played by the test: it accepts one subscriber and sends exactly what it is told."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = ("127.0.0.1", self.listener.getsockname()[1])
        self.connection: socket.socket | None = None

    def accept(self) -> bytes:
        """Accept the subscriber; returns its hello line."""
        self.connection, _ = self.listener.accept()
        hello = b""
        while not hello.endswith(b"\n"):
            hello += self.connection.recv(1)
        return hello

    def send(self, data: bytes) -> None:
        assert self.connection is not None
        self.connection.sendall(data)

    def reset(self) -> None:
        """Close with a TCP reset (SO_LINGER 0), as a crashed host's kernel may."""
        assert self.connection is not None
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        self.connection.close()

    def close(self) -> None:
        if self.connection is not None:
            self.connection.close()
        self.listener.close()


@pytest.fixture
def peer() -> Iterator[Peer]:
    scripted = Peer()
    yield scripted
    scripted.close()


def a_delivery(position: int = 1) -> bytes:
    new = NewRecord(id="h", at=AT, body=Header(journal="s1", creator="tests"))
    _record, line = seal(1, new, GENESIS_DIGEST)
    message = {"position": position, "journal_id": "s1", "seq": 1, "line": line.decode()}
    return json.dumps(message).encode() + b"\n"


def test_a_timed_out_next_keeps_a_half_received_delivery_and_the_subscription_usable(peer: Peer) -> None:
    with RemoteSubscription(peer.address) as subscription:
        assert json.loads(peer.accept()) == {"after": 0, "journals": None}
        message = a_delivery()
        peer.send(message[:40])
        assert subscription.next(timeout=0.05) is None  # cancelled mid-frame
        assert subscription.next(timeout=0) is None
        peer.send(message[40:])
        delivery = subscription.next(timeout=TIMEOUT)
        assert delivery is not None
        assert delivery.position == 1
        subscription.ack(1)
        assert subscription.cursor == 1


def test_an_idle_iteration_waits_past_the_connect_timeout_until_a_delivery_or_close(peer: Peer) -> None:
    subscription = RemoteSubscription(peer.address, timeout=0.05)
    peer.accept()
    received: list[Delivery] = []
    got_one = threading.Event()

    def iterate() -> None:
        for delivery in subscription:
            received.append(delivery)
            got_one.set()

    reader = threading.Thread(target=iterate)
    reader.start()
    reader.join(0.5)  # ten times the connect timeout: an iteration with a hidden read timeout ends here
    assert reader.is_alive()
    peer.send(a_delivery())
    assert got_one.wait(TIMEOUT)
    subscription.close()  # from another thread: the waiting iteration ends
    reader.join(TIMEOUT)
    assert not reader.is_alive()
    assert [d.position for d in received] == [1]


def test_a_reset_connection_is_a_bridge_error_on_next_and_ack(peer: Peer) -> None:
    with RemoteSubscription(peer.address) as subscription:
        peer.accept()
        peer.send(a_delivery())
        assert subscription.next(timeout=TIMEOUT) is not None
        peer.reset()
        with pytest.raises(BridgeError, match="subscribe again with after=0"):
            subscription.next(timeout=TIMEOUT)
        with pytest.raises(BridgeError):
            subscription.ack(1)
        assert subscription.cursor == 1  # the ack counts where the next subscription starts


def test_a_message_that_is_not_a_delivery_is_a_bridge_error(peer: Peer) -> None:
    with RemoteSubscription(peer.address) as subscription:
        peer.accept()
        peer.send(b'{"position": 1, "journal_id": "s1", "seq": 1, "line": "{}"}\n')
        with pytest.raises(BridgeError, match="not a delivery"):
            subscription.next(timeout=TIMEOUT)
        with pytest.raises(BridgeError):
            subscription.next(timeout=0)


def test_a_server_that_is_not_there_is_a_bridge_error(peer: Peer) -> None:
    address = peer.address
    peer.close()
    with pytest.raises(BridgeError, match="cannot reach the feed server"):
        RemoteSubscription(address)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"address": "127.0.0.1:80"}, "address="),
        ({"after": -1}, "after="),
        ({"timeout": "soon"}, "timeout"),
    ],
)
def test_bad_arguments_are_typed_errors(peer: Peer, arguments: dict[str, object], message: str) -> None:
    given: dict[str, object] = {"address": peer.address, **arguments}
    with pytest.raises(StoreArgumentError, match=message):
        RemoteSubscription(**given)  # type: ignore[arg-type]
    with RemoteSubscription(peer.address) as subscription, pytest.raises(StoreArgumentError):
        subscription.next(timeout=float("nan"))
