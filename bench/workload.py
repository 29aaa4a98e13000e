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
