"""Neutral chat messages written as OpenAI chat fine-tuning rows (other formats: waybook.export._formats).

OpenAI rows carry images as content parts (`image_url` with a `data:` or `http(s)` URL) of user
messages only. A tool result's images follow the run of tool messages it belongs to, in one user message
"Attached image(s) from tool result:", and a tool message with no text of its own says
"(see attached image)": the same shape Pi sends to OpenAI-compatible models. Text and images keep the
order they had in the message (blank text parts are left out, as Pi does).
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final

from waybook.export._cleaning import ImagePart, Message
from waybook.export._openai_format import MAX_IMAGES_PER_ROW

TOOL_IMAGES_INTRO: Final = "Attached image(s) from tool result:"
SEE_ATTACHED: Final = "(see attached image)"


def openai_row(
    messages: list[Message], tools: list[dict[str, Any]] | None, dropped: Counter[str] | None = None
) -> dict[str, Any]:
    """A chat fine-tuning row: `messages`; and, with tools, `tools` and `parallel_tool_calls` (true when
    an assistant message of the row makes more than one call)."""
    row: dict[str, Any] = {"messages": openai_messages(messages, dropped)}
    if tools:
        row["tools"] = tools
        row["parallel_tool_calls"] = any(len(m.tool_calls) > 1 for m in messages)
    return row


def openai_messages(messages: list[Message], dropped: Counter[str] | None = None) -> list[dict[str, Any]]:
    """`messages` in OpenAI form, with tool results' images attached after their run of tool messages.
    A row carries at most MAX_IMAGES_PER_ROW images, the latest ones; earlier ones become placeholders
    (counted in `dropped`)."""
    dropped = dropped if dropped is not None else Counter()
    too_many = max(sum(len(m.images) for m in messages) - MAX_IMAGES_PER_ROW, 0)
    seen = 0
    out: list[dict[str, Any]] = []
    attached: list[ImagePart] = []
    for message in messages:
        if message.role != "tool" and attached:
            out.append(_attached(attached))
            attached = []
        content: list[str | ImagePart] = []
        for part in message.parts:
            if isinstance(part, ImagePart):
                seen += 1
                if seen <= too_many:  # the earliest go: the latest are what the turn is about
                    dropped["images beyond OpenAI's 10 per row (as placeholders)"] += 1
                    part = f"[image: {part.media_type}]"
            content.append(part)
        rendered = openai_message(message, content)
        if message.role == "tool":
            attached += [part for part in content if isinstance(part, ImagePart)]
        out.append(rendered)
    if attached:
        out.append(_attached(attached))
    return out


def openai_message(message: Message, parts: list[str | ImagePart] | None = None) -> dict[str, Any]:
    """One message in OpenAI form; `parts` (default: the message's own) is its content in order."""
    parts = list(message.parts) if parts is None else parts
    out: dict[str, Any] = {"role": message.role, "content": message.text}
    images = [part for part in parts if isinstance(part, ImagePart)]
    if images and message.role == "user":
        out["content"] = [_part(part) for part in parts if isinstance(part, ImagePart) or part.strip()]
    elif parts and message.role == "tool":
        text = "\n\n".join(part for part in parts if isinstance(part, str))
        out["content"] = text or (SEE_ATTACHED if images else "")
    elif parts:  # every image of the message became a placeholder
        out["content"] = "\n\n".join(part if isinstance(part, str) else "" for part in parts)
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


def _part(part: str | ImagePart) -> dict[str, Any]:
    if isinstance(part, ImagePart):
        return {"type": "image_url", "image_url": {"url": part.url}}
    return {"type": "text", "text": part}


def _attached(images: list[ImagePart]) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": TOOL_IMAGES_INTRO}, *map(_part, images)]}


def encode_row(row: dict[str, Any]) -> bytes:
    """One JSONL line (no newline); key order is fixed by construction, so output is deterministic.

    U+2028 and U+2029 are written escaped: readers that split text into lines by Unicode's rules
    (Python's `str.splitlines`, JavaScript before ES2019) would otherwise cut a row in two."""
    line = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
    if "\u2028" in line or "\u2029" in line:
        line = line.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return line.encode()
