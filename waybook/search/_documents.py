"""What of a record is searchable: its text, who said it, and its kind (pure; no storage here)."""

from __future__ import annotations

import attrs
import msgspec

from waybook.model import (
    AssistantMessage,
    Body,
    Compaction,
    Content,
    CustomEntry,
    MemoryWrite,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)


@attrs.frozen
class Document:
    text: str
    role: str
    """Who wrote it: user, assistant, system, tool, summary (a compaction), memory, or custom."""


def document_of(body: Body) -> Document | None:
    """The searchable text of a record body, or None for records with nothing to search."""
    if isinstance(body, UserMessage):
        return _doc(_content(body.content), "user")
    if isinstance(body, AssistantMessage):
        return _doc(_content(body.content), "assistant")
    if isinstance(body, SystemMessage):
        return _doc(_content(body.content), "system")
    if isinstance(body, ToolResult):
        return _doc(" ".join(filter(None, [body.tool_name, _content(body.content)])), "tool")
    if isinstance(body, Compaction):
        return _doc(body.summary, "summary")
    if isinstance(body, MemoryWrite):
        return _doc(f"{body.path}\n{body.text}", "memory")
    if isinstance(body, CustomEntry) and body.content:
        return _doc(_content(body.content), "custom")
    return None


def _doc(text: str, role: str) -> Document | None:
    return Document(text, role) if text.strip() else None


def _content(content: Content) -> str:
    parts: list[str] = []
    for block in content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ThinkingBlock) and not block.redacted:
            parts.append(block.thinking)
        elif isinstance(block, ToolCallBlock):
            parts.append(f"{block.name} {msgspec.json.encode(block.arguments).decode()}")
    return "\n".join(parts)
