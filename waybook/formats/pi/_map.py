"""A Pi entry's body as a waybook record body, following Pi's own rules for what the model sees."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Final

from waybook.codecs import canonical_json, decode_body
from waybook.formats.pi._form import (
    BRANCH_SUMMARY_PREFIX,
    BRANCH_SUMMARY_SUFFIX,
    CARRIER,
    STOP_FROM_PI,
    WRAPPED,
)
from waybook.journal import ID_PATTERN, TIMESTAMP_PATTERN
from waybook.model import (
    AnyBody,
    AssistantMessage,
    Block,
    Compaction,
    Content,
    CustomEntry,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

ENVELOPE: Final = ("type", "id", "parentId", "timestamp")


def body_of(entry: dict[str, Any], parent: str | None) -> AnyBody:
    kind = entry["type"]
    if kind == "message":
        return message_body(entry["message"], parent)
    if kind == "compaction":
        tokens = entry.get("tokensBefore")
        first_kept = entry.get("firstKeptEntryId")
        return Compaction(
            parent=parent,
            summary=string(entry["summary"], "summary"),
            first_kept=first_kept if isinstance(first_kept, str) else None,
            tokens_before=tokens if type(tokens) is int else None,
        )
    if kind == "custom" and entry.get("customType") == WRAPPED:
        return unwrap(entry.get("data"), parent)
    data = {k: v for k, v in entry.items() if k not in ENVELOPE and k != CARRIER}
    if kind == "branch_summary":
        summary = string(entry["summary"], "summary")
        shown = text_content(BRANCH_SUMMARY_PREFIX + summary + BRANCH_SUMMARY_SUFFIX) if summary else ()
        return CustomEntry(
            parent=parent, type="pi.branch_summary", data=data, in_context=bool(summary), content=shown
        )
    if kind == "custom_message":
        content = content_of(entry["content"])
        data.pop("content")
        return CustomEntry(
            parent=parent, type="pi.custom_message", data=data, in_context=True, content=content
        )
    return CustomEntry(parent=parent, type=f"pi.{kind}", data=data)


def message_body(message: Any, parent: str | None) -> AnyBody:
    if not isinstance(message, dict):
        msg = "message is not an object"
        raise TypeError(msg)
    role = message["role"]
    if role == "user":
        return UserMessage(parent=parent, content=content_of(message["content"]))
    if role == "assistant":
        stop = message.get("stopReason")
        if stop not in STOP_FROM_PI:
            msg = f"unknown assistant stopReason {stop!r}"
            raise ValueError(msg)
        usage = message.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        ints = {k: v for k, v in usage.items() if type(v) is int}
        model = message.get("model")
        return AssistantMessage(
            parent=parent,
            content=content_of(message["content"]),
            stop_reason=STOP_FROM_PI[stop],
            model=model if isinstance(model, str) else None,
            usage=ints or None,
        )
    if role == "toolResult":
        name = message.get("toolName")
        return ToolResult(
            parent=parent,
            call_id=string(message["toolCallId"], "toolCallId"),
            tool_name=name if isinstance(name, str) else None,
            content=content_of(message["content"]),
            is_error=message.get("isError") is True,
        )
    if role == "bashExecution":
        data = dict(message)
        return CustomEntry(
            parent=parent,
            type="pi.message.bashExecution",
            data=data,
            in_context=data.get("excludeFromContext") is not True,
            content=text_content(bash_text(data)),
        )
    if role == "custom":
        data = {k: v for k, v in message.items() if k != "content"}
        content = content_of(message.get("content", ""))
        return CustomEntry(
            parent=parent, type="pi.message.custom", data=data, in_context=True, content=content
        )
    return CustomEntry(parent=parent, type=f"pi.message.{role}", data=dict(message))


def bash_text(message: dict[str, Any]) -> str:
    """What Pi sends the model for a `!` bash execution (a user message)."""
    text = f"Ran `{message.get('command', '')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    code = message.get("exitCode")
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif code is not None and code != 0:
        text += f"\n\nCommand exited with code {code}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message['fullOutputPath']}]"
    return text


def unwrap(data: Any, parent: str | None) -> AnyBody:
    if not isinstance(data, dict):
        msg = f"a {WRAPPED} entry must carry a record body object"
        raise TypeError(msg)
    body = decode_body(canonical_json({**data, "parent": parent}), where=f"a Pi {WRAPPED} entry")
    if not body.IS_NODE:
        msg = f"a {WRAPPED} entry must carry a node"
        raise ValueError(msg)
    return body


def content_of(value: Any) -> Content:
    if isinstance(value, str):
        return text_content(value)
    if not isinstance(value, list):
        msg = f"content must be a string or a list of blocks, not {type(value).__name__}"
        raise TypeError(msg)
    blocks: list[Block] = []
    for block in value:
        if not isinstance(block, dict):
            msg = f"a content block must be an object, not {type(block).__name__}"
            raise TypeError(msg)
        kind = block.get("type")
        if kind == "text":
            blocks.append(TextBlock(text=string(block["text"], "text")))
        elif kind == "thinking":
            signature = block.get("thinkingSignature")
            blocks.append(
                ThinkingBlock(
                    thinking=string(block["thinking"], "thinking"),
                    signature=signature if isinstance(signature, str) else None,
                    redacted=block.get("redacted") is True,
                )
            )
        elif kind == "toolCall":
            arguments = block.get("arguments")
            blocks.append(
                ToolCallBlock(
                    call_id=string(block["id"], "id"),
                    name=string(block["name"], "name"),
                    arguments=arguments if isinstance(arguments, dict) else {},
                )
            )
        elif kind == "image":
            mime = string(block["mimeType"], "mimeType")
            data = string(block["data"], "data")
            blocks.append(ImageBlock(source=f"data:{mime};base64,{data}", media_type=mime))
        else:
            msg = f"unknown content block type {kind!r}"
            raise ValueError(msg)
    return tuple(blocks)


def string(value: Any, name: str) -> str:
    if not isinstance(value, str):
        msg = f"{name} must be a string, not {type(value).__name__}"
        raise TypeError(msg)
    return value


def text_content(value: str) -> Content:
    return (TextBlock(text=value),)


def record_id(value: Any) -> str:
    if not isinstance(value, str) or not ID_PATTERN.fullmatch(value):
        msg = f"id {value!r} is not usable as a record id"
        raise ValueError(msg)
    return value


def timestamp(value: Any) -> str:
    if isinstance(value, str) and TIMESTAMP_PATTERN.fullmatch(value):
        return value
    if isinstance(value, str):
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
    elif isinstance(value, int | float) and not isinstance(value, bool):
        parsed = datetime.fromtimestamp(value / 1000, UTC)
    else:
        msg = f"timestamp {value!r} is not a date"
        raise TypeError(msg)
    return parsed.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
