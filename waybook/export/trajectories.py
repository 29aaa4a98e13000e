"""Training exports of session trajectories: OpenAI chat fine-tuning rows, ShareGPT, and TRL preference pairs.

A trajectory is one root-to-leaf path. What each exported row holds, in order: the messages on the path
(system, user, assistant with its tool calls, tool results, and custom entries written for the
context), minus compaction bookkeeping and minus every entry a context exclusion on the path removed.
Nothing from another branch appears. Every row carries provenance in `metadata` (journal id, leaf id,
head seq and digest), which trainers ignore.

Output is deterministic: the same journal always gives the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, Final, Literal

import attrs

from waybook.export.redact import Redactor
from waybook.journal.head import Head
from waybook.journal.protocol import SessionJournal
from waybook.journal.reading import read_seqs
from waybook.journal.records import (
    AssistantMessage,
    Content,
    CustomEntry,
    Header,
    ImageBlock,
    Record,
    SystemMessage,
    TextBlock,
    ToolCallBlock,
    ToolResult,
    UserMessage,
)
from waybook.projections.base import replay
from waybook.projections.tree import TreeProjection, TreeState

Format = Literal["openai", "sharegpt"]
LABEL_TYPES: Final = frozenset({"waybook.label", "pi.label"})


@attrs.frozen
class Selection:
    """Which branches to export: "active", "all", or one leaf id."""

    branches: str = "active"

    def leaves(self, tree: TreeState) -> list[str]:
        if self.branches == "active":
            return [tree.leaf_id] if tree.leaf_id is not None else []
        if self.branches == "all":
            return list(tree.leaves())
        tree.position(self.branches)  # KeyError names an unknown leaf
        return [self.branches]


@attrs.frozen
class Message:
    """A neutral chat message, before it is written in a training format."""

    role: Literal["system", "user", "assistant", "tool"]
    text: str
    tool_calls: tuple[ToolCallBlock, ...] = ()
    tool_call_id: str | None = None


def path_messages(tree: TreeState, records: list[Record]) -> list[Message]:
    """The messages of a root-to-leaf path's records, honouring the exclusions on the path."""
    excluded = {
        tree.ids[tree.exclusions[tree.position(r.id)]]
        for r in records
        if tree.position(r.id) in tree.exclusions
    }
    messages: list[Message] = []
    for record in records:
        if record.id in excluded:
            continue
        message = to_message(record)
        if message is not None:
            messages.append(message)
    return messages


def to_message(record: Record) -> Message | None:
    body = record.body
    if isinstance(body, UserMessage):
        return Message("user", _text(body.content))
    if isinstance(body, SystemMessage):
        return Message("system", _text(body.content))
    if isinstance(body, AssistantMessage):
        return Message("assistant", _text(body.content), tool_calls=body.tool_calls)
    if isinstance(body, ToolResult):
        return Message("tool", _text(body.content), tool_call_id=body.call_id)
    if isinstance(body, CustomEntry) and body.in_context:
        return Message("user", _text(body.content))
    return None


def _text(content: Content) -> str:
    parts = []
    for block in content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ImageBlock):
            parts.append(f"[image: {block.media_type}]")
    return "\n\n".join(parts)


@attrs.frozen
class ExportResult:
    rows: int
    redacted: int


class TrajectoryExporter:
    """Exports one journal's chosen branches as JSONL rows."""

    def __init__(
        self,
        journal: SessionJournal,
        *,
        at: int | None = None,
        redact: bool = False,
        tree: TreeState | None = None,
    ) -> None:
        self.journal = journal
        self.tree = tree if tree is not None else replay(TreeProjection(), journal, at=at)
        self.head = Head(self.tree.seq, self.tree.digest)
        first = next(journal.read(limit=1), None)
        self.header = first.body if first is not None and isinstance(first.body, Header) else None
        self.redactor = Redactor() if redact else None

    @property
    def journal_id(self) -> str:
        return self.header.journal if self.header is not None else self.journal.name

    def provenance(self, leaf: str) -> dict[str, Any]:
        return {
            "journal": self.journal_id,
            "leaf": leaf,
            "head": {"seq": self.head.seq, "digest": self.head.digest},
        }

    def messages(self, leaf: str) -> list[Message]:
        seqs = [self.tree.seqs[p] for p in self.tree.path_positions(self.tree.position(leaf))]
        return path_messages(self.tree, read_seqs(self.journal, seqs))

    def rows(self, fmt: Format, selection: Selection) -> Iterator[dict[str, Any]]:
        for leaf in selection.leaves(self.tree):
            messages = self.messages(leaf)
            row = openai_row(messages, self.tools()) if fmt == "openai" else sharegpt_row(messages)
            row["metadata"] = self.provenance(leaf)
            yield self._redacted(row)

    def pairs(self) -> Iterator[dict[str, Any]]:
        """TRL preference rows for every fork whose branches have a chosen one (active or labelled).

        The prompt is the path up to the fork; chosen and rejected are what each branch holds after it.
        Each path is split at the fork by record, with the exclusions of that whole path applied, so an
        exclusion further down a branch cannot shift the split.
        """
        chosen_ends = self._chosen_ends()
        tree = self.tree
        branch_ends = {tree.position(end) for end in tree.leaves()}
        for fork in range(tree.node_count):
            children = list(tree.children_positions(fork))
            if len(children) < 2:
                continue
            ends = {child: self._ends_below(child, branch_ends) for child in children}
            chosen = [(c, e) for c, es in ends.items() for e in es if tree.ids[e] in chosen_ends]
            if not chosen:
                continue
            chosen_child, chosen_end = chosen[0]
            prompt, chosen_tail = self._split_at(chosen_end, fork)
            for child, child_ends in ends.items():
                if child == chosen_child:
                    continue
                for end in child_ends:
                    _, rejected_tail = self._split_at(end, fork)
                    row = {
                        "prompt": [_openai_message(m) for m in prompt],
                        "chosen": [_openai_message(m) for m in chosen_tail],
                        "rejected": [_openai_message(m) for m in rejected_tail],
                        "metadata": {
                            **self.provenance(tree.ids[chosen_end]),
                            "rejected_leaf": tree.ids[end],
                            "fork": tree.ids[fork],
                        },
                    }
                    yield self._redacted(row)

    def _ends_below(self, start: int, branch_ends: set[int]) -> list[int]:
        """Branch ends in the subtree of `start`, in append order."""
        found, stack = [], [start]
        while stack:
            node = stack.pop()
            if node in branch_ends:
                found.append(node)
            stack.extend(self.tree.children_positions(node))
        return sorted(found)

    def _split_at(self, end: int, fork: int) -> tuple[list[Message], list[Message]]:
        """The messages of the path to `end`, split into those up to `fork` and those after it."""
        positions = self.tree.path_positions(end)
        records = read_seqs(self.journal, [self.tree.seqs[p] for p in positions])
        cut = positions.index(fork) + 1
        excluded = {self.tree.exclusions[p] for p in positions if p in self.tree.exclusions}
        kept = [r for p, r in zip(positions, records, strict=True) if p not in excluded]
        before = {self.tree.seqs[p] for p in positions[:cut]}
        messages = [(r.seq in before, to_message(r)) for r in kept]
        return (
            [m for first, m in messages if first and m is not None],
            [m for first, m in messages if not first and m is not None],
        )

    def _chosen_ends(self) -> set[str]:
        """Branch ends that are preferred: the active leaf, and ends below a node labelled chosen."""
        labelled: set[str] = set()
        rejected: set[str] = set()
        for record in self.journal.read(limit=self.head.seq):
            body = record.body
            if isinstance(body, CustomEntry) and body.type in LABEL_TYPES and isinstance(body.data, dict):
                target, label = body.data.get("targetId") or body.data.get("target"), body.data.get("label")
                if isinstance(target, str) and label == "chosen":
                    labelled.add(target)
                elif isinstance(target, str) and label == "rejected":
                    rejected.add(target)
        ends = set()
        for end in self.tree.leaves():
            path = set(self.tree.path_to(end))
            if path & rejected:
                continue
            if end == self.tree.leaf_id or path & labelled:
                ends.add(end)
        return ends

    def tools(self) -> list[dict[str, Any]] | None:
        """Tool schemas the session recorded in its header metadata (`tools`), as OpenAI function tools."""
        if self.header is None or not isinstance(self.header.metadata.get("tools"), list):
            return None
        tools = []
        for tool in self.header.metadata["tools"]:
            if isinstance(tool, dict) and "function" in tool:
                tools.append(tool)
            elif isinstance(tool, dict):
                function = {k: tool[k] for k in ("name", "description", "parameters") if k in tool}
                tools.append({"type": "function", "function": function})
        return tools

    def _redacted(self, row: dict[str, Any]) -> dict[str, Any]:
        if self.redactor is None:
            return row
        metadata = row.pop("metadata")
        row = self.redactor.value(row)
        row["metadata"] = metadata
        return row


def openai_row(messages: list[Message], tools: list[dict[str, Any]] | None) -> dict[str, Any]:
    row: dict[str, Any] = {"messages": [_openai_message(m) for m in messages]}
    if tools:
        row["tools"] = tools
    return row


def _openai_message(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.text}
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
