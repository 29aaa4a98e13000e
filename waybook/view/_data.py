"""What a session page shows, as plain data: a pure function of the journal's records and its proof.

The page's script only lays this out; every decision (the tree, the active leaf, which result answers
which call, what a turn cost) is made here, in Python, from the same projections the CLI uses.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any, Protocol

from waybook._langgraph import shown_checkpoint
from waybook.journal import VerifyReport
from waybook.model import (
    AssistantMessage,
    BlobBlock,
    Block,
    Compaction,
    ContextExclusion,
    CustomEntry,
    Header,
    ImageBlock,
    LeafMoved,
    MemoryPinMoved,
    MemoryUsed,
    Node,
    Record,
    Reset,
    SubagentLink,
    SystemMessage,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
    erasure_reasons,
    placeholder_records,
)
from waybook.projections import PriceTable, TreeProjection, fold, harness_kind
from waybook.view._conversation import mark_conversation
from waybook.view._graph import branch_graph
from waybook.view._usage import usage_data

TITLE_CHARS = 120
"""How much of the first user message a page or a journal list shows as the session's title."""
INLINE_IMAGE_BYTES = 2 << 20
"""Images kept as blobs up to this size are shown in the page (as `data:` URLs); larger ones are named."""
INLINE_TEXT_BYTES = 256 << 10
"""Text kept as a blob (a large tool output) up to this size is shown in the page; larger is named."""
SHOWN_MEMORY_FILES = 200
LANGGRAPH_CHECKPOINT = "langgraph.checkpoint"
"""A `WaybookSaver` checkpoint: its stored values are shown decoded (waybook._langgraph), never as base64."""


class Sources(Protocol):
    """What a page may show beyond the journal's own records: blob bytes and memory files, read from
    the store the journal lives in (`view._sources.StoreSources`). A file journal has none."""

    def blob(self, digest: str) -> bytes | None: ...

    def memory_files(self, journal_id: str, seq: int) -> list[dict[str, Any]] | None: ...


def block_data(block: Block) -> dict[str, Any]:
    """One content block as the page draws it. Text stays text: the page never parses it as HTML."""
    if isinstance(block, TextBlock):
        return {"type": "text", "text": block.text}
    if isinstance(block, ThinkingBlock):
        return {
            "type": "thinking",
            "text": "" if block.redacted else block.thinking,
            "redacted": block.redacted,
        }
    if isinstance(block, ToolCallBlock):
        return {
            "type": "tool_call",
            "call_id": block.call_id,
            "name": block.name,
            "arguments": block.arguments,
        }
    if isinstance(block, ImageBlock):
        shown = block.source if is_inline_image(block.source) else ""
        return {"type": "image", "media_type": block.media_type, "source": shown}
    if isinstance(block, BlobBlock):
        return {
            "type": "blob",
            "digest": block.digest,
            "size": block.size,
            "media_type": block.media_type,
            "name": block.name,
        }
    return {"type": "other", "text": repr(block)}


_INLINE_IMAGE_HEAD = re.compile(r"data:image/[a-z0-9.+-]+(;[a-z0-9.+-]+=[a-z0-9.+-]*)*;base64", re.IGNORECASE)


def is_inline_image(source: str) -> bool:
    """Whether a page shows `source` as an image: a `data:image/...;base64,` URL whose payload is
    base64 (anything else would make the browser log a failed load); the page shows a placeholder
    otherwise. Bytes that are base64 but no image are left to the browser, where the page's script
    swaps the image it cannot decode for the same placeholder."""
    head, comma, payload = source.partition(",")
    if not comma or not _INLINE_IMAGE_HEAD.fullmatch(head):
        return False
    try:
        base64.b64decode(payload, validate=True)
    except binascii.Error:
        return False
    return True


def first_text(blocks: Iterable[Block]) -> str:
    for block in blocks:
        if isinstance(block, TextBlock) and block.text.strip():
            return " ".join(block.text.split())
    return ""


def node_data(record: Record) -> dict[str, Any] | None:
    """A tree node's page entry, or None for a record that is not a node. `harness` names the kind of a
    harness entry (`projections.harness_kind`), which the page hides until asked, and None otherwise."""
    body = record.body
    if not isinstance(body, Node):
        return None
    base: dict[str, Any] = {
        "id": record.id,
        "seq": record.seq,
        "at": record.at,
        "parent": body.parent,
        "harness": harness_kind(body),
    }
    if record.erased is not None:  # its blocks are the placeholder naming the erasure
        base["erased"] = record.erased.by
    if isinstance(body, UserMessage):
        return {**base, "role": "user", "blocks": [block_data(b) for b in body.content]}
    if isinstance(body, AssistantMessage):
        return {
            **base,
            "role": "assistant",
            "blocks": [block_data(b) for b in body.content],
            "model": body.model,
            "usage": dict(body.usage or {}),
            "stop_reason": body.stop_reason,
        }
    if isinstance(body, SystemMessage):
        return {**base, "role": "system", "blocks": [block_data(b) for b in body.content]}
    if isinstance(body, ToolResult):
        return {
            **base,
            "role": "tool",
            "call_id": body.call_id,
            "tool_name": body.tool_name,
            "is_error": body.is_error,
            "blocks": [block_data(b) for b in body.content],
        }
    if isinstance(body, Compaction):
        return {**base, "role": "compaction", "blocks": [{"type": "text", "text": body.summary}]}
    if isinstance(body, ContextExclusion):
        return {
            **base,
            "role": "exclusion",
            "blocks": [{"type": "text", "text": f"{body.target}: {body.reason}"}],
        }
    if isinstance(body, CustomEntry):
        blocks = [block_data(b) for b in body.content]
        data = shown_checkpoint(body.data) if body.type == LANGGRAPH_CHECKPOINT else body.data
        return {**base, "role": "custom", "type": body.type, "data": data, "blocks": blocks}
    return None


def summary_of(node: dict[str, Any]) -> str:
    for block in node["blocks"]:
        if block["type"] == "text" and block["text"].strip():
            return " ".join(block["text"].split())[:TITLE_CHARS]
        if block["type"] == "tool_call":
            return f"{block['name']}(...)"
    return str(node.get("type") or node["role"])


def page_data(
    records: Sequence[Record],
    report: VerifyReport,
    *,
    journal_id: str,
    sources: Sources | None = None,
    prices: PriceTable | None = None,
) -> dict[str, Any]:
    """Everything a session page shows, from `records` (the proven prefix) and the chain's `report`;
    with `sources`, also the blobs' contents and the memory files each turn used; with `prices`, what
    each turn cost (`view._usage.installed_prices()` is genai-prices' table)."""
    tree = fold(TreeProjection(), records)
    if any(record.erased is not None for record in records):  # each hole shows its erasure
        records = placeholder_records(records, erasure_reasons(records))
    nodes: list[dict[str, Any]] = []
    moves: list[dict[str, Any]] = []
    links: dict[str, list[dict[str, Any]]] = {}
    memory: dict[str, list[dict[str, Any]]] = {}
    header: dict[str, Any] = {}
    last_node: str | None = None
    for record in records:
        body = record.body
        if isinstance(body, Header):
            header = {
                "journal": body.journal,
                "creator": body.creator,
                "role": body.role,
                "metadata": body.metadata,
            }
            continue
        node = node_data(record)
        if node is not None:
            nodes.append(node)
            last_node = record.id
        elif isinstance(body, LeafMoved):
            last = moves[-1] if moves else None
            if (  # a run of moves of one action (a rewind popping item by item) is shown as one
                last is not None
                and last["last_seq"] == record.seq - 1
                and last["to"] == body.from_leaf
                and last["reason"] == body.reason
            ):
                last.update(to=body.to_leaf, last_seq=record.seq, count=last["count"] + 1)
            else:
                move = {"seq": record.seq, "from": body.from_leaf, "to": body.to_leaf, "reason": body.reason}
                moves.append({**move, "last_seq": record.seq, "count": 1})
        elif isinstance(body, Reset):
            moves.append(
                {
                    "seq": record.seq,
                    "from": None,
                    "to": None,
                    "reason": f"reset: {body.reason}",
                    "last_seq": record.seq,
                    "count": 1,
                }
            )
        elif isinstance(body, SubagentLink):
            links.setdefault(body.node, []).append(
                {"journal": body.journal, "call_id": body.call_id, "agent": body.agent, "reason": body.reason}
            )
        elif isinstance(body, MemoryUsed) and last_node is not None:
            used: dict[str, Any] = {
                "memory": body.memory,
                "seq": body.seq,
                "digest": body.digest,
                "unavailable": body.unavailable,
            }
            if sources is not None and body.memory is not None and body.seq is not None:
                used["files"] = sources.memory_files(body.memory, body.seq)
            memory.setdefault(last_node, []).append(used)
        elif isinstance(body, MemoryPinMoved) and last_node is not None:
            memory.setdefault(last_node, []).append(
                {
                    "pin": body.canonical,
                    "seq": body.new_seq,
                    "digest": body.new_digest,
                    "receipt": body.receipt,
                }
            )
    for run in moves:
        if run["count"] > 1:
            run["reason"] = f"{run['reason']} ({run['count']} moves, seq {run['seq']}-{run['last_seq']})"
    mark_conversation(nodes)
    by_id = {n["id"]: n for n in nodes}
    active = tree.leaf_id
    results = answered_calls(nodes, by_id)
    for node in nodes:
        if node["role"] == "assistant" and node["parent"] in by_id:
            node["latency"] = seconds_between(by_id[node["parent"]]["at"], node["at"])
        if sources is not None:
            node["blocks"] = [with_blob_contents(block, sources) for block in node["blocks"]]
    leaves = [
        {"id": leaf, "summary": summary_of(labelled(by_id[leaf], by_id)), "active": leaf == active}
        for leaf in tree.leaves()
        if leaf in by_id
    ]
    first_user = next((n for n in nodes if n["role"] == "user" and not n["harness"]), None)
    return {
        "journal": journal_id,
        "title": summary_of(first_user) if first_user else journal_id,
        "header": header,
        "records": len(records),
        "last_activity": records[-1].at if records else None,
        "status": {
            "ok": report.ok,
            "text": str(report),
            "bad_seq": report.bad_seq,
            "proven": report.head.seq,
        },
        "nodes": nodes,
        "active_leaf": active,
        "leaves": leaves,
        "moves": moves,
        "links": links,
        "results": results,
        "memory": memory,
        "usage": usage_totals(nodes),
        "harness": sum(1 for n in nodes if n["harness"]),
        **usage_data(records, nodes, prices=prices),
        "graph": branch_graph(nodes, leaves, active_leaf=active, moves=moves),
    }


def labelled(node: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The node a branch is labelled by: its leaf, or the nearest entry above it that is not harness."""
    current: dict[str, Any] | None = node
    while current is not None and current["harness"]:
        current = by_id.get(current["parent"]) if current["parent"] else None
    return current if current is not None else node


def seconds_between(start: str, end: str) -> float | None:
    """Seconds from one record's timestamp to another's (the writers' clocks), or None if unreadable."""
    try:
        elapsed = datetime.fromisoformat(end.replace("Z", "+00:00")) - datetime.fromisoformat(
            start.replace("Z", "+00:00")
        )
    except ValueError:
        return None
    return round(max(0.0, elapsed.total_seconds()), 3)


def with_blob_contents(block: dict[str, Any], sources: Sources) -> dict[str, Any]:
    """A blob block with its bytes shown where they are an image or text of a size a page can hold."""
    if block["type"] != "blob":
        return block
    media, size = block["media_type"], block["size"]
    image = media.startswith("image/") and size <= INLINE_IMAGE_BYTES
    text = (media.startswith("text/") or media == "application/json") and size <= INLINE_TEXT_BYTES
    if not (image or text):
        return block
    data = sources.blob(block["digest"])
    if data is None:
        return {**block, "missing": True}
    if image:
        return {
            "type": "image",
            "media_type": media,
            "source": f"data:{media};base64,{base64.b64encode(data).decode()}",
        }
    return {"type": "text", "text": data.decode("utf-8", errors="replace"), "blob": block["digest"]}


CALL_SEARCH = 64
"""How far up its branch a tool result looks for the assistant turn whose call it answers."""


def answered_calls(
    nodes: Iterable[dict[str, Any]], by_id: dict[str, dict[str, Any]]
) -> dict[str, dict[str, str]]:
    """assistant node id -> call id -> the id of the tool result that answers it.

    A result answers the nearest assistant turn above it on its branch that made a call with its id,
    which is how the session rules pair them (a call's results follow it on the same branch).
    """
    paired: dict[str, dict[str, str]] = {}
    for node in nodes:
        if node["role"] != "tool":
            continue
        above = by_id.get(node["parent"]) if node["parent"] else None
        for _ in range(CALL_SEARCH):
            if above is None:
                break
            calls = {b["call_id"] for b in above["blocks"] if b["type"] == "tool_call"}
            if above["role"] == "assistant" and node["call_id"] in calls:
                paired.setdefault(above["id"], {}).setdefault(node["call_id"], node["id"])
                break
            above = by_id.get(above["parent"]) if above["parent"] else None
    return paired


def usage_totals(nodes: Iterable[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Token counts summed per model over every assistant turn that recorded them."""
    totals: dict[str, dict[str, int]] = {}
    for node in nodes:
        if node["role"] != "assistant" or not node.get("usage"):
            continue
        into = totals.setdefault(node.get("model") or "(unknown model)", {})
        for key, value in node["usage"].items():
            if isinstance(value, int) and not isinstance(value, bool):
                into[key] = into.get(key, 0) + value
    return totals
