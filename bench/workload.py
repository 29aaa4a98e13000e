"""Deterministic synthetic sessions for benchmarks: alternating ~300-byte user and assistant entries."""

from __future__ import annotations

from collections.abc import Iterator

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
