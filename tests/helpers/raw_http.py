"""HTTP/1.1 spoken by hand, for the tests of `waybook serve`: exact bytes out, every response counted back.

A client library fixes what it sends (one Host, no body on GET, CRLF everywhere); a red team does not.
`exchange` sends bytes and reads until the server closes; `responses` splits what came back into
(status, headers, body) using each response's Content-Length, so a second response is never missed.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable

import attrs


@attrs.frozen
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


def connect(address: tuple[str, int], *, timeout: float = 30.0) -> socket.socket:
    family = socket.AF_INET6 if ":" in address[0] else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    sock.connect(address)
    return sock


def read_to_end(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a reset ends it too)."""
    chunks = []
    while True:
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def exchange(
    address: tuple[str, int], data: bytes, *, timeout: float = 30.0, bodies: bool = True
) -> list[Answer]:
    """Send `data` on a new connection, and return every response until the server closes it
    (`bodies=False`: answers to HEAD, which name a length but send no body)."""
    with connect(address, timeout=timeout) as sock:
        sock.sendall(data)
        return responses(read_to_end(sock), bodies=bodies)


def responses(data: bytes, *, bodies: bool = True) -> list[Answer]:
    """The responses in `data`, in order; a response cut short is an AssertionError."""
    found = []
    while data:
        head, sep, rest = data.partition(b"\r\n\r\n")
        assert sep, f"a response head cut short: {data[:200]!r}"
        status_line, *lines = head.decode("latin-1").split("\r\n")
        headers = {}
        for line in lines:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0")) if bodies else 0
        assert len(rest) >= length, "a response body cut short"
        found.append(Answer(int(status_line.split(" ")[1]), headers, rest[:length]))
        data = rest[length:]
    return found


def request(method: str, target: str, host: str, *, fields: tuple[str, ...] = (), body: bytes = b"") -> bytes:
    """One request's bytes: its line, `Host: host` (none if empty), `fields` as given, then `body`."""
    lines = [f"{method} {target} HTTP/1.1", *([f"Host: {host}"] if host else []), *fields]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


def wait_until(condition: Callable[[], bool], what: str, *, within: float = 60.0) -> None:
    """Poll for `condition` (a state of the server, never the passing of time), `within` seconds at most."""
    deadline = time.monotonic() + within
    while not condition():
        assert time.monotonic() < deadline, f"{what}: not within {within:.0f} s"
        time.sleep(0.002)
