"""Record builders that keep the contract tests reading like the spec (the tests' builders reuse them)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Final

from waybook.model import (
    Annotation,
    AssistantMessage,
    Compaction,
    CustomEntry,
    Header,
    LeafMoved,
    NewRecord,
    Reset,
    SystemMessage,
    ToolCallBlock,
    ToolResult,
    UserMessage,
    text,
)
from waybook.model import AnyBody as Body

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


def _details(kind: type, **fields: object) -> Callable[[object, str | None], Body]:
    return lambda value, parent: kind(parent=parent, details={"deep": [value]}, **fields)


FREE_FIELDS: Final[dict[str, tuple[Callable[[object, str | None], Body], str]]] = {
    "header metadata": (
        lambda value, _parent: Header(journal="test", creator="tests", metadata={"deep": [value]}),
        "metadata.deep[0]",
    ),
    "user details": (_details(UserMessage, content=text("u")), "details.deep[0]"),
    "assistant details": (
        _details(AssistantMessage, content=text("a"), stop_reason="end_turn"),
        "details.deep[0]",
    ),
    "system details": (_details(SystemMessage, content=text("s")), "details.deep[0]"),
    "tool result details": (_details(ToolResult, call_id="c1", content=text("out")), "details.deep[0]"),
    "compaction details": (_details(Compaction, summary="so far", first_kept=None), "details.deep[0]"),
    "custom data": (
        lambda value, parent: CustomEntry(parent=parent, type="tests.note", data={"deep": [value]}),
        "data.deep[0]",
    ),
    "tool call arguments": (
        lambda value, parent: AssistantMessage(
            parent=parent,
            content=(ToolCallBlock(call_id="c1", name="tool", arguments={"deep": [value]}),),
            stop_reason="tool_use",
        ),
        "content[0].arguments.deep[0]",
    ),
    "annotation data": (
        lambda value, parent: Annotation(target=parent or "", type="tests.note", data={"deep": [value]}),
        "data.deep[0]",
    ),
}
"""Every free-form field of a body (what JSON data goes in), each as a builder that puts `value` one
level down in it (`(value, parent) -> body`) and the path a refusal names. A header goes first in an
empty journal; an annotation needs `parent` to be a node."""
