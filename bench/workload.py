"""Deterministic synthetic sessions for benchmarks: alternating ~300-byte user and assistant entries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from waybook.journal import AssistantMessage, Header, NewRecord, UserMessage, text

AT = "2026-12-01T09:00:00.000Z"
WORDS = "the agent read the file, ran the tests and summarised what failed and why it failed "


def session_records(n: int, *, header: bool = True) -> Iterator[NewRecord]:
    """A header, then n-1 chat nodes of about 300 bytes each, each the child of the one before."""
    if header:
        yield NewRecord(id="h", at=AT, body=Header(journal="bench", creator="bench"))
        n -= 1
    parent: str | None = None
    for i in range(n):
        rid = f"n{i:08d}"
        words = text(f"{i}: {WORDS * 2}"[:170])
        body = (
            UserMessage(parent=parent, content=words)
            if i % 2 == 0
            else AssistantMessage(parent=parent, content=words, stop_reason="end_turn", model="m-1")
        )
        yield NewRecord(id=rid, at=AT, body=body)
        parent = rid


def write_journal_file(path: Path, n: int) -> list[bytes]:
    """A valid n-record journal file, sealed directly (fast), and its lines."""
    from waybook.codecs._wire import seal
    from waybook.model._head import GENESIS_DIGEST

    lines: list[bytes] = []
    prev = GENESIS_DIGEST
    with path.open("wb") as out:
        for seq, new in enumerate(session_records(n), start=1):
            record, line = seal(seq, new, prev)
            prev = record.digest
            out.write(line + b"\n")
            if len(lines) < 200_000:
                lines.append(line)
    return lines


def proof_floor(path: Path) -> int:
    """The work no full proof of `path` can skip, inline, as a floor row's value (not an adapter).

    Read the file as an open does (128 KiB preads, lines found with `BytesIO.readlines`, a partial
    last line carried to the next chunk), decode each chunk's lines to typed records (msgspec, one C
    call), hash each line's covered bytes with SHA-256 (OpenSSL, one call per line: under 2 KiB hashlib
    keeps the GIL) and compare every digest and prev: the chain alone. No session rules, batches,
    offsets, damage reporting, lock or journal object. Returns the record count; raises if the chain
    breaks.
    """
    import hashlib
    import os
    from io import BytesIO
    from itertools import repeat
    from operator import add, attrgetter, getitem

    import msgspec

    from waybook.journal import Record
    from waybook.model._head import GENESIS_DIGEST

    decode_lines = msgspec.json.Decoder(Record).decode_lines
    covered = slice(None, -(len(b',"digest":"') + 64 + len(b'"}\n')))  # the line but its digest
    sha256, hexdigest = hashlib.sha256, type(hashlib.sha256()).hexdigest
    digest, prev = attrgetter("digest"), attrgetter("prev")
    last, count, pos, carry = GENESIS_DIGEST, 0, 0, b""
    fd = os.open(path, os.O_RDONLY)
    try:
        while chunk := os.pread(fd, 1 << 17, pos):
            pos += len(chunk)
            data = carry + chunk if carry else chunk
            lines = BytesIO(data).readlines()
            carry = b"" if lines[-1].endswith(b"\n") else lines.pop()
            if not lines:
                continue
            records = decode_lines(memoryview(data)[: len(data) - len(carry)])
            digests = list(map(digest, records))
            hashed = map(sha256, map(add, map(getitem, lines, repeat(covered)), repeat(b"}")))
            if list(map(hexdigest, hashed)) != digests or list(map(prev, records)) != [last, *digests[:-1]]:
                msg = f"{path}: the chain does not hold"
                raise ValueError(msg)
            last, count = digests[-1], count + len(records)
    finally:
        os.close(fd)
    if carry:
        msg = f"{path}: the last line has no newline"
        raise ValueError(msg)
    return count
