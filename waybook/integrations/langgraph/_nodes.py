"""The session nodes a checkpoint adds: its `messages` channel's new LangChain messages, and where they go.

A checkpoint's messages are compared with its parent checkpoint's: the messages after the longest
shared prefix are new. They hang under the node whose path holds the parent's messages, or, where a
message was edited or removed, under the last shared one (a leaf move first); where the path does not
hold the parent's messages at all (a thread saved before the saver wrote nodes), they start a new root
holding all of them. So the checkpoint's node, written right after its messages, always has exactly
its messages on its path, and `show --context`, `stats`, `export` and `view` read the thread as a
session. Each message goes through LangGraph's own serializer and waybook's safe decoder, the path
`waybook import langgraph` reads a database by, so both give the same nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

import attrs
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from waybook._langgraph import LangGraphDecodeError, decode_typed, message_body
from waybook.integrations.langgraph._state import Entry, ThreadState
from waybook.model import AnyBody, CustomEntry

MESSAGES: Final = "messages"
"""The channel whose LangChain messages become session nodes (LangGraph's `MessagesState`)."""

_PLAIN: Final = JsonPlusSerializer(allowed_msgpack_modules=None)
"""Encodes a message as LangGraph stores it (never decodes with it: waybook's decoder does)."""


@attrs.frozen
class MessagePlan:
    """Where a checkpoint's new messages go: under `base` (None: a new root), in order."""

    base: str | None
    new: tuple[BaseMessage, ...]
    why: str
    """Why `base` is not simply the parent's end (for the leaf move's reason), or ""."""


def messages_of(values: dict[str, Any]) -> list[BaseMessage] | None:
    """The `messages` channel's value when it is a list of LangChain messages, else None."""
    value = values.get(MESSAGES)
    if type(value) is list and all(isinstance(m, BaseMessage) for m in value):
        return value
    return None


def plan(
    state: ThreadState, parent: Entry | None, before: Sequence[Any], after: Sequence[BaseMessage]
) -> MessagePlan:
    """Where the messages `after` (the checkpoint's) add to `before` (its parent's) go."""
    end = state.end_of(parent)
    if state.message_count(end) != len(before):
        if not after:
            return MessagePlan(end, (), "")
        return MessagePlan(None, tuple(after), "its parent's path does not hold its messages: a new root")
    shared = 0
    for old, new in zip(before, after, strict=False):
        if not (old is new or old == new):
            break
        shared += 1
    if shared == len(before):
        return MessagePlan(end, tuple(after[shared:]), "")
    why = f"its messages after the first {shared} differ from its parent's"
    return MessagePlan(state.message_node(end, shared), tuple(after[shared:]), why)


def node_body(message: BaseMessage, parent: str | None) -> AnyBody:
    """The node one message becomes; one that does not decode as data is named, never a failed put."""
    try:
        kind, data = _PLAIN.dumps_typed(message)
        as_dict = decode_typed(kind, data)
    except (LangGraphDecodeError, TypeError, ValueError) as exc:
        return _undecodable(message, parent, str(exc)[:200])
    if not isinstance(as_dict, dict):
        return _undecodable(message, parent, "not a message")
    return message_body(as_dict, parent)


def _undecodable(message: BaseMessage, parent: str | None, why: str) -> CustomEntry:
    data = {"type": str(getattr(message, "type", "")), "not shown": why}
    return CustomEntry(parent=parent, type="langgraph.message.undecodable", data=data)
