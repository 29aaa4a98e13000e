"""A TCP proxy that cuts every connection through it at a chosen moment, for lost-reply tests.

Each chunk the proxy forwards (in either direction) is a step. `arm(step)` makes the proxy drop every
connection, without forwarding, when it reaches that step counted from now: step 1 is the first chunk
after arming. `cut_after_forwarding=True` forwards the chunk first and then cuts, so the server
receives a statement (say, the one with COMMIT) and the client never hears the answer.

A cut after forwarding closes the server side gently (a FIN after the data, never a reset, which could
make the server drop what it had not read yet), and `disarm` waits until the server has read it all and
closed: so whatever was forwarded is processed before the test looks at the database.
"""

from __future__ import annotations

import contextlib
import socket
import threading


class Cutter:
    def __init__(self, host: str, port: int) -> None:
        self._target = (host, port)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port: int = self._listener.getsockname()[1]
        self._lock = threading.Lock()
        self._sockets: set[socket.socket] = set()
        self._servers: set[socket.socket] = set()
        self._draining: list[threading.Thread] = []
        self._armed: int | None = None
        self._forward_first = False
        self._marker: bytes | None = None
        self.cuts: list[str] = []  # the direction of the chunk each cut landed on
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def arm(self, step: int, *, cut_after_forwarding: bool = False) -> None:
        with self._lock:
            self._armed = step
            self._forward_first = cut_after_forwarding

    def arm_on(self, marker: bytes) -> None:
        """Cut after forwarding the next chunk to the server that contains `marker` (b"COMMIT": the
        server commits, the client never hears so)."""
        with self._lock:
            self._marker = marker

    def disarm(self) -> bool:
        """Stop cutting; True if the armed cut never happened. Waits (up to 30 s) until every server
        connection cut after forwarding has been read to its end by the server and closed."""
        with self._lock:
            missed = self._armed is not None or self._marker is not None
            self._armed = self._marker = None
            draining, self._draining = self._draining, []
        for thread in draining:
            thread.join(timeout=30)
        return missed

    def close(self) -> None:
        self._closed = True
        self._listener.close()
        self._cut_all()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            try:
                server = socket.create_connection(self._target)
            except OSError:
                client.close()
                continue
            with self._lock:
                self._sockets |= {client, server}
                self._servers.add(server)
            threading.Thread(target=self._pump, args=(client, server, "to server"), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, "to client"), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, direction: str) -> None:
        while True:
            try:
                chunk = source.recv(65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            with self._lock:
                cut = False
                if self._marker is not None and direction == "to server" and self._marker in chunk:
                    self._marker = None
                    self.cuts.append(direction)
                    sink.sendall(chunk)
                    self._cut_all_locked(gently=True)
                    return
                if self._armed is not None:
                    self._armed -= 1
                    cut = self._armed == 0
                    if cut:
                        self._armed = None
                        self.cuts.append(direction)
                forward = not cut or self._forward_first
            if forward:
                try:
                    sink.sendall(chunk)
                except OSError:
                    break
            if cut:
                self._cut_all(gently=forward)
                return
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def _cut_all(self, *, gently: bool = False) -> None:
        with self._lock:
            self._cut_all_locked(gently=gently)

    def _cut_all_locked(self, *, gently: bool = False) -> None:
        """Drop every connection. `gently`: the server sides get a FIN and are read to their end, so
        the server processes all it was sent; the client sides are closed at once either way."""
        sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            if gently and sock in self._servers:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_WR)
                drain = threading.Thread(target=self._drain, args=(sock,), daemon=True)
                drain.start()
                self._draining.append(drain)
                continue
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        self._servers.clear()

    @staticmethod
    def _drain(sock: socket.socket) -> None:
        """Read (and discard) until the server closes, then close."""
        with contextlib.suppress(OSError):
            sock.settimeout(30)
            while sock.recv(65536):
                pass
        sock.close()
