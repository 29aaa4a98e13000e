"""What of a session's text goes on its OpenTelemetry spans: nothing, its shape, or all of it, redacted.

Three levels (`waybook otel send --content`):
- `none` (the default): no text at all; the spans carry models, usage, tool names and ids, proofs.
- `metadata`: the shape without the words: which roles and part types a model call took in and gave
  back, how many characters, which argument names a tool call had (`waybook.*` attributes).
- `full`: the GenAI conventions' opt-in content attributes (`gen_ai.input.messages`,
  `gen_ai.output.messages`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`) as JSON strings in
  the conventions' message schema, every string masked by the exports' redaction (waybook._redact).

A model call's input messages are the ones added since its previous call on the path (the user turn or
the tool results it answers), not the whole context again: the conventions let an instrumentation
truncate input messages, and the whole context of a long session sent on every call grows with the
square of its length. Pure functions of records.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeAlias

from waybook._redact import Redactor
from waybook.export._otel_names import gen_ai
from waybook.model import (
    AssistantMessage,
    BlobBlock,
    Block,
    Compaction,
    Content,
    CustomEntry,
    ImageBlock,
    Record,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

ContentLevel: TypeAlias = Literal["none", "metadata", "full"]
CONTENT_LEVELS: Final = ("none", "metadata", "full")

AttributeValue: TypeAlias = str | bool | int | float | tuple[str, ...] | tuple[int, ...]
Attributes: TypeAlias = dict[str, AttributeValue]


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class SpanContent:
    """Renders a record's content at one level, through one redactor (which counts what it masked)."""

    def __init__(self, level: ContentLevel, redactor: Redactor) -> None:
        self.level = level
        self.redactor = redactor

    # --- the three kinds of span --------------------------------------------------------------------

    def turn(self, opener: Record) -> Attributes:
        """An agent invocation span's content: the user message that opened the turn."""
        if self.level == "metadata":
            return {"waybook.input.chars": _chars(_content_of(opener))}
        message = _input_message(opener, self.redactor) if self.level == "full" else None
        return {} if message is None else {gen_ai.GEN_AI_INPUT_MESSAGES: _json([message])}

    def chat(self, inputs: Sequence[Record], reply: AssistantMessage) -> Attributes:
        """A model call's content: the messages it answered (since its previous call) and its reply."""
        if self.level == "none":
            return {}
        if self.level == "metadata":
            return {
                "waybook.input.roles": tuple(_role(record) for record in inputs),
                "waybook.input.chars": sum(_chars(_content_of(record)) for record in inputs),
                "waybook.output.parts": tuple(_part_type(block) for block in reply.content),
                "waybook.output.chars": _chars(reply.content),
            }
        messages = [m for m in (_input_message(r, self.redactor) for r in inputs) if m is not None]
        output = {
            "role": "assistant",
            "parts": [_part(block, self.redactor) for block in reply.content],
            "finish_reason": reply.stop_reason or "",
        }
        return {
            gen_ai.GEN_AI_INPUT_MESSAGES: _json(messages),
            gen_ai.GEN_AI_OUTPUT_MESSAGES: _json([output]),
        }

    def tool(self, call: ToolCallBlock, result: ToolResult | None) -> Attributes:
        """A tool execution span's content: the call's arguments and the result's text."""
        if self.level == "none":
            return {}
        if self.level == "metadata":
            found: Attributes = {
                "waybook.tool.arguments.keys": tuple(sorted(self.redactor.text(k) for k in call.arguments)),
            }
            if result is not None:
                found["waybook.tool.result.chars"] = _chars(result.content)
            return found
        found = {gen_ai.GEN_AI_TOOL_CALL_ARGUMENTS: _json(self.redactor.value(dict(call.arguments)))}
        if result is not None:
            found[gen_ai.GEN_AI_TOOL_CALL_RESULT] = self.redactor.text(_result_text(result.content))
        return found


# --- the conventions' message schema ----------------------------------------------------------------


def _content_of(record: Record) -> Content:
    body = record.body
    if isinstance(body, UserMessage | SystemMessage | ToolResult | AssistantMessage | CustomEntry):
        return body.content
    if isinstance(body, Compaction):
        return (TextBlock(text=body.summary),)
    return ()


def _role(record: Record) -> str:
    body = record.body
    if isinstance(body, SystemMessage):
        return "system"
    if isinstance(body, ToolResult):
        return "tool"
    if isinstance(body, AssistantMessage):
        return "assistant"
    return "user"  # a user message, a compaction's summary, a custom entry shown in the context


def _input_message(record: Record, redactor: Redactor) -> dict[str, Any] | None:
    """One input message in the conventions' schema; None for a record the model never saw."""
    body = record.body
    if isinstance(body, CustomEntry) and not body.in_context:
        return None
    if isinstance(body, ToolResult):
        part = {
            "type": "tool_call_response",
            "id": body.call_id,
            "response": redactor.text(_result_text(body.content)),
        }
        return {"role": "tool", "parts": [part]}
    if not isinstance(body, UserMessage | SystemMessage | Compaction | CustomEntry | AssistantMessage):
        return None
    return {"role": _role(record), "parts": [_part(block, redactor) for block in _content_of(record)]}


def _part(block: Block, redactor: Redactor) -> dict[str, Any]:
    if isinstance(block, TextBlock):
        return {"type": "text", "content": redactor.text(block.text)}
    if isinstance(block, ThinkingBlock):
        return {"type": "reasoning", "content": "" if block.redacted else redactor.text(block.thinking)}
    if isinstance(block, ToolCallBlock):
        arguments = redactor.value(dict(block.arguments))
        return {"type": "tool_call", "id": block.call_id, "name": block.name, "arguments": arguments}
    if isinstance(block, ImageBlock):
        if block.source.startswith("data:"):
            data = block.source.partition(",")[2]
            return {"type": "blob", "modality": "image", "mime_type": block.media_type, "content": data}
        return {"type": "uri", "modality": "image", "mime_type": block.media_type, "uri": block.source}
    return _blob_part(block)


def _blob_part(block: BlobBlock) -> dict[str, Any]:
    """Bytes kept in the store's blobs: named by digest (a generic part), never read and sent."""
    part: dict[str, Any] = {
        "type": "waybook.blob",
        "digest": block.digest,
        "size": block.size,
        "mime_type": block.media_type,
    }
    if block.name is not None:
        part["name"] = block.name
    return part


def _part_type(block: Block) -> str:
    return {
        TextBlock: "text",
        ThinkingBlock: "reasoning",
        ToolCallBlock: "tool_call",
        ImageBlock: "image",
        BlobBlock: "blob",
    }[type(block)]


def _chars(content: Content) -> int:
    total = 0
    for block in content:
        if isinstance(block, TextBlock):
            total += len(block.text)
        elif isinstance(block, ThinkingBlock):
            total += len(block.thinking)
        elif isinstance(block, ToolCallBlock):
            total += len(_json(block.arguments))
    return total


def _result_text(content: Content) -> str:
    """A tool result as text: its text blocks, with a placeholder for each image or blob."""
    pieces = []
    for block in content:
        if isinstance(block, TextBlock):
            pieces.append(block.text)
        elif isinstance(block, ImageBlock):
            pieces.append(f"[image: {block.media_type}]")
        elif isinstance(block, BlobBlock):
            pieces.append(f"[blob sha256:{block.digest}, {block.size} bytes, {block.media_type}]")
    return "\n\n".join(pieces)


def usage_attributes(usage: Mapping[str, Any] | None) -> Attributes:
    """A model call's usage as the conventions' token counts, and each recorded count as it was.

    waybook's usage keys count input the way Anthropic's API does (`input_tokens` without the cache;
    `cache_read_input_tokens` and `cache_creation_input_tokens` beside it; Pi's `input`, `cacheRead`,
    `cacheWrite` likewise). The conventions' `gen_ai.usage.input_tokens` SHOULD include cached tokens,
    so it is their sum; the cache counts go in their own attributes too. Every integer the record holds
    is also kept as `waybook.usage.<key>`, so the sums `waybook stats` reports can be checked exactly.
    """
    if not usage:
        return {}
    counts = {key: value for key, value in usage.items() if type(value) is int}

    def first(*keys: str) -> int | None:
        return next((counts[k] for k in keys if k in counts), None)

    found: Attributes = {f"waybook.usage.{key}": value for key, value in sorted(counts.items())}
    plain = first("input_tokens", "input")
    cache_read = first("cache_read_input_tokens", "cache_read", "cacheRead")
    cache_write = first("cache_creation_input_tokens", "cache_write", "cacheWrite")
    output = first("output_tokens", "output")
    reasoning = first("reasoning_tokens", "reasoning_output_tokens")
    if plain is not None or cache_read is not None or cache_write is not None:
        found[gen_ai.GEN_AI_USAGE_INPUT_TOKENS] = (plain or 0) + (cache_read or 0) + (cache_write or 0)
    if output is not None:
        found[gen_ai.GEN_AI_USAGE_OUTPUT_TOKENS] = output
    if cache_read is not None:
        found[gen_ai.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] = cache_read
    if cache_write is not None:
        found[gen_ai.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] = cache_write
    if reasoning is not None:
        found[gen_ai.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] = reasoning
    return found
