"""Claude Code message content as waybook blocks: what each block type becomes, and what of a line no
block holds (kept in `details`)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from waybook.model import AnyBody, Block, ImageBlock, TextBlock, ThinkingBlock, ToolCallBlock


def with_parent(body: AnyBody, parent: str | None) -> AnyBody:
    return msgspec.structs.replace(body, parent=parent)


def rest_of(line: dict[str, Any]) -> dict[str, Any]:
    """A line without its message content (what no block holds)."""
    rest = {k: v for k, v in line.items() if k != "message"}
    message = line.get("message")
    if isinstance(message, dict):
        rest["message"] = {k: v for k, v in message.items() if k != "content"}
    return rest


def assistant_content(blocks: list[dict[str, Any]]) -> tuple[tuple[Block, ...], list[dict[str, Any]]]:
    content: list[Block] = []
    extras: list[dict[str, Any]] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            content.append(TextBlock(text=str(block["text"])))
            extras.append({k: v for k, v in block.items() if k not in ("type", "text")})
        elif kind == "thinking":
            content.append(ThinkingBlock(thinking=str(block["thinking"]), signature=block.get("signature")))
            extras.append({k: v for k, v in block.items() if k not in ("type", "thinking", "signature")})
        elif kind == "redacted_thinking":
            content.append(ThinkingBlock(thinking="", signature=block.get("data"), redacted=True))
            extras.append({k: v for k, v in block.items() if k not in ("type", "data")})
        elif kind == "tool_use":
            raw = block.get("input")
            arguments: dict[str, Any] = raw if isinstance(raw, dict) else {"input": raw}
            content.append(
                ToolCallBlock(call_id=str(block["id"]), name=str(block["name"]), arguments=arguments)
            )
            extra = {k: v for k, v in block.items() if k not in ("type", "id", "name", "input")}
            extras.append(extra if isinstance(raw, dict) else extra | {"input_wrapped": True})
        else:
            content.append(TextBlock(text=json.dumps(block, ensure_ascii=False)))
            extras.append({"unmapped": True})
    return tuple(content), extras


def user_content(blocks: list[Any]) -> tuple[Block, ...]:
    out: list[Block] = []
    for block in blocks:
        if isinstance(block, str):
            out.append(TextBlock(text=block))
        elif isinstance(block, dict) and block.get("type") == "text":
            out.append(TextBlock(text=str(block.get("text", ""))))
        elif (
            isinstance(block, dict) and block.get("type") == "image" and isinstance(block.get("source"), dict)
        ):
            source = block["source"]
            media = str(source.get("media_type", "application/octet-stream"))
            ref = (
                f"data:{media};base64,{source['data']}"
                if source.get("type") == "base64"
                else str(source.get("url"))
            )
            out.append(ImageBlock(source=ref, media_type=media))
        else:
            out.append(TextBlock(text=json.dumps(block, ensure_ascii=False)))
    return tuple(out)
