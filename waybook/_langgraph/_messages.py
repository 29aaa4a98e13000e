"""LangChain messages (in `message_to_dict` form) as waybook session nodes.

One mapping for every way a LangGraph thread reaches waybook: `WaybookSaver` writes a checkpoint's new
messages with it, `waybook import langgraph` maps a SqliteSaver database's with it, and
`waybook langgraph derive` maps the messages of threads saved before the saver wrote nodes. So a thread
reads the same however it arrived. Pure: plain data in, record bodies out, no LangChain import.

- `human`: a user message; `system`: a system message;
- `ai` (and `AIMessageChunk`): an assistant message, its text then a tool-call block per `tool_calls`
  entry, the stop reason inferred (`tool_use` with calls, else `end_turn`), `usage_metadata` its usage;
- `tool`: a tool result answering `tool_call_id` (an error when `status` is "error");
- anything else: a custom entry `langgraph.message.<type>` holding the message.

Every field the node has no place for rides in `details["langgraph"]`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from waybook.model import (
    AnyBody,
    AssistantMessage,
    Block,
    CustomEntry,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

SOURCE: Final = "langgraph"
MESSAGE_KINDS: Final = frozenset({"human", "system", "ai", "AIMessageChunk", "tool"})
"""The message types that become user, system, assistant and tool-result nodes."""

_UNSAFE_TYPE_CHARS: Final = re.compile(r"[^A-Za-z0-9_.-]")


def message_body(message: Mapping[str, Any], parent: str | None) -> AnyBody:
    """The node one LangChain message (`{"type": ..., "data": {...}}`) becomes, under `parent`."""
    kind = message.get("type")
    data = dict(message.get("data") or {})
    content = _content(data.pop("content", ""))
    details = {SOURCE: {"type": kind, **data}}
    if kind == "human":
        return UserMessage(parent=parent, content=content, details=details)
    if kind == "system":
        return SystemMessage(parent=parent, content=content, details=details)
    if kind == "tool":
        return ToolResult(
            parent=parent,
            call_id=str(data.get("tool_call_id")),
            content=content,
            tool_name=data.get("name") if isinstance(data.get("name"), str) else None,
            is_error=data.get("status") == "error",
            details=details,
        )
    if kind in ("ai", "AIMessageChunk"):
        listed = data.get("tool_calls")
        calls = tuple(
            ToolCallBlock(
                call_id=str(c.get("id")), name=str(c.get("name")), arguments=_arguments(c.get("args"))
            )
            for c in (listed if isinstance(listed, list) else [])
            if isinstance(c, dict)
        )
        metadata = data.get("response_metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        model = metadata.get("model_name") or metadata.get("model")
        return AssistantMessage(
            parent=parent,
            content=(*content, *calls),
            stop_reason="tool_use" if calls else "end_turn",
            model=model if isinstance(model, str) else None,
            usage=usage_of(data.get("usage_metadata")),
            details={SOURCE: {**details[SOURCE], "stop_reason": "inferred"}},
        )
    name = _UNSAFE_TYPE_CHARS.sub("_", str(kind))[:80] or "unknown"
    return CustomEntry(parent=parent, type=f"langgraph.message.{name}", data=dict(message))


def usage_of(metadata: Any) -> dict[str, int] | None:
    """LangChain's `usage_metadata` as a turn's usage: its counts under LangChain's own names, the
    details flattened (`input_token_details.cache_read`, `output_token_details.reasoning`, ...).
    LangChain's `input_tokens` sums every input token, the cached ones included (docs/cost.md)."""
    if not isinstance(metadata, dict):
        return None
    usage: dict[str, int] = {}
    for key, value in metadata.items():
        if type(value) is int:
            usage[str(key)] = value
        elif isinstance(value, dict):
            for part, count in value.items():
                if type(count) is int:
                    usage[f"{key}.{part}"] = count
    return usage or None


def _arguments(args: Any) -> dict[str, Any]:
    if isinstance(args, dict):
        return args
    return {} if args is None else {"value": args}


def _content(content: Any) -> tuple[Block, ...]:
    if isinstance(content, str):
        return (TextBlock(text=content),) if content else ()
    blocks: list[Block] = []
    for part in content if isinstance(content, list) else [content]:
        if isinstance(part, str):
            blocks.append(TextBlock(text=part))
        elif isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            blocks.append(TextBlock(text=part["text"]))
        else:
            blocks.append(TextBlock(text=json.dumps(part, sort_keys=True, default=str)))
    return tuple(blocks)
