"""What Claude Code sends to the model for a transcript, and what it would be sent for a waybook context.

`replay_context` is the reference that every Claude Code import is held to: it rebuilds, from the
transcript file alone, the messages (Anthropic API form) of the resumed session. `api_messages` renders a
waybook context (what `waybook.projections.context_at` returns) in the same form, so the two compare
message for message.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from waybook.formats._foreign import read_json_lines
from waybook.model import (
    AssistantMessage,
    Block,
    ImageBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
)

SOURCE: Final = "claude-code"
TREE_TYPES: Final = frozenset({"user", "assistant", "system", "progress", "attachment"})
"""Line types Claude Code keeps in its uuid tree (what it loads into its message map)."""


def replay_context(data: bytes | str) -> list[dict[str, Any]]:
    """The messages (Anthropic API form) Claude Code sends when it resumes this transcript.

    One difference from Claude Code 2.1's own resume is deliberate: its single parent walk loses all but
    the last of a set of parallel tool results (it then answers the others with a synthetic error). The
    live session sent every real result, and so does this reference: results answering a tool call on the
    chain are taken from wherever they are in the file, in file order.
    """
    lines, _, _ = read_json_lines(data, source=SOURCE, lenient=True)
    tree = {line["uuid"]: (n, line) for n, line in lines if line.get("type") in TREE_TYPES and "uuid" in line}
    chain = resume_chain(tree)
    results = [
        (n, line)
        for n, line in lines
        if line.get("type") == "user" and any(is_result(b) for b in blocks_of(line))
    ]
    messages: list[dict[str, Any]] = []
    placed: set[Any] = set()  # message ids already placed whole
    calls: set[str] = set()
    for line in chain:
        kind = line.get("type")
        if kind == "assistant":
            message = message_id(line)
            if message in placed:
                continue  # a later line of a message already placed whole
            placed.add(message)
            group = _streamed_message(line, tree)
            messages.append(
                {"role": "assistant", "content": _api_blocks(b for g in group for b in blocks_of(g))}
            )
            answering = {b["id"] for g in group for b in blocks_of(g) if b.get("type") == "tool_use"}
            calls |= answering
            for _, result in results:
                if _answers(result, answering) and _only_results(result):
                    messages.append({"role": "user", "content": _api_blocks(blocks_of(result))})
        elif kind == "user" and not (_only_results(line) and _answers(line, calls)):
            messages.append({"role": "user", "content": _api_blocks(blocks_of(line))})
    return _merged(messages)


def _streamed_message(
    line: dict[str, Any], tree: Mapping[str, tuple[int, dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Every line of the streamed assistant message `line` belongs to, in file order.

    Claude Code writes each block of a message as its own line and runs tools while the message still
    streams, so a tool result, or side lines, can sit between two blocks of one message and the parent
    chain can skip blocks. The live session sent the message whole, so the reference does too.
    """
    message = message_id(line)
    return [
        other
        for _, other in sorted(tree.values(), key=lambda t: t[0])
        if other.get("type") == "assistant" and message_id(other) == message
    ]


def _only_results(line: dict[str, Any]) -> bool:
    blocks = blocks_of(line)
    return bool(blocks) and all(is_result(b) for b in blocks)


def resume_chain(tree: Mapping[str, tuple[int, dict[str, Any]]]) -> list[dict[str, Any]]:
    parents = {line.get("parentUuid") for _, line in tree.values()}
    candidates: list[dict[str, Any]] = []
    for _, leaf in sorted(tree.values(), key=lambda t: t[0]):
        if leaf["uuid"] in parents:
            continue
        seen: set[str] = set()
        node: dict[str, Any] | None = leaf
        while node is not None and node["uuid"] not in seen:
            seen.add(node["uuid"])
            if node.get("type") in ("user", "assistant"):
                if node not in candidates:
                    candidates.append(node)
                break
            parent = node.get("parentUuid")
            node = tree[parent][1] if isinstance(parent, str) and parent in tree else None
    if not candidates:
        return []
    # The newest by timestamp; of equal timestamps, the one written last (Claude Code 2.1 takes the first,
    # which can resume from the middle of a set of parallel tool results written in the same millisecond).
    newest = max(range(len(candidates)), key=lambda i: (str(candidates[i].get("timestamp", "")), i))
    chain: list[dict[str, Any]] = []
    seen = set()
    node = candidates[newest]
    while node is not None and node["uuid"] not in seen:
        seen.add(node["uuid"])
        chain.append(node)
        parent = node.get("parentUuid")
        node = tree[parent][1] if isinstance(parent, str) and parent in tree else None
    return chain[::-1]


def blocks_of(line: dict[str, Any]) -> list[dict[str, Any]]:
    content = (line.get("message") or {}).get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def is_result(block: dict[str, Any]) -> bool:
    return block.get("type") == "tool_result"


def _answers(line: dict[str, Any], calls: set[str]) -> bool:
    return any(is_result(b) and b.get("tool_use_id") in calls for b in blocks_of(line))


_API_KEYS: Final = {
    "text": ("type", "text"),
    "thinking": ("type", "thinking", "signature"),
    "redacted_thinking": ("type", "data"),
    "tool_use": ("type", "id", "name", "input"),
    "tool_result": ("type", "tool_use_id", "content", "is_error"),
    "image": ("type", "source"),
}


def _api_blocks(blocks: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for block in blocks:
        keys = _API_KEYS.get(block.get("type", ""), tuple(block))
        api = {k: block[k] for k in keys if k in block}
        if api.get("type") == "tool_result":
            api.setdefault("is_error", False)
        out.append(api)
    return out


def _merged(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Assistant lines of one message id joined, then consecutive messages of one role joined."""
    out: list[dict[str, Any]] = []
    for message in messages:
        last = out[-1] if out else None
        if last is not None and last["role"] == message["role"]:
            last["content"] = [*last["content"], *message["content"]]
        else:
            out.append({"role": message["role"], "content": list(message["content"])})
    return out


# --- back: the messages Claude Code would be sent for a waybook context -----------------------------


def api_messages(messages: Iterable[Any]) -> list[dict[str, Any]]:
    """Anthropic API messages for waybook context messages (what `context_at` returns), roles merged."""
    out: list[dict[str, Any]] = []
    for message in messages:
        body = message.record.body
        details = (getattr(body, "details", None) or {}).get("claude_code", {})
        if isinstance(body, ToolResult):
            form = details.get("content_form")
            content: Any = (
                "".join(b.text for b in body.content if isinstance(b, TextBlock))
                if form == "text"
                else _api_blocks(_blocks_back(body.content, []))
            )
            block = {
                "type": "tool_result",
                "tool_use_id": body.call_id,
                "content": content,
                "is_error": body.is_error,
            }
            out.append({"role": "user", "content": [block]})
        elif isinstance(body, AssistantMessage):
            out.append(
                {
                    "role": "assistant",
                    "content": _api_blocks(_blocks_back(body.content, details.get("blocks", []))),
                }
            )
        else:
            out.append({"role": "user", "content": _api_blocks(_blocks_back(message.content, []))})
    return _merged(out)


def _blocks_back(content: Iterable[Block], extras: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for index, block in enumerate(content):
        extra = dict(extras[index]) if index < len(extras) else {}
        if isinstance(block, TextBlock):
            out.append({"type": "text", "text": block.text, **extra})
        elif isinstance(block, ThinkingBlock) and block.redacted:
            out.append({"type": "redacted_thinking", "data": block.signature, **extra})
        elif isinstance(block, ThinkingBlock):
            out.append(
                {"type": "thinking", "thinking": block.thinking, "signature": block.signature, **extra}
            )
        elif isinstance(block, ToolCallBlock):
            out.append(
                {
                    "type": "tool_use",
                    "id": block.call_id,
                    "name": block.name,
                    "input": block.arguments,
                    **extra,
                }
            )
        elif isinstance(block, ImageBlock):
            out.append({"type": "image", "source": _image_source(block), **extra})
    return out


def _image_source(block: ImageBlock) -> dict[str, Any]:
    if block.source.startswith("data:") and ";base64," in block.source:
        return {
            "type": "base64",
            "media_type": block.media_type,
            "data": block.source.split(";base64,", 1)[1],
        }
    return {"type": "url", "url": block.source}


def message_id(line: dict[str, Any]) -> Any:
    message = line.get("message") or {}
    return message.get("id") or line.get("uuid")
