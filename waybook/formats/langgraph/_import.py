"""LangGraph checkpoint threads (a `SqliteSaver` database), imported as waybook records.

A LangGraph thread is a tree of checkpoints: each names its parent and holds the whole state, whose
`messages` channel is the conversation so far. Import diffs each checkpoint's messages against its
parent's by message id and content: the messages after the common prefix are new nodes. A checkpoint
whose messages do not extend the path the journal is on (a time-travel fork: new input sent from an
earlier checkpoint) becomes an explicit leaf move back to the last message it shares, then its own
messages. Every checkpoint is kept as a `langgraph.checkpoint` custom entry (its id, parent, metadata and
other channels, out of the model context) after the messages it added, so each checkpoint has a node
whose context is exactly that checkpoint's messages. The journal ends at the newest checkpoint, the one
LangGraph resumes from.

This module maps plain data (`Checkpoint` values whose messages are LangChain's `message_to_dict`
form); `waybook.formats.langgraph._database` reads them from a database as data (never with
LangGraph's serializer, which imports and calls what a checkpoint names).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from waybook._langgraph import SOURCE, message_body
from waybook.formats._foreign import FALLBACK_TIMESTAMP, ImportReport, LineTally, stable_id
from waybook.model import CustomEntry, Header, LeafMoved, NewRecord


@attrs.frozen
class Checkpoint:
    """One checkpoint of a thread, as plain data."""

    id: str
    parent: str | None
    at: str
    metadata: dict[str, Any]
    messages: tuple[dict[str, Any], ...]
    """The `messages` channel, each message in `message_to_dict` form: {"type": ..., "data": {...}}."""
    channels: dict[str, Any]
    """The other channels, JSON-safe."""


@attrs.frozen
class LangGraphImport:
    records: tuple[NewRecord, ...]
    report: ImportReport
    ends: dict[str, str]
    """checkpoint id -> the node whose context is that checkpoint's messages."""


def import_langgraph(
    thread_id: str, checkpoints: Sequence[Checkpoint], *, name: str | None = None
) -> LangGraphImport:
    """Map one thread's checkpoints (any order) to the records of a new journal. `name` names the
    journal in its header instead of the thread's (which its metadata keeps)."""
    ordered = sorted(checkpoints, key=lambda c: c.id)  # LangGraph's ids sort in creation order
    journal = stable_id(f"langgraph-{thread_id}")
    first_at = ordered[0].at if ordered else FALLBACK_TIMESTAMP
    header = NewRecord(
        id=journal,
        at=first_at,
        body=Header(
            journal=name or journal, creator="langgraph", metadata={SOURCE: {"thread_id": thread_id}}
        ),
    )
    builder = _Builder()
    for number, checkpoint in enumerate(ordered, start=1):
        builder.take(number, checkpoint)
    builder.resume_at_newest(ordered)
    report = builder.tally.report("langgraph", len(ordered), [], builder.inferred)
    return LangGraphImport(records=(header, *builder.records), report=report, ends=dict(builder.end))


def message_key(message: dict[str, Any]) -> str:
    """What makes two messages the same message: LangChain's type and every field of its data."""
    return json.dumps(message, sort_keys=True, default=str)


class _Builder:
    def __init__(self) -> None:
        self.records: list[NewRecord] = []
        self.tally = LineTally()
        self.inferred: list[str] = []
        self.leaf: str | None = None
        self.end: dict[str, str] = {}  # checkpoint -> its kept entry (the node its context ends at)
        self.path: dict[str, list[tuple[str, str]]] = {}  # checkpoint -> [(message key, node id)]

    def take(self, number: int, checkpoint: Checkpoint) -> None:
        parent = self.path.get(checkpoint.parent or "", [])
        keys = [message_key(m) for m in checkpoint.messages]
        shared = 0
        while shared < min(len(parent), len(keys)) and parent[shared][0] == keys[shared]:
            shared += 1
        extends = checkpoint.parent in self.end and shared == len(parent)
        base = self.end[checkpoint.parent] if extends and checkpoint.parent else None
        if not extends:
            base = parent[shared - 1][1] if shared else None
        if base != self.leaf:
            why = "a time-travel fork" if checkpoint.parent in self.end else "a new start"
            reason = (
                f"langgraph: checkpoint {checkpoint.id} continues from checkpoint {checkpoint.parent} ({why})"
            )
            move = LeafMoved(from_leaf=self.leaf, to_leaf=base, reason=reason, actor="langgraph")
            self.records.append(NewRecord(id=f"move:{checkpoint.id}", at=checkpoint.at, body=move))
            self.leaf = base
        path = list(parent[:shared])
        for index, message in enumerate(checkpoint.messages[shared:], start=shared):
            node = stable_id("lg", checkpoint.id, str(index))
            self.records.append(NewRecord(id=node, at=checkpoint.at, body=message_body(message, self.leaf)))
            self.leaf = node
            path.append((keys[index], node))
        kept = stable_id("lg", checkpoint.id)
        data = {
            "checkpoint_id": checkpoint.id,
            "parent_checkpoint_id": checkpoint.parent,
            "metadata": checkpoint.metadata,
            "channels": checkpoint.channels,
            "messages": [m.get("data", {}).get("id") for m in checkpoint.messages],
        }
        body = CustomEntry(parent=self.leaf, type="langgraph.checkpoint", data=data)
        self.records.append(NewRecord(id=kept, at=checkpoint.at, body=body))
        self.leaf = kept
        self.end[checkpoint.id] = kept
        self.path[checkpoint.id] = path
        self.tally.mapped(number)

    def resume_at_newest(self, ordered: Sequence[Checkpoint]) -> None:
        if not ordered:
            return
        newest = self.end[ordered[-1].id]
        if newest != self.leaf:
            reason = "langgraph: the newest checkpoint, which LangGraph resumes from"
            move = LeafMoved(from_leaf=self.leaf, to_leaf=newest, reason=reason, actor="langgraph")
            self.records.append(NewRecord(id="move:newest", at=ordered[-1].at, body=move))
            self.leaf = newest
