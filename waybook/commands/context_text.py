"""`waybook show --context` as text: every message the model sees, its tool calls and their results.

Each message is a bold role line, then its blocks: text as it is; thinking as a marker with its size
(`[thinking: 1,204 characters]`, `[thinking: redacted]`); a tool call as `-> name(arguments)` with the
arguments shortened to one line; a tool result under a line naming the call it answers; images and blobs
as markers; a custom entry without content (a LangGraph checkpoint) as its type and data, shortened.
Session text goes through `visible`, so it never reaches a terminal raw.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import Final

from waybook.commands.layout import cut, width
from waybook.commands.terminal import visible
from waybook.model import (
    AssistantMessage,
    BlobBlock,
    Block,
    CustomEntry,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
)
from waybook.projections import ContextMessage

ARGUMENT_CHARS: Final = 200
"""The most characters of a tool call's arguments shown (into a pipe; a terminal cuts to its width)."""


def write_context(messages: Sequence[ContextMessage]) -> None:
    styled = sys.stdout.isatty()
    bold, dim, plain = ("\x1b[1m", "\x1b[2m", "\x1b[0m") if styled else ("", "", "")
    room = min(width(), ARGUMENT_CHARS)
    calls: dict[str, str] = {}  # call id -> "name" of every call shown so far
    out: list[str] = []
    for message in messages:
        body = message.record.body
        out.append(f"{bold}{message.role}{plain} {dim}({visible(message.source, one_line=True)}){plain}\n")
        if isinstance(body, ToolResult):
            name = calls.get(body.call_id) or body.tool_name or "a tool"
            error = " (error)" if body.is_error else ""
            out.append(visible(f"<- result of {name} call {body.call_id}{error}", one_line=True) + "\n")
        lines = [block_text(block, room, dim, plain) for block in message.content]
        if isinstance(body, CustomEntry) and not body.content:
            data = json.dumps(body.data, sort_keys=True, ensure_ascii=False)
            lines.append(visible(cut(f"{body.type}: {data}", room), one_line=True))
        if isinstance(body, AssistantMessage):
            calls.update({call.call_id: call.name for call in body.tool_calls})
        lines = [line for line in lines if line]
        out.append("".join(line + "\n" for line in lines) if lines else f"{dim}(no content){plain}\n")
        out.append("\n")
    sys.stdout.write("".join(out))


def block_text(block: Block, room: int, dim: str = "", plain: str = "") -> str:
    """One content block as a line or lines of text, made visible; `dim`/`plain` style its markers."""
    if isinstance(block, TextBlock):
        return visible(block.text.rstrip("\n"))
    if isinstance(block, ThinkingBlock):
        size = "redacted" if block.redacted else f"{len(block.thinking):,} characters"
        return f"{dim}[thinking: {size}]{plain}"
    if isinstance(block, ToolCallBlock):
        arguments = json.dumps(block.arguments, sort_keys=True, ensure_ascii=False)
        head = f"-> {block.name}("
        return visible(head + cut(arguments, max(room - len(head) - 1, 20)) + ")", one_line=True)
    if isinstance(block, ImageBlock):
        return f"{dim}[image {visible(block.media_type or '', one_line=True)}]{plain}"
    if isinstance(block, BlobBlock):
        name = f" {block.name}" if block.name else ""
        what = f"blob{visible(name, one_line=True)}: {block.size:,} bytes, sha256:{block.digest[:12]}"
        return f"{dim}[{what}]{plain}"
    return ""
