"""The Pi entry a waybook record stands for: the derivation both directions of the Pi codec share.

Import keeps only the difference between this form and the entry it read (a patch); export applies the
patch to this form. Pure functions of a record.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any, Final

import msgspec

from waybook.codecs import canonical_json
from waybook.formats import _json_patch as json_patch
from waybook.model import (
    AnyBody,
    AssistantMessage,
    Compaction,
    Content,
    CustomEntry,
    Header,
    ImageBlock,
    NewRecord,
    Record,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)

PI_VERSION: Final = 3
WRAPPED: Final = "waybook.record"
"""customType of the Pi `custom` entries that carry a waybook node Pi has no entry type for."""
TRAILER: Final = "waybook.records"
"""customType of the last Pi entry when it only carries waybook records that follow the last node."""
CARRIER: Final = "waybook"
"""The top-level field of a Pi entry that carries waybook-only data (Pi keeps and ignores it)."""
PATCH: Final = "waybook.pi"
"""The key of a `pi.*` custom entry's data that holds its patch (see `pi._mapped`)."""
BRANCH_SUMMARY_PREFIX: Final = (
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"
)
BRANCH_SUMMARY_SUFFIX: Final = "</summary>"
MAX_LINE: Final = 64 << 20
"""Lines longer than this are refused (a Pi entry holds one message; images are a few MB at most)."""

STOP_FROM_PI: Final = {
    "stop": "end_turn",
    "length": "max_tokens",
    "toolUse": "tool_use",
    "error": "error",
    "aborted": "aborted",
}
STOP_TO_PI: Final = {v: k for k, v in STOP_FROM_PI.items()} | {
    "stop_sequence": "stop",
    "refusal": "stop",
    "pause_turn": "stop",
}


def header_entry(record: Record | NewRecord) -> dict[str, Any]:
    body = record.body
    assert isinstance(body, Header)
    patch = body.metadata.get("pi")
    if body.creator == "pi" and isinstance(patch, dict):
        derived = {"type": "session", "version": PI_VERSION, "id": body.journal, "timestamp": record.at}
        return dict(json_patch.apply(derived, patch))
    cwd = body.metadata.get("cwd")
    return {
        "type": "session",
        "version": PI_VERSION,
        "id": body.journal,
        "timestamp": record.at,
        "cwd": cwd if isinstance(cwd, str) else "",
    }


def node_entry(record: Record | NewRecord) -> dict[str, Any]:
    body = record.body
    entry: dict[str, Any] = {"type": "", "id": record.id, "parentId": body.parent, "timestamp": record.at}  # type: ignore[union-attr]
    entry.update(node_fields(body))
    entry.update({"id": record.id, "parentId": body.parent})  # type: ignore[union-attr]  # data never overrides these
    patch = patch_of(body)
    if patch:
        # not a patch this codec wrote: export checks the entry and carries the record instead
        with contextlib.suppress(KeyError, TypeError, ValueError, IndexError, AttributeError):
            entry = json_patch.apply(entry, patch)
    return entry


def patch_of(body: AnyBody) -> dict[str, Any] | None:
    """The patch an import kept in a record (None for records that did not come from Pi)."""
    if isinstance(body, UserMessage | AssistantMessage | ToolResult | Compaction):
        details = body.details
        patch = details.get("pi") if isinstance(details, dict) and len(details) == 1 else None
    elif isinstance(body, CustomEntry) and isinstance(body.data, dict):
        patch = body.data.get(PATCH)
    else:
        patch = None
    return patch if isinstance(patch, dict) else None


def node_fields(body: AnyBody) -> dict[str, Any]:
    if isinstance(body, UserMessage):
        return {"type": "message", "message": {"role": "user", "content": blocks(body.content)}}
    if isinstance(body, AssistantMessage):
        message: dict[str, Any] = {"role": "assistant", "content": blocks(body.content)}
        if body.model is not None:
            message["model"] = body.model
        if body.usage:
            message["usage"] = dict(body.usage)
        message["stopReason"] = STOP_TO_PI.get(body.stop_reason or "", "stop")
        return {"type": "message", "message": message}
    if isinstance(body, ToolResult):
        message = {"role": "toolResult", "toolCallId": body.call_id}
        if body.tool_name is not None:
            message["toolName"] = body.tool_name
        message.update({"content": blocks(body.content), "isError": body.is_error})
        return {"type": "message", "message": message}
    if isinstance(body, Compaction):
        entry: dict[str, Any] = {"type": "compaction", "summary": body.summary}
        if body.first_kept is not None:
            entry["firstKeptEntryId"] = body.first_kept
        if body.tokens_before is not None:
            entry["tokensBefore"] = body.tokens_before
        return entry
    if isinstance(body, CustomEntry) and isinstance(body.data, dict):
        data = {k: v for k, v in body.data.items() if k != PATCH}
        body = msgspec.structs.replace(body, data=data)
        if body.type in ("pi.message.bashExecution", "pi.message.custom"):
            message = dict(body.data)
            if body.type == "pi.message.custom":
                message["content"] = blocks(body.content)
            return {"type": "message", "message": message}
        if body.type == "pi.custom_message":
            return {"type": "custom_message", **body.data, "content": blocks(body.content)}
        if body.type.startswith("pi.message."):
            return {"type": "message", "message": dict(body.data)}
        if body.type.startswith("pi.") and body.type != "pi.":
            return {**body.data, "type": body.type.removeprefix("pi.")}
    wire = json.loads(canonical_json(body))
    wire.pop("parent", None)
    return {"type": "custom", "customType": WRAPPED, "data": wire}


def blocks(content: Content) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextBlock):
            out.append({"type": "text", "text": block.text})
        elif isinstance(block, ThinkingBlock):
            thinking: dict[str, Any] = {"type": "thinking", "thinking": block.thinking}
            if block.signature is not None:
                thinking["thinkingSignature"] = block.signature
            if block.redacted:
                thinking["redacted"] = True
            out.append(thinking)
        elif isinstance(block, ToolCallBlock):
            out.append(
                {"type": "toolCall", "id": block.call_id, "name": block.name, "arguments": block.arguments}
            )
        elif isinstance(block, ImageBlock):
            prefix = f"data:{block.media_type};base64,"
            data = block.source.removeprefix(prefix) if block.source.startswith(prefix) else block.source
            out.append({"type": "image", "data": data, "mimeType": block.media_type})
    return out
