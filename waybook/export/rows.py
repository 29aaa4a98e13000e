"""Neutral chat messages written as rows of a training format: OpenAI chat fine-tuning, or ShareGPT.

OpenAI rows carry images as content parts (`image_url` with a `data:` or `http(s)` URL) of user
messages only. A tool result's images follow the run of tool messages it belongs to, in one user message
"Attached image(s) from tool result:", and a tool message with no text of its own says
"(see attached image)": the same shape Pi sends to OpenAI-compatible models.
"""

from __future__ import annotations

import json
from typing import Any, Final

from waybook.export.cleaning import Message

TOOL_IMAGES_INTRO: Final = "Attached image(s) from tool result:"
SEE_ATTACHED: Final = "(see attached image)"


def openai_row(messages: list[Message], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    row: dict[str, Any] = {"messages": openai_messages(messages)}
    if tools:
        row["tools"] = tools
    return row


def openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """`messages` in OpenAI form, with tool results' images attached after their run of tool messages."""
    out: list[dict[str, Any]] = []
    attached: list[str] = []
    for message in messages:
        if message.role != "tool" and attached:
            out.append(_attached(attached))
            attached = []
        out.append(openai_message(message))
        if message.role == "tool":
            attached.extend(message.images)
    if attached:
        out.append(_attached(attached))
    return out


def openai_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.text}
    if message.images and message.role == "user":
        text = [{"type": "text", "text": message.text}] if message.text else []
        out["content"] = text + _image_parts(message.images)
    elif message.images and message.role == "tool" and not message.text:
        out["content"] = SEE_ATTACHED
    if message.tool_calls:
        out["content"] = message.text or None
        out["tool_calls"] = [
            {
                "id": call.call_id,
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": json.dumps(call.arguments, sort_keys=True, ensure_ascii=False),
                },
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    return out


def _attached(urls: list[str]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *_image_parts(urls)]}


def _image_parts(urls: tuple[str, ...] | list[str]) -> list[dict[str, Any]]:
    return [{"type": "image_url", "image_url": {"url": url}} for url in urls]


_SHAREGPT_ROLES: Final = {"system": "system", "user": "human", "assistant": "gpt", "tool": "observation"}


def sharegpt_row(messages: list[Message]) -> dict[str, Any]:
    conversations = []
    for message in messages:
        if message.text or not message.tool_calls:
            conversations.append({"from": _SHAREGPT_ROLES[message.role], "value": message.text})
        for call in message.tool_calls:
            value = json.dumps(
                {"name": call.name, "arguments": call.arguments}, sort_keys=True, ensure_ascii=False
            )
            conversations.append({"from": "function_call", "value": value})
    return {"conversations": conversations}


def encode_row(row: dict[str, Any]) -> bytes:
    """One JSONL line (no newline); key order is fixed by construction, so output is deterministic."""
    return json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode()
