"""OpenAI Responses API items, mapped to waybook bodies and back without loss.

Codex rollouts and OpenAI Agents SDK sessions both store Responses items (messages, reasoning, function
and custom tool calls and their outputs, web searches). A run of model output items becomes one
terminal assistant entry; an output item becomes a tool result; a user, developer or system message a
user or system message. What no waybook field holds (item ids, statuses, annotations, the exact text of
call arguments) goes into `details[key]`, so `items_of_context` gives back the very items. `key` names
the source (`codex`, `openai_agents`).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, Final

from waybook.model import (
    AnyBody,
    AssistantMessage,
    Block,
    CustomEntry,
    ImageBlock,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

MODEL_ITEMS: Final = frozenset(
    {
        "reasoning",
        "function_call",
        "custom_tool_call",
        "local_shell_call",
        "web_search_call",
        "file_search_call",
        "computer_call",
        "image_generation_call",
        "code_interpreter_call",
        "tool_search_call",
        "mcp_call",
    }
)
"""Response items the model produces. A run of them (with assistant messages) is one assistant turn."""
CALL_ITEMS: Final = frozenset({"function_call", "custom_tool_call", "local_shell_call", "computer_call"})
OUTPUT_ITEMS: Final = frozenset(
    {"function_call_output", "custom_tool_call_output", "local_shell_call_output", "computer_call_output"}
)


def kind_of(item: dict[str, Any]) -> str:
    """An item's type; a message written without one (`{"role": ..., "content": ...}`) is a message."""
    kind = item.get("type")
    if kind is None and "role" in item:
        return "message"
    return str(kind)


def is_model_item(item: dict[str, Any]) -> bool:
    kind = kind_of(item)
    return kind in MODEL_ITEMS or (kind == "message" and item.get("role") == "assistant")


def message_body(item: dict[str, Any], parent: str | None, key: str) -> UserMessage | SystemMessage:
    """A user message, or a system message for developer and system roles."""
    content, parts = _content(item.get("content"))
    details = {key: _rest(item, ("content",)) | {"parts": parts}}
    if item.get("role") == "user":
        return UserMessage(parent=parent, content=content, details=details)
    return SystemMessage(parent=parent, content=content, details=details)


def result_body(item: dict[str, Any], parent: str | None, tool_name: str | None, key: str) -> ToolResult:
    output = item.get("output")
    if isinstance(output, str | list):
        content, parts = _content(output)
    else:
        content, parts = (TextBlock(text=json.dumps(output, ensure_ascii=False)),), "json"
    rest = _rest(item, ("call_id", "output")) | {"parts": parts}
    return ToolResult(
        parent=parent,
        call_id=required(item, "call_id"),
        content=content,
        tool_name=tool_name,
        details={key: rest},
    )


def turn_body(
    items: Sequence[dict[str, Any]], parent: str | None, model: str | None, key: str, **extra: Any
) -> AssistantMessage:
    """One assistant entry for a run of model output items; the stop reason is inferred and says so."""
    blocks: list[Block] = []
    described: list[dict[str, Any]] = []
    for item in items:
        mapped, rest = _model_item(item)
        described.append(rest | {"blocks": len(mapped)})
        blocks.extend(mapped)
    stop = "tool_use" if kind_of(items[-1]) in CALL_ITEMS else "end_turn"
    details = {key: {"items": described, "stop_reason": "inferred", **extra}}
    return AssistantMessage(
        parent=parent, content=tuple(blocks), stop_reason=stop, model=model, details=details
    )


def item_body(item: dict[str, Any], parent: str | None, key: str, tool_name: str | None = None) -> AnyBody:
    """The body for one item on its own (a replacement history, an item of an unknown type)."""
    kind = kind_of(item)
    if kind == "message" and item.get("role") != "assistant":
        return message_body(item, parent, key)
    if is_model_item(item):
        return turn_body([item], parent, None, key)
    if kind in OUTPUT_ITEMS:
        return result_body(item, parent, tool_name, key)
    return CustomEntry(parent=parent, type=f"{key}.item.{kind}", data=item)


def call_names(items: Iterable[dict[str, Any]]) -> dict[str, str]:
    """call id -> tool name for the calls among `items`."""
    return {
        str(item.get("call_id")): str(item.get("name", kind_of(item)))
        for item in items
        if kind_of(item) in CALL_ITEMS
    }


# --- back ---------------------------------------------------------------------------------------------


def items_of_context(messages: Iterable[Any], key: str) -> list[dict[str, Any]]:
    """The Responses items for waybook context messages (what `context_at` returns) of an import.

    Messages marked `details[key]["base_instructions"]` (sent as `instructions`, not as an item) are
    left out.
    """
    items: list[dict[str, Any]] = []
    for message in messages:
        body = message.record.body
        details = (getattr(body, "details", None) or {}).get(key, {})
        if isinstance(body, AssistantMessage):
            items.extend(_items_of_turn(list(body.content), details.get("items", [])))
        elif isinstance(body, ToolResult):
            rest = {k: v for k, v in details.items() if k != "parts"}
            items.append(
                {**rest, "call_id": body.call_id, "output": _restored(body.content, details["parts"])}
            )
        elif isinstance(body, UserMessage | SystemMessage) and not details.get("base_instructions"):
            rest = {k: v for k, v in details.items() if k != "parts"}
            items.append({**rest, "content": _restored(body.content, details["parts"])})
    return items


def _items_of_turn(blocks: list[Block], described: list[dict[str, Any]]) -> list[dict[str, Any]]:
    items = []
    for item in described:
        rest = {k: v for k, v in item.items() if k != "blocks"}
        mine, blocks = blocks[: item["blocks"]], blocks[item["blocks"] :]
        kind = kind_of(item)
        if kind == "reasoning":
            (block,) = mine
            assert isinstance(block, ThinkingBlock)
            lengths = rest.pop("summary_lengths")
            texts = _split(block.thinking, lengths)
            rest["summary"] = [
                {**part, "text": text} for part, text in zip(rest["summary"], texts, strict=True)
            ]
            if rest.pop("has_encrypted_content"):
                rest["encrypted_content"] = block.signature
            items.append(rest)
        elif kind == "message":
            parts = rest.pop("parts")
            items.append({**rest, "content": _restored(tuple(mine), parts)})
        elif kind == "function_call":
            (call,) = mine
            assert isinstance(call, ToolCallBlock)
            arguments = rest.pop("arguments", None)
            if arguments is None:
                arguments = _arguments_text(call.arguments)
            items.append({**rest, "name": call.name, "arguments": arguments, "call_id": call.call_id})
        elif kind == "custom_tool_call":
            (call,) = mine
            assert isinstance(call, ToolCallBlock)
            items.append(
                {**rest, "call_id": call.call_id, "name": call.name, "input": call.arguments["input"]}
            )
        else:
            items.append(rest)
    return items


# --- mapping helpers ----------------------------------------------------------------------------------


def _model_item(item: dict[str, Any]) -> tuple[list[Block], dict[str, Any]]:
    """The blocks a model output item maps to, and the item's fields that no block holds."""
    kind = kind_of(item)
    if kind == "reasoning":
        summary = [p for p in item.get("summary") or [] if isinstance(p, dict)]
        texts = [str(p.get("text", "")) for p in summary]
        signature = item.get("encrypted_content")
        thinking = ThinkingBlock(thinking="\n\n".join(texts), signature=signature, redacted=not texts)
        rest = _rest(item, ("encrypted_content", "summary")) | {
            "summary": [{k: v for k, v in p.items() if k != "text"} for p in summary],
            "summary_lengths": [len(t) for t in texts],
            "has_encrypted_content": "encrypted_content" in item,
        }
        return [thinking], rest
    if kind == "message":
        content, parts = _content(item.get("content"))
        return list(content), _rest(item, ("content",)) | {"parts": parts}
    if kind == "function_call":
        raw = item.get("arguments")
        arguments = _json_object(raw)
        rest = _rest(item, ("call_id", "name", "arguments"))
        if arguments is None or _arguments_text(arguments) != raw:
            rest["arguments"] = raw  # the exact text, where the block's sorted keys would not give it back
        block = ToolCallBlock(
            call_id=required(item, "call_id"), name=required(item, "name"), arguments=arguments or {}
        )
        return [block], rest
    if kind == "custom_tool_call":
        block = ToolCallBlock(
            call_id=required(item, "call_id"),
            name=required(item, "name"),
            arguments={"input": item.get("input")},
        )
        return [block], _rest(item, ("call_id", "name", "input"))
    return [], dict(item)  # web search, image generation, ...: no waybook block; kept whole


def _content(content: Any) -> tuple[tuple[Block, ...], Any]:
    """Blocks for a content string or parts list, and how to restore it: "text", or one dict a part
    holding what the block does not (its type, annotations, ...)."""
    if isinstance(content, str):
        return (TextBlock(text=content),), "text"
    blocks: list[Block] = []
    parts: list[dict[str, Any]] = []
    for part in content or []:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append(TextBlock(text=part["text"]))
            parts.append({k: v for k, v in part.items() if k != "text"} | {"_field": "text"})
        elif isinstance(part, dict) and isinstance(part.get("image_url"), str):
            url = part["image_url"]
            blocks.append(ImageBlock(source=url, media_type=_media_type(url)))
            parts.append({k: v for k, v in part.items() if k != "image_url"} | {"_field": "image_url"})
        else:
            blocks.append(TextBlock(text=json.dumps(part, ensure_ascii=False)))
            parts.append({"_field": "json"})
    return tuple(blocks), parts


def _restored(content: Sequence[Block], parts: Any) -> Any:
    if parts == "text":
        return "".join(b.text for b in content if isinstance(b, TextBlock))
    if parts == "json":
        return json.loads("".join(b.text for b in content if isinstance(b, TextBlock)))
    restored: list[Any] = []
    for block, part in zip(content, parts, strict=True):
        rest = {k: v for k, v in part.items() if k != "_field"}
        if part["_field"] == "text" and isinstance(block, TextBlock):
            restored.append({**rest, "text": block.text})
        elif part["_field"] == "image_url" and isinstance(block, ImageBlock):
            restored.append({**rest, "image_url": block.source})
        elif isinstance(block, TextBlock):
            restored.append(json.loads(block.text))
    return restored


def _json_object(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, str):
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _arguments_text(arguments: dict[str, Any]) -> str:
    """Call arguments as JSON text, keys sorted as the record's canonical form keeps them."""
    return json.dumps(arguments, ensure_ascii=False, separators=(", ", ": "), sort_keys=True)


def _split(text: str, lengths: list[int]) -> list[str]:
    texts, start = [], 0
    for length in lengths:
        texts.append(text[start : start + length])
        start += length + 2  # the "\n\n" that joined them
    return texts


def _media_type(url: str) -> str:
    if url.startswith("data:") and ";" in url:
        return url[5 : url.index(";")]
    return "application/octet-stream"


def _rest(item: dict[str, Any], mapped: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in mapped}


def required(item: dict[str, Any], key: str) -> str:
    """`item[key]` when it is text (an id, a tool name); a ValueError naming the item's type if not."""
    value = item.get(key)
    if isinstance(value, str):
        return value
    kind = str(item.get("type"))[:40]
    if value is None:
        msg = f"a {kind} item without a text {key}"
    else:
        msg = f"a {kind} item whose {key} is {type(value).__name__}, not text"
    raise ValueError(msg)
