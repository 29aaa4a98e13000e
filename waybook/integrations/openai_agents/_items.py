"""OpenAI Agents SDK items as waybook tree nodes, and back, exactly.

Common items become the matching waybook kinds, so a session's journal exports and renders like any
conversation: a user, system or developer message with text content becomes a user or system message;
an assistant message whose parts are all text becomes an assistant message; a function call becomes an
assistant turn with a tool call; its output becomes a tool result. The item's other fields ride along in
`details["openai"]`. Every mapping is checked by mapping back: if the item does not come back equal,
it is stored verbatim instead, as a `waybook.custom/1` entry of type `openai_agents.item`. So
`item_of(body_of(item, parent)) == item` for every JSON item.

An item whose record's content was erased (docs/erasure.md) comes back as `erased_items` shows it: the
placeholder naming the erasure, in an item the Responses API accepts where the old one stood.
"""

from __future__ import annotations

import json
from typing import Any, Final

from waybook.model import (
    AssistantMessage,
    CustomEntry,
    NodeBody,
    Record,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
    plain_text,
    text,
)

ITEM: Final = "openai_agents.item"
_KEY: Final = "openai"
_TEXT_PARTS: Final = frozenset({"output_text", "input_text", "text"})


def body_of(item: Any, parent: str | None) -> NodeBody:
    """The node that records `item` after `parent`: a native kind when it maps back exactly."""
    try:
        mapped = _native(item, parent)
    except (KeyError, TypeError, ValueError, AttributeError):
        mapped = None
    if mapped is not None and item_of(mapped) == item:
        return mapped
    return CustomEntry(parent=parent, type=ITEM, data=item)


def item_of(body: Any) -> Any:
    """The SDK item a node records (None for a node that is not an item, such as another tool's entry)."""
    if isinstance(body, CustomEntry):
        return body.data if body.type == ITEM else None
    details = getattr(body, "details", None)
    if not isinstance(details, dict) or not isinstance(details.get(_KEY), dict):
        return None
    rest: dict[str, Any] = dict(details[_KEY])
    if isinstance(body, UserMessage | SystemMessage):
        return {**rest, "content": plain_text(body.content)}
    if isinstance(body, ToolResult):
        return {**rest, "output": plain_text(body.content)}
    if isinstance(body, AssistantMessage):
        if rest.get("type") == "function_call":
            call = body.tool_calls[0]
            arguments = rest.pop("arguments", None)
            if arguments is None:
                arguments = json.dumps(call.arguments, separators=(",", ":"), ensure_ascii=False)
            return {**rest, "call_id": call.call_id, "name": call.name, "arguments": arguments}
        parts = rest.get("content")
        texts = [block.text for block in body.content if isinstance(block, TextBlock)]
        if isinstance(parts, list):
            return {**rest, "content": [{**part, "text": t} for part, t in zip(parts, texts, strict=True)]}
        return {**rest, "content": "\n\n".join(texts)}
    return None


def erased_items(record: Record) -> list[Any]:
    """The items shown for an erased record (`record` as `waybook.model.placeholder_records` shows it in
    its path): a message holding the placeholder (a user message for an item stored verbatim, whose
    shape the erasure took), a tool output keeping its call id, and an erased assistant turn's message
    followed by a function call (no arguments) for each call its outputs answer, so none is orphaned."""
    body = record.body
    if isinstance(body, CustomEntry) and body.type != ITEM:
        return []  # not an item
    content = getattr(body, "content", ())
    shown = next((block.text for block in content if isinstance(block, TextBlock)), "")
    if isinstance(body, ToolResult):
        return [{"type": "function_call_output", "call_id": body.call_id, "output": shown}]
    if isinstance(body, AssistantMessage):
        calls = [
            {"type": "function_call", "call_id": call.call_id, "name": call.name, "arguments": "{}"}
            for call in body.tool_calls
        ]
        return [{"role": "assistant", "content": shown}, *calls]
    role = "system" if isinstance(body, SystemMessage) else "user"
    return [{"role": role, "content": shown}]


def _native(item: Any, parent: str | None) -> NodeBody | None:
    if not isinstance(item, dict):
        return None
    role, kind = item.get("role"), item.get("type")
    rest = {key: value for key, value in item.items() if key != "content"}
    content = item.get("content")
    if role in ("user", "system", "developer") and kind in (None, "message") and isinstance(content, str):
        cls = UserMessage if role == "user" else SystemMessage
        return cls(parent=parent, content=text(content), details={_KEY: rest})
    if role == "assistant" and kind in (None, "message"):
        if isinstance(content, str):
            return _assistant(parent, [content], rest, "end_turn")
        if isinstance(content, list) and content and all(_is_text_part(p) for p in content):
            rest["content"] = [{k: v for k, v in part.items() if k != "text"} for part in content]
            return _assistant(parent, [part["text"] for part in content], rest, "end_turn")
        return None
    if kind == "function_call" and isinstance(item.get("arguments"), str):
        arguments = json.loads(item["arguments"])
        if not isinstance(arguments, dict):
            return None
        details = {k: v for k, v in item.items() if k not in ("call_id", "name", "arguments")}
        if json.dumps(arguments, separators=(",", ":"), ensure_ascii=False) != item["arguments"]:
            details["arguments"] = item["arguments"]  # kept verbatim: the SDK compares them as text
        call = ToolCallBlock(call_id=item["call_id"], name=item["name"], arguments=arguments)
        return AssistantMessage(
            parent=parent, content=(call,), stop_reason="tool_use", details={_KEY: details}
        )
    if kind == "function_call_output" and isinstance(item.get("output"), str):
        details = {k: v for k, v in item.items() if k != "output"}
        return ToolResult(
            parent=parent, call_id=item["call_id"], content=text(item["output"]), details={_KEY: details}
        )
    return None


def _is_text_part(part: Any) -> bool:
    return isinstance(part, dict) and part.get("type") in _TEXT_PARTS and isinstance(part.get("text"), str)


def _assistant(parent: str | None, texts: list[str], rest: dict[str, Any], stop: str) -> AssistantMessage:
    content = tuple(TextBlock(text=t) for t in texts)
    return AssistantMessage(parent=parent, content=content, stop_reason=stop, details={_KEY: rest})
