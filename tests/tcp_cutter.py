"""A TCP proxy that cuts every connection through it at a chosen moment, for lost-reply tests.

Each chunk the proxy forwards (in either direction) is a step. `arm(step)` makes the proxy drop every
connection, without forwarding, when it reaches that step counted from now: step 1 is the first chunk
after arming. `cut_after_forwarding=True` forwards the chunk first and then cuts, so the server
receives a statement (say, the one with COMMIT) and the client never hears the answer.
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
        """Stop cutting; True if the armed cut never happened."""
        with self._lock:
            missed = self._armed is not None or self._marker is not None
            self._armed = self._marker = None
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
                    self._cut_all_locked()
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
                self._cut_all()
                return
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)

    def _cut_all(self) -> None:
        with self._lock:
            self._cut_all_locked()

    def _cut_all_locked(self) -> None:
        sockets, self._sockets = self._sockets, set()
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
