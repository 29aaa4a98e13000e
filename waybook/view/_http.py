"""The HTTP/1.1 that `waybook serve` speaks: request heads read within bounds, and responses written.

A read-only page server needs little of HTTP, and what it takes from a client is bounded: one request
head of at most `MAX_HEAD` bytes and `MAX_FIELDS` header lines, CRLF-framed; no body is ever read. A
head that breaks a rule is a `BadRequestError` carrying the status to answer (400, 431 or 505), and the
connection closes after the answer. Parsing is a pure function of the head's bytes (`parse_head`).
"""

from __future__ import annotations

import re
from http import HTTPStatus
from typing import Final

import attrs

MAX_HEAD: Final = 64 << 10
"""The largest request head (request line and header fields) read; more is 431."""
MAX_FIELDS: Final = 100
"""The most header lines one request may have; more is 431."""
HEAD_END: Final = b"\r\n\r\n"

_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_VERSION = re.compile(r"HTTP/(\d)\.(\d)")
_FIELD_VALUE = re.compile(r"[\t\x20-\x7e\x80-\xff]*")


class BadRequestError(ValueError):
    """A request this server does not take: `status` is the answer, the message says why."""

    def __init__(self, status: HTTPStatus, why: str) -> None:
        self.status = status
        super().__init__(why)


@attrs.frozen
class Request:
    """One request head: the method, the target as sent, the HTTP version, and the header fields (their
    names lower-cased, in the order sent; a name sent twice is there twice)."""

    method: str
    target: str
    version: tuple[int, int]
    fields: tuple[tuple[str, str], ...]

    def values(self, name: str) -> list[str]:
        """Every value sent for the header `name` (lower case)."""
        return [value for key, value in self.fields if key == name]

    def header(self, name: str) -> str | None:
        """The value of the header `name` (lower case) when it was sent once, else None."""
        values = self.values(name)
        return values[0] if len(values) == 1 else None

    @property
    def has_body(self) -> bool:
        """Whether a body follows the head (a Transfer-Encoding, or a Content-Length other than 0)."""
        lengths = self.values("content-length")
        return bool(self.values("transfer-encoding")) or any(v.strip() != "0" for v in lengths)

    @property
    def keep_alive(self) -> bool:
        """Whether the client may send another request on this connection (HTTP/1.1, no `close`)."""
        tokens = {t.strip().lower() for value in self.values("connection") for t in value.split(",")}
        return self.version >= (1, 1) and "close" not in tokens


def parse_head(head: bytes) -> Request:
    """The request whose head (without its final empty line) is `head`, or a `BadRequestError`."""
    text = head.decode("latin-1")
    lines = text.split("\r\n")
    while lines and lines[0] == "":  # an empty line before a request line is ignored (RFC 9112 2.2)
        lines.pop(0)
    if not lines:
        raise BadRequestError(HTTPStatus.BAD_REQUEST, "no request line")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not _TOKEN.fullmatch(parts[0]) or not parts[1]:
        raise BadRequestError(HTTPStatus.BAD_REQUEST, "the request line is not METHOD TARGET HTTP/1.1")
    method, target, version_text = parts
    version = _VERSION.fullmatch(version_text)
    if version is None:
        raise BadRequestError(HTTPStatus.BAD_REQUEST, f"not an HTTP version: {version_text[:20]!r}")
    if version.group(1) != "1":
        raise BadRequestError(HTTPStatus.HTTP_VERSION_NOT_SUPPORTED, "this server speaks HTTP/1.1")
    if any(ord(ch) <= 0x20 or ord(ch) >= 0x7F for ch in target):
        raise BadRequestError(HTTPStatus.BAD_REQUEST, "the target holds a space or a control character")
    if len(lines) - 1 > MAX_FIELDS:
        why = f"more than {MAX_FIELDS} header lines"
        raise BadRequestError(HTTPStatus.REQUEST_HEADER_FIELDS_TOO_LARGE, why)
    fields = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not _TOKEN.fullmatch(name):  # obs-fold and "name :" are refused (RFC 9112 5)
            raise BadRequestError(HTTPStatus.BAD_REQUEST, f"not a header line: {line[:40]!r}")
        value = value.strip(" \t")
        if not _FIELD_VALUE.fullmatch(value):
            raise BadRequestError(HTTPStatus.BAD_REQUEST, f"a control character in the {name} header")
        fields.append((name.lower(), value))
    return Request(method=method, target=target, version=(1, int(version.group(2))), fields=tuple(fields))


def response_head(status: HTTPStatus, headers: list[tuple[str, str]]) -> bytes:
    """The status line and header fields of a response, with the empty line that ends them."""
    lines = [f"HTTP/1.1 {status.value} {status.phrase}", *(f"{name}: {value}" for name, value in headers)]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")
