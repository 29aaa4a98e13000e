"""Record builders that keep the contract tests reading like the spec (the tests' builders reuse them)."""

from __future__ import annotations

from collections.abc import Iterator

from waybook.journal import (
    AssistantMessage,
    Header,
    LeafMoved,
    NewRecord,
    Reset,
    UserMessage,
    text,
)

AT = "2026-12-01T09:00:00.000Z"
"""The one timestamp every built record carries: only `seq` orders records, never `at`."""


def header(record_id: str = "h", journal: str = "test") -> NewRecord:
    return NewRecord(id=record_id, at=AT, body=Header(journal=journal, creator="tests"))


def user(record_id: str, parent: str | None, words: str = "hello") -> NewRecord:
    return NewRecord(id=record_id, at=AT, body=UserMessage(parent=parent, content=text(words)))


def assistant(
    record_id: str, parent: str | None, words: str = "hi", stop: str | None = "end_turn"
) -> NewRecord:
    return NewRecord(
        id=record_id, at=AT, body=AssistantMessage(parent=parent, content=text(words), stop_reason=stop)
    )


def move(record_id: str, frm: str | None, to: str | None, reason: str = "retry") -> NewRecord:
    return NewRecord(id=record_id, at=AT, body=LeafMoved(from_leaf=frm, to_leaf=to, reason=reason))


def reset(record_id: str) -> NewRecord:
    return NewRecord(id=record_id, at=AT, body=Reset(reason="new topic"))


def chat(n: int, *, start_parent: str | None = None, prefix: str = "m") -> Iterator[NewRecord]:
    """n alternating user/assistant nodes, each the child of the one before."""
    parent = start_parent
    for i in range(n):
        rid = f"{prefix}{i}"
        yield user(rid, parent, f"question {i}") if i % 2 == 0 else assistant(rid, parent, f"answer {i}")
        parent = rid
