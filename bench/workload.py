"""Deterministic synthetic sessions for benchmarks: alternating ~300-byte user and assistant entries."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from waybook.model import AssistantMessage, Header, NewRecord, UserMessage, text

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

    from waybook.model import Record
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


def shape_records(n: int, *, branchy: bool) -> Iterator[NewRecord]:
    """A header and n-1 records of a chat session of one of two shapes, each record about 300 bytes.

    `branchy`: the deep branchy shape (issue 50): each level a user question, an assistant answer, a
    leaf move back to the question and a second answer, and the next level's question under the second
    answer, so every level leaves a branch and the tree is as deep as it is long. Otherwise a linear
    session: user and assistant turns alternating, each the child of the one before. Ids are 16 hex
    digits like a Session's; timestamps a second apart (replies have a latency); assistant turns
    record a model and usage.
    """
    import hashlib
    from datetime import datetime, timedelta

    from waybook.model import LeafMoved

    start = datetime(2026, 12, 1, 9, 0, 0)

    def at(i: int) -> str:
        return (start + timedelta(seconds=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def rid(i: int) -> str:
        return hashlib.sha256(i.to_bytes(8, "big")).hexdigest()[:16]

    def answer(i: int, parent: str) -> AssistantMessage:
        words = text(f"{i}: {WORDS * 2}"[:150])
        usage = {"input_tokens": 1000 + i % 97, "output_tokens": 40 + i % 13}
        return AssistantMessage(
            parent=parent, content=words, stop_reason="end_turn", model="m-1", usage=usage
        )

    yield NewRecord(id=rid(0), at=at(0), body=Header(journal="bench", creator="bench"))
    parent: str | None = None
    i = 1
    while i < n:
        question = rid(i)
        asked = UserMessage(parent=parent, content=text(f"{i}? {WORDS}"[:150]))
        yield NewRecord(id=question, at=at(i), body=asked)
        i += 1
        for step in ("answer",) if not branchy else ("answer", "move", "answer"):
            if i >= n:
                return
            body: Any = (
                answer(i, question)
                if step == "answer"
                else LeafMoved(from_leaf=rid(i - 1), to_leaf=question, reason="try again")
            )
            yield NewRecord(id=rid(i), at=at(i), body=body)
            parent = rid(i)
            i += 1


def write_shape_file(path: Path, n: int, *, branchy: bool) -> None:
    """A valid n-record journal file of `shape_records`, sealed directly (fast)."""
    from waybook.codecs._wire import seal
    from waybook.model._head import GENESIS_DIGEST

    prev = GENESIS_DIGEST
    with path.open("wb") as out:
        for seq, new in enumerate(shape_records(n, branchy=branchy), start=1):
            record, line = seal(seq, new, prev)
            prev = record.digest
            out.write(line + b"\n")
