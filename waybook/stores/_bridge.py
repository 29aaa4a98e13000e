"""A feed bridge over TCP: a subscriber in another process receives deliveries through a socket.

`FeedServer(store)` listens on 127.0.0.1 and serves each connection with `store.subscribe`;
`RemoteSubscription(address, after=cursor)` is the subscriber side, with the same `next`, iteration,
`ack` and `cursor` as a local `Subscription`. The wire is JSON lines:

    client: {"after": 12, "journals": ["s1"]}      (once; `journals` optional)
    server: {"position": 13, "journal_id": "s1", "seq": 4, "line": "<the record's canonical line>"}
    client: {"ack": 13}

The server keeps at most `window` deliveries unacknowledged on a connection, so a slow subscriber
slows its own stream and nothing else. The client decodes every message as data (an allow-list of
fields and types), decodes the record line with the native codec and checks its digest: a peer cannot
hand it anything but a proved record.
"""

from __future__ import annotations

import contextlib
import selectors
import socket
import socketserver
import threading
import time
from collections import deque
from collections.abc import Iterator
from typing import TYPE_CHECKING, Final

import msgspec

from waybook.codecs import decode_record, encode_record, line_digest
from waybook.journal import ClosedOnExit
from waybook.model import DecodeError, JournalError
from waybook.stores._catalog import check_timeout
from waybook.stores._errors import StoreArgumentError
from waybook.stores._subscribe import Cursor, Delivery, Subscription, subscribe

if TYPE_CHECKING:
    from waybook.stores._protocol import JournalStore

WINDOW: Final = 64
MAX_LINE: Final = 16 * 1024 * 1024


class BridgeError(JournalError):
    """The feed bridge's connection failed: the server went away or reset it, could not be reached, or
    sent something that is not a delivery. Subscribe again with `after=cursor`."""


class _Hello(msgspec.Struct, forbid_unknown_fields=True):
    after: int = 0
    journals: list[str] | None = None


class _Ack(msgspec.Struct, forbid_unknown_fields=True):
    ack: int


class _Message(msgspec.Struct, forbid_unknown_fields=True):
    position: int
    journal_id: str
    seq: int
    line: str


class _Flow:
    """One connection's flow control: the positions sent and not yet acknowledged."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.inflight: deque[int] = deque()
        self.gone = False

    def sent(self, position: int) -> None:
        with self.changed:
            self.inflight.append(position)

    def acked(self, position: int) -> None:
        with self.changed:
            while self.inflight and self.inflight[0] <= position:
                self.inflight.popleft()
            self.changed.notify_all()

    def wait_for_room(self, window: int) -> None:
        with self.changed:
            while not self.gone and len(self.inflight) >= window:
                self.changed.wait(0.25)

    def hang_up(self) -> None:
        with self.changed:
            self.gone = True
            self.changed.notify_all()


class _Handler(socketserver.StreamRequestHandler):
    server: _Server

    def handle(self) -> None:
        try:
            hello = msgspec.json.decode(self.rfile.readline(MAX_LINE), type=_Hello)
        except (msgspec.DecodeError, msgspec.ValidationError):
            return
        if hello.after < 0:
            return
        journals = None if hello.journals is None else frozenset(hello.journals)
        subscription = subscribe(self.server.store, hello.after, filter=journals)
        flow = _Flow()
        reader = threading.Thread(target=self._read_acks, args=(subscription, flow), daemon=True)
        reader.start()
        try:
            while not self.server.closing.is_set() and not flow.gone:
                delivery = subscription.next(timeout=0.25)
                if delivery is None:
                    continue
                flow.wait_for_room(self.server.window)
                line = encode_record(delivery.record).decode()
                message = _Message(delivery.position, delivery.journal_id, delivery.seq, line)
                flow.sent(delivery.position)
                self.wfile.write(msgspec.json.encode(message) + b"\n")
                self.wfile.flush()
        except (OSError, ValueError):
            pass  # the subscriber went away; it resumes from its cursor
        finally:
            subscription.close()
            flow.hang_up()

    def _read_acks(self, subscription: Subscription, flow: _Flow) -> None:
        try:
            for raw in self.rfile:
                ack = msgspec.json.decode(raw, type=_Ack)
                subscription.ack(ack.ack)  # refuses a position never delivered: the connection ends
                flow.acked(ack.ack)
        except (OSError, ValueError, JournalError, msgspec.DecodeError, msgspec.ValidationError):
            pass
        finally:
            flow.hang_up()


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], store: JournalStore, window: int) -> None:
        self.store = store
        self.window = window
        self.closing = threading.Event()
        super().__init__(address, _Handler)


class FeedServer(ClosedOnExit):
    """Serves `store`'s feed to subscribers in other processes, on 127.0.0.1 by default."""

    def __init__(
        self, store: JournalStore, *, host: str = "127.0.0.1", port: int = 0, window: int = WINDOW
    ) -> None:
        if type(window) is not int or window < 1:
            msg = f"window= is how many deliveries may wait for an ack (an int >= 1), not {window!r}"
            raise StoreArgumentError(msg)
        self._server = _Server((host, port), store, window)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.1,), daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def close(self) -> None:
        self._server.closing.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


class RemoteSubscription(ClosedOnExit):
    """The subscriber side of a `FeedServer`: deliveries after `after`, acknowledged over the socket.

    Like a local `Subscription`: `next(timeout)` waits up to `timeout` seconds (None: until a delivery
    comes or `close`) and a timed-out `next` leaves the subscription as it was (a message half received
    stays buffered for the next call); iteration waits for deliveries as long as it takes and ends on
    `close` (also from another thread). `timeout` bounds connecting and each send, never a wait for a
    delivery.

    Every transport failure is a BridgeError (the server gone, a reset, a refused connection, a
    message that is not a delivery); after one, every call raises it again. Subscribe again with
    `after=subscription.cursor` (the last acknowledged position: an `ack` counts there even when the
    server is gone) and nothing is missed.
    """

    def __init__(
        self,
        address: tuple[str, int],
        after: int = 0,
        *,
        journals: list[str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._state = Cursor(_check_after(after))
        seconds = check_timeout(timeout)
        self._address = _check_address(address)
        self._pending = bytearray()
        self._failure: str | None = None
        self._closed = False
        self._busy = False  # a `next` is running: `close` leaves releasing the sockets to it
        self._released = False
        self._lock = threading.Lock()
        self._decoder = msgspec.json.Decoder(_Message)
        self._wake_reader, self._wake_writer = socket.socketpair()
        try:
            self._socket = socket.create_connection(self._address, timeout=seconds)
        except OSError as exc:
            self._close_wake()
            msg = f"cannot reach the feed server at {self._where}: {_reason(exc)}; is it running?"
            raise BridgeError(msg) from exc
        self._selector = selectors.DefaultSelector()
        self._selector.register(self._socket, selectors.EVENT_READ)
        self._selector.register(self._wake_reader, selectors.EVENT_READ)
        self._send(msgspec.json.encode(_Hello(after=after, journals=journals)) + b"\n")

    @property
    def _where(self) -> str:
        return f"{self._address[0]}:{self._address[1]}"

    @property
    def cursor(self) -> int:
        """Where to subscribe again (`after=`) to miss nothing: the last acknowledged position."""
        return self._state.acked

    @property
    def closed(self) -> bool:
        return self._closed

    def ack(self, position: int) -> None:
        """Acknowledge every delivery up to `position` as processed. The cursor moves at once; sending
        the ack to a server that is gone raises BridgeError."""
        self._state.ack(position)
        if self._closed:
            return
        self._raise_if_failed()
        self._send(msgspec.json.encode(_Ack(position)) + b"\n")

    def next(self, timeout: float | None = None) -> Delivery | None:
        """The next delivery, waiting up to `timeout` seconds (None: until one comes or `close`); None
        when the time passes first or the subscription is closed. BridgeError when the connection fails."""
        seconds = check_timeout(timeout)
        deadline = None if seconds is None else time.monotonic() + seconds
        with self._lock:
            if self._closed:
                return None
            self._busy = True
        try:
            while not self._closed:
                line = self._take_line()
                if line is not None:
                    return self._delivery(line)
                self._raise_if_failed()
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return None
                if self._readable(left):
                    self._receive()
            return None
        finally:
            with self._lock:
                self._busy = False
                release = self._closed
            if release:
                self._release()

    def __iter__(self) -> Iterator[Delivery]:
        while (delivery := self.next()) is not None:
            yield delivery

    def close(self) -> None:
        """End the subscription; a `next` waiting in another thread returns None."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            busy = self._busy
        with contextlib.suppress(OSError):
            self._wake_writer.send(b"x")
        if not busy:
            self._release()

    def _release(self) -> None:
        with self._lock:
            if self._released:
                return
            self._released = True
        with contextlib.suppress(OSError):
            self._socket.shutdown(socket.SHUT_RDWR)
        self._selector.close()
        self._socket.close()
        self._close_wake()

    def _close_wake(self) -> None:
        self._wake_reader.close()
        self._wake_writer.close()

    # --- the transport: every failure becomes a BridgeError ---------------------------------------

    def _readable(self, timeout: float | None) -> bool:
        try:
            events = self._selector.select(timeout)
        except (OSError, ValueError) as exc:  # the socket closed under a waiting call
            if not self._closed:
                self._fail(f"waiting for a delivery failed: {_reason(exc)}")
            return False
        return any(key.fileobj is self._socket for key, _mask in events)

    def _receive(self) -> None:
        try:
            data = self._socket.recv(RECEIVE_BYTES)
        except (BlockingIOError, InterruptedError, TimeoutError):
            return
        except OSError as exc:
            if not self._closed:
                self._fail(f"the connection failed: {_reason(exc)}")
            return
        if not data:
            if not self._closed:
                self._fail("the feed server closed the connection")
            return
        self._pending += data
        if len(self._pending) > MAX_LINE and b"\n" not in self._pending:
            self._fail(f"the feed server sent a message over {MAX_LINE:,} bytes")

    def _take_line(self) -> bytes | None:
        end = self._pending.find(b"\n")
        if end < 0:
            return None
        line = bytes(self._pending[:end])
        del self._pending[: end + 1]
        return line

    def _send(self, data: bytes) -> None:
        try:
            self._socket.sendall(data)
        except OSError as exc:  # BrokenPipeError, ConnectionResetError, TimeoutError, ...
            self._fail(f"sending to the feed server failed: {_reason(exc)}")
            self._raise_if_failed()

    def _fail(self, reason: str) -> None:
        if self._failure is None:
            self._failure = reason
            self._pending.clear()

    def _raise_if_failed(self) -> None:
        if self._failure is not None:
            msg = (
                f"feed server {self._where}: {self._failure}; subscribe again with "
                f"after={self.cursor} (the cursor) and nothing is missed"
            )
            raise BridgeError(msg)

    def _delivery(self, raw: bytes) -> Delivery:
        try:
            message = self._decoder.decode(raw)
            line = message.line.encode()
            record = decode_record(line, where="feed bridge")
        except (msgspec.DecodeError, msgspec.ValidationError, DecodeError) as exc:
            self._fail(f"it sent something that is not a delivery ({exc})")
            self._raise_if_failed()
            raise AssertionError from None  # unreachable: _raise_if_failed raised
        if line_digest(line) != record.digest or record.seq != message.seq:
            self._fail(f"it sent position {message.position}, whose record does not prove itself")
            self._raise_if_failed()
        delivery = Delivery(message.journal_id, message.seq, message.position, record)
        self._state.delivering(delivery.position)
        return delivery


RECEIVE_BYTES: Final = 256 * 1024
"""The most one read from the socket takes."""


def _check_address(address: object) -> tuple[str, int]:
    if (
        not isinstance(address, tuple)
        or len(address) != 2
        or not isinstance(address[0], str)
        or type(address[1]) is not int
    ):
        msg = f"address= is a feed server's (host, port), as FeedServer.address gives it, not {address!r:.60}"
        raise StoreArgumentError(msg)
    return address[0], address[1]


def _check_after(after: object) -> int:
    if type(after) is not int or after < 0:
        msg = f"after= is a feed position (an int >= 0, a subscription's cursor), not {after!r:.40}"
        raise StoreArgumentError(msg)
    return after


def _reason(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
