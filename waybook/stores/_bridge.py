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

import socket
import socketserver
import threading
from collections import deque
from collections.abc import Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Final, Self

import msgspec

from waybook.codecs._wire import decode_record, encode_record, line_digest
from waybook.model._errors import DecodeError, JournalError
from waybook.stores._catalog import check_timeout
from waybook.stores._errors import StoreArgumentError
from waybook.stores._subscribe import Cursor, Delivery, Subscription, subscribe

if TYPE_CHECKING:
    from waybook.stores._protocol import JournalStore

WINDOW: Final = 64
MAX_LINE: Final = 16 * 1024 * 1024


class BridgeError(JournalError):
    """The feed bridge's peer broke the protocol or went away."""


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


class FeedServer:
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

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


class RemoteSubscription:
    """The subscriber side of a `FeedServer`: deliveries after `after`, acknowledged over the socket."""

    def __init__(
        self,
        address: tuple[str, int],
        after: int = 0,
        *,
        journals: list[str] | None = None,
        timeout: float = 10.0,
    ) -> None:
        self._state = Cursor(after)
        self._socket = socket.create_connection(address, timeout=timeout)
        self._reader = self._socket.makefile("rb")
        hello = _Hello(after=after, journals=journals)
        self._socket.sendall(msgspec.json.encode(hello) + b"\n")
        self._decoder = msgspec.json.Decoder(_Message)

    @property
    def cursor(self) -> int:
        return self._state.acked

    def ack(self, position: int) -> None:
        self._state.ack(position)
        self._socket.sendall(msgspec.json.encode(_Ack(position)) + b"\n")

    def next(self, timeout: float | None = None) -> Delivery | None:
        """The next delivery, or None when `timeout` passes first (None: the connection's timeout; past
        a year: no limit; 0 or less: a millisecond, a socket's shortest wait). NaN is refused."""
        if timeout is not None:
            seconds = check_timeout(timeout)
            self._socket.settimeout(None if seconds is None else max(seconds, 0.001))
        try:
            raw = self._reader.readline(MAX_LINE)
        except TimeoutError:
            return None
        if not raw:
            msg = "the feed server closed the connection; subscribe again with after=cursor"
            raise BridgeError(msg)
        try:
            message = self._decoder.decode(raw)
            line = message.line.encode()
            record = decode_record(line, where="feed bridge")
        except (msgspec.DecodeError, msgspec.ValidationError, DecodeError) as exc:
            msg = f"the feed server sent something that is not a delivery: {exc}"
            raise BridgeError(msg) from None
        if line_digest(line) != record.digest or record.seq != message.seq:
            msg = f"the feed server sent position {message.position} whose record does not prove itself"
            raise BridgeError(msg)
        delivery = Delivery(message.journal_id, message.seq, message.position, record)
        self._state.delivering(delivery.position)
        return delivery

    def __iter__(self) -> Iterator[Delivery]:
        while (delivery := self.next()) is not None:
            yield delivery

    def close(self) -> None:
        self._reader.close()
        self._socket.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
